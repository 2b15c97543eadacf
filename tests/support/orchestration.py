"""The one way a test wires the orchestrator: its real parts, built from the settings by
``videogen_orchestrator.assembly.assemble`` as ``runtime.py`` builds them (with their metrics), over the real
store and a media store (a folder, or the S3 one the test opens), with the provider adapters and the clock the
test chooses and a sink that records status events instead of producing to Kafka (the e2e tests cover the
producer).

- ``Orchestration``: settings per owner (the test's overrides on its environment), actors, runners and
  reconcilers on one store, clock, sink and media store; generations inserted as the api creates them, read
  back, or driven to their end by one actor (``run_actor``, no runner); ``stop`` stops every runner made.
- ``ProviderRun`` (``provider_run``): a real provider adapter end to end, built exactly as the orchestrator
  builds it (``providers.registry`` from settings naming a fake provider's base URL and key), on one runner;
  retries back off in milliseconds so throttling and 5xx bursts are quick.

Time is a hand-moved ``ManualClock`` unless the test gives another clock, so leases, grace periods and
deadlines are exercised without sleeping."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Mapping, Sequence
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
from videogen_common.clock import Clock
from videogen_common.domain import Provider, Status
from videogen_common.media import LocalMediaStore, MediaStore
from videogen_common.metrics import new_registry
from videogen_common.records.generation import GenerationRecord
from videogen_common.store import Store
from videogen_orchestrator.actor import GenerationActor
from videogen_orchestrator.admission import Admission
from videogen_orchestrator.assembly import Orchestrator, Resources, actor_for, admission_for, assemble
from videogen_orchestrator.metrics import OrchestratorMetrics
from videogen_orchestrator.providers.base import ProviderAdapter
from videogen_orchestrator.providers.mock import MockProvider
from videogen_orchestrator.providers.registry import build_providers, close_providers
from videogen_orchestrator.reconciler import Reconciler
from videogen_orchestrator.runner import Runner
from videogen_orchestrator.settings import OrchestratorSettings
from videogen_orchestrator.task_watch import TaskWatch

Doc = dict[str, Any]

ACCOUNT = "acme"

# What a test's orchestrator differs in from the service's defaults, unless the test says otherwise: a known
# owner, polls 10 ms apart (no test waits a second between polls), and a smaller runner. The lease (30 s) and
# the reconciler's grace (10 s) are the service's defaults.
TEST_SETTINGS: dict[str, Any] = {
    "orchestrator_instance": "orch-a",
    "poll_interval_seconds": 0.01,
    "max_in_flight": 8,
}


class Orchestration:
    """Actors, runners and reconcilers assembled as ``runtime.py`` assembles them, on one store, clock, sink
    and media store. ``settings`` override the test's environment ``env`` in every owner's settings (on top of
    ``TEST_SETTINGS``); ``providers`` are the adapters by name (the mock provider by default)."""

    def __init__(
        self,
        store: Store,
        env: Mapping[str, str],
        media: MediaStore | Path,
        *,
        providers: Mapping[str, ProviderAdapter] | None = None,
        clock: ManualClock | None = None,
        settings: Mapping[str, Any] | None = None,
    ) -> None:
        self.store = store
        self.media: MediaStore = LocalMediaStore(media) if isinstance(media, Path) else media
        self.clock = clock or ManualClock()
        self.sink = RecordingSink()
        self.providers: Mapping[str, ProviderAdapter] = (
            {"mock": MockProvider()} if providers is None else providers
        )
        self.runners: list[Runner] = []
        # Each runner's fellow parts (its admission, reconciler...), by the runner.
        self._parts: dict[int, Orchestrator] = {}
        # The instances' metrics, as runtime.py keeps them (admission's waits and refusals, breakers).
        self.metrics = OrchestratorMetrics(new_registry())
        self._env = dict(env)
        self._settings = {**TEST_SETTINGS, **(settings or {})}

    def settings(self, owner: str | None = None, **overrides: Any) -> OrchestratorSettings:
        """The settings of the instance ``owner`` (the lease owner its runner claims and its actor writes
        as; ``orch-a`` unless the test chose another)."""
        fields = {**self._settings, **overrides}
        if owner is not None:
            fields["orchestrator_instance"] = owner
        return settings_for(OrchestratorSettings, self._env, **fields)

    def resources(
        self,
        owner: str | None = None,
        *,
        providers: Mapping[str, ProviderAdapter] | None = None,
        clock: Clock | None = None,
        **overrides: Any,
    ) -> Resources:
        """What the instance ``owner`` runs on (``overrides`` on its settings, e.g. ``max_in_flight`` or
        ``account_max_in_flight``): this store, media store, sink and metrics."""
        return Resources(
            self.settings(owner, **overrides),
            self.store,
            self.media,
            self.providers if providers is None else providers,
            self.sink,
            clock or self.clock,
            self.metrics,
        )

    def actor(
        self,
        owner: str | None = None,
        *,
        providers: Mapping[str, ProviderAdapter] | None = None,
        clock: Clock | None = None,
        **overrides: Any,
    ) -> GenerationActor:
        """An actor alone (no runner: no breakers to tell, no admission to ask), as ``assembly`` makes it."""
        return actor_for(self.resources(owner, providers=providers, clock=clock, **overrides))

    def runner(
        self,
        owner: str | None = None,
        *,
        providers: Mapping[str, ProviderAdapter] | None = None,
        clock: Clock | None = None,
        **overrides: Any,
    ) -> Runner:
        """The runner of the instance ``owner`` (``overrides`` on its settings); stopped by ``stop``."""
        parts = assemble(self.resources(owner, providers=providers, clock=clock, **overrides))
        self.runners.append(parts.runner)
        self._parts[id(parts.runner)] = parts
        return parts.runner

    def admission_of(self, runner: Runner) -> Admission:
        """The admission ``runner`` was assembled with."""
        return self._parts[id(runner)].admission

    def watch_of(self, runner: Runner) -> TaskWatch:
        """The task watch ``runner``'s actor waits through (where provider callbacks' wake-ups go)."""
        return self._parts[id(runner)].watch

    def admission(self, settings: OrchestratorSettings, clock: Clock | None = None) -> Admission:
        """Admission alone, as ``assembly`` makes it (its pools are made at its first use)."""
        return admission_for(settings, self.store, clock or self.clock, self.metrics)

    def reconciler(self, runner: Runner) -> Reconciler:
        """The reconciler ``runner`` was assembled with."""
        return self._parts[id(runner)].reconciler

    async def insert(self, *, account_id: str = ACCOUNT, **fields: Any) -> Doc:
        """A generation as the api creates it, now (``fields`` set on it besides)."""
        return await insert_generation(self.store, self.clock.now(), account_id=account_id, **fields)

    async def get(self, generation_id: str) -> Doc:
        return await stored_generation(self.store, generation_id)

    async def run_actor(
        self, provider: ProviderAdapter | None = None, *, duration: int = 3, **fields: Any
    ) -> Doc:
        """Insert a generation (with ``fields``) already leased to this instance (as the runner's claim would
        leave it), run one actor on it (``provider`` as the ``mock`` adapter, if given) and return the final
        document."""
        owner = self.settings().orchestrator_instance
        now = self.clock.now()
        doc = await self.insert(
            duration=duration, lease_owner=owner, lease_expires_at=now + timedelta(minutes=5), **fields
        )
        actor = self.actor(providers=None if provider is None else {"mock": provider})
        await actor.run(GenerationRecord.from_doc(doc))
        return await self.get(doc["_id"])

    async def stop(self) -> None:
        """Stop every runner made here: no actor outlives its test (or its database)."""
        for runner in self.runners:
            await runner.stop()


def providers_env(*fakes: FakeProviderAPI) -> dict[str, Any]:
    """The settings that enable each fake's provider and point its adapter at it."""
    env: dict[str, Any] = {}
    for fake in fakes:
        env.update(provider_env(fake))
    env["providers"] = ",".join(provider_env(fake)["providers"] for fake in fakes)
    return env


def provider_name(fake: FakeProviderAPI) -> str:
    """The provider ``fake`` stands for."""
    return str(provider_env(fake)["providers"])


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
    """One instance (``orch-providers``) whose adapters are built from its settings by the registry, pointed
    at ``fake`` (and at the ``others``, for generations that may go to several providers); ``overrides`` on
    those settings."""

    def __init__(
        self,
        store: Store,
        base_env: dict[str, str],
        media_root: Path,
        fake: FakeProviderAPI,
        clock: ManualClock | None = None,
        others: Sequence[FakeProviderAPI] = (),
        **overrides: Any,
    ) -> None:
        defaults: dict[str, Any] = {
            "orchestrator_instance": "orch-providers",
            "provider_retry_base_seconds": 0.005,
            "provider_retry_max_seconds": 0.02,
            "provider_retry_after_max_seconds": 0.05,
            "provider_timeout_seconds": 5.0,
        }
        self.fake = fake
        settings = {**defaults, **providers_env(fake, *others), **overrides}
        self.wiring = Orchestration(store, base_env, media_root, providers={}, settings=settings, clock=clock)
        self.settings = self.wiring.settings()
        self.providers: dict[str, ProviderAdapter] = build_providers(self.settings)
        self.wiring.providers = self.providers
        self.adapter = next(a for a in self.providers.values() if a.name == provider_name(fake))
        self.store, self.clock, self.sink = store, self.wiring.clock, self.wiring.sink
        self.media = self.wiring.media
        self.runner = self.wiring.runner()
        self.admission = self.wiring.admission_of(self.runner)
        self.watch = self.wiring.watch_of(self.runner)

    @property
    def provider(self) -> Provider:
        return Provider(self.adapter.name)

    async def insert(self, *, duration: int = 5, **fields: Any) -> Doc:
        return await self.wiring.insert(provider=self.provider, duration=duration, **fields)

    async def get(self, generation_id: str) -> Doc:
        return await self.wiring.get(generation_id)

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
        await self.wiring.stop()
        await close_providers(self.providers)


@asynccontextmanager
async def provider_run(
    store: Store,
    base_env: dict[str, str],
    media_root: Path,
    fake: FakeProviderAPI,
    clock: ManualClock | None = None,
    others: Sequence[FakeProviderAPI] = (),
    **overrides: Any,
) -> AsyncIterator[ProviderRun]:
    run = ProviderRun(store, base_env, media_root, fake, clock, others, **overrides)
    try:
        yield run
    finally:
        await run.stop()
