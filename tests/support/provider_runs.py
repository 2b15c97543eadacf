"""Driving a real provider adapter end to end in a test: the adapters built exactly as the orchestrator builds
them (``providers.registry`` from settings naming a fake provider's base URL and key), the real actor and
runner, the real store and media folder; a hand-moved clock for leases and the deadline, and a sink that
records status events. Retries back off in milliseconds so throttling and 5xx bursts are quick."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

from tests.support.env import settings_for
from tests.support.fake_providers.common import FakeProviderAPI
from tests.support.fake_providers.fal import FakeFal
from tests.support.fake_providers.luma import FakeLuma
from tests.support.fake_providers.runway import FakeRunway
from tests.support.fakes import ManualClock, RecordingSink
from tests.support.generations import PROMPT, insert_generation, stored_generation
from tests.support.waiting import eventually
from videogen_common.domain import Provider, Status
from videogen_common.media import LocalMediaStore
from videogen_common.store import Store
from videogen_orchestrator.actor import GenerationActor
from videogen_orchestrator.providers.base import ProviderAdapter
from videogen_orchestrator.providers.registry import build_providers, close_providers
from videogen_orchestrator.runner import Runner
from videogen_orchestrator.settings import OrchestratorSettings

Doc = dict[str, Any]

ACCOUNT = "acme"

LEASE = timedelta(seconds=30)
OWNER = "orch-providers"


def provider_env(fake: FakeProviderAPI) -> dict[str, Any]:
    """The settings that point the orchestrator's adapter for ``fake`` at it."""
    if isinstance(fake, FakeRunway):
        return {"providers": "runway", "runway_api_key": fake.api_key, "runway_base_url": fake.base_url}
    if isinstance(fake, FakeLuma):
        return {"providers": "luma", "luma_api_key": fake.api_key, "luma_base_url": fake.base_url}
    if isinstance(fake, FakeFal):
        return {"providers": "pika", "fal_api_key": fake.api_key, "fal_base_url": fake.base_url}
    raise TypeError(f"no settings for {fake!r}")


class ProviderRun:
    def __init__(
        self,
        store: Store,
        base_env: dict[str, str],
        media_root: Path,
        fake: FakeProviderAPI,
        **overrides: Any,
    ) -> None:
        self.store = store
        self.fake = fake
        self.clock = ManualClock()
        self.sink = RecordingSink()
        self.media = LocalMediaStore(media_root)
        defaults: dict[str, Any] = {
            "orchestrator_instance": OWNER,
            "poll_interval_seconds": 0.01,
            "provider_retry_base_seconds": 0.005,
            "provider_retry_max_seconds": 0.02,
            "provider_retry_after_max_seconds": 0.05,
            "provider_timeout_seconds": 5.0,
        }
        self.settings = settings_for(
            OrchestratorSettings, base_env, **{**defaults, **provider_env(fake), **overrides}
        )
        self.providers: dict[str, ProviderAdapter] = build_providers(self.settings)
        self.adapter = next(iter(self.providers.values()))
        actor = GenerationActor(
            settings=self.settings,
            store=store,
            media=self.media,
            providers=self.providers,
            sink=self.sink,
            clock=self.clock,
        )
        self.runner = Runner(
            store=store, actor=actor, clock=self.clock, lease=LEASE, max_in_flight=8, account_max_in_flight=16
        )

    @property
    def provider(self) -> Provider:
        return Provider(self.adapter.name)

    async def insert(self, *, duration: int = 5, **fields: Any) -> Doc:
        return await insert_generation(
            self.store,
            self.clock.now(),
            account_id=ACCOUNT,
            provider=self.provider,
            duration=duration,
            **fields,
        )

    async def get(self, generation_id: str) -> Doc:
        return await stored_generation(self.store, generation_id)

    async def start(self, **fields: Any) -> str:
        """Insert a generation and start running it; returns its id."""
        gid: str = (await self.insert(**fields))["_id"]
        assert await self.runner.start(gid)
        return gid

    async def until_submitted(self, generation_id: str) -> None:
        """Wait until the generation's provider task id is saved."""

        async def check() -> bool:
            return (await self.get(generation_id)).get("provider_task_id") is not None

        await eventually(check)

    async def run_through_the_queue(self) -> Doc:
        """Run a generation whose task waits in the provider's queue until the generation shows as queued;
        then the provider runs it. Returns the stored document at the end."""
        self.fake.queue_seconds = math.inf
        gid = await self.start()

        async def queued() -> bool:
            return bool((await self.get(gid))["status"] == Status.QUEUED.value)

        await eventually(queued)
        for task in self.fake.tasks.values():
            task.queue_seconds = 0
        await self.runner.wait_idle()
        return await self.get(gid)

    async def run(self, *, prompt: str = PROMPT, duration: int = 5, **fields: Any) -> Doc:
        """Insert a generation, drive it to its end, and return the stored document."""
        gid = (await self.insert(prompt=prompt, duration=duration, **fields))["_id"]
        assert await self.runner.start(gid)
        await self.runner.wait_idle()
        return await self.get(gid)

    async def stop(self) -> None:
        await self.runner.stop()
        await close_providers(self.providers)


@asynccontextmanager
async def provider_run(
    store: Store, base_env: dict[str, str], media_root: Path, fake: FakeProviderAPI, **overrides: Any
) -> AsyncIterator[ProviderRun]:
    run = ProviderRun(store, base_env, media_root, fake, **overrides)
    try:
        yield run
    finally:
        await run.stop()
