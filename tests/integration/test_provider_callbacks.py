"""Provider callbacks end to end: the fakes of Luma and fal call back as their providers do (Luma posts the
Generation on each state change, unsigned; fal posts the result, signed with ED25519 against a JWKS the test
serves on 127.0.0.1) at the real api (on 127.0.0.1, the deployment's public base URL), whose wake-up goes
through the real broker to the orchestrator's callback feed and task watch; the real runner and actor drive
each generation, built from settings with ``VIDEOGEN_PROVIDER_CALLBACKS`` on.

A callback only wakes the actor, which reads the task from the provider: so the fake's request log says what
each callback cost (a read, and fal's result), and that a forged, replayed, late or badly signed one
completed nothing."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from tests.support.api import api_client, bearer
from tests.support.env import settings_for
from tests.support.fake_providers.common import FakeProviderAPI, FakeTask
from tests.support.fake_providers.fal import FakeFal, FakeJWKS
from tests.support.fake_providers.luma import FakeLuma
from tests.support.orchestration import ProviderRun, provider_run
from tests.support.waiting import eventually
from videogen.keys import create_key
from videogen_api import state
from videogen_api.settings import ApiSettings
from videogen_common.provider_callbacks import callback_url
from videogen_common.store import Store
from videogen_common.topics import Topics
from videogen_orchestrator.callback_feed import CallbackFeed

SAFETY_NET = 60.0  # no test here waits for it, unless it sets its own
RUN_TIMEOUT = 20.0


@dataclass
class Callbacks:
    api: TestClient[web.Request, web.Application]
    run: ProviderRun
    fake: FakeProviderAPI
    jwks: FakeJWKS

    @property
    def base_url(self) -> str:
        return str(self.api.make_url("")).rstrip("/")

    def url(self, generation_id: str, attempt: int = 0, provider: str | None = None) -> str:
        """A callback URL as the orchestrator makes it for the generation's task."""
        key = self.run.settings.media_signing_key.get_secret_value()
        return callback_url(self.base_url, key, provider or self.run.adapter.name, generation_id, attempt)

    async def run_one(self, **fields: Any) -> dict[str, Any]:
        async with asyncio.timeout(RUN_TIMEOUT):
            return await self.run.run(**fields)

    async def idle(self) -> None:
        async with asyncio.timeout(RUN_TIMEOUT):
            await self.run.runner.wait_idle()

    def provider_requests(self) -> list[tuple[str, str]]:
        """What reached the provider's API (its files' downloads aside), the task ids made generic."""
        out = []
        for method, path in self.fake.requests:
            if path.startswith("/files/"):
                continue
            generic = path
            for task_id in self.fake.tasks:
                generic = generic.replace(task_id, "{id}")
            out.append((method, generic))
        return out


@asynccontextmanager
async def callbacks(
    store: Store,
    base_env: dict[str, str],
    tmp_path: Path,
    topics: Topics,
    fake: FakeProviderAPI,
    **overrides: Any,
) -> AsyncIterator[Callbacks]:
    """The api on 127.0.0.1 (fal's keys from the test's JWKS), and one orchestrator instance with provider
    callbacks on at the api's address, reading the callbacks topic."""
    signing = fake.signing_key if isinstance(fake, FakeFal) else Ed25519PrivateKey.generate()
    async with FakeJWKS(signing) as jwks:
        api_settings = settings_for(ApiSettings, base_env, api_port=0, fal_jwks_url=jwks.url)
        async with api_client(api_settings) as api:
            publisher = api.app[state.PUBLISHER]

            async def connected() -> bool:
                return publisher.started

            await eventually(connected, what="the api's producer connected")
            settings = {
                "provider_callbacks": True,
                "provider_callback_poll_seconds": SAFETY_NET,
                "public_base_url": str(api.make_url("")).rstrip("/"),
                **overrides,
            }
            async with provider_run(store, base_env, tmp_path / "media", fake, **settings) as run:
                feed = CallbackFeed(run.settings.kafka_bootstrap, topics.callbacks, run.watch.wake)
                feed.start()
                try:
                    async with asyncio.timeout(RUN_TIMEOUT):
                        await feed.ready.wait()
                    yield Callbacks(api, run, fake, jwks)
                finally:
                    await feed.stop()


@pytest.fixture
async def luma() -> AsyncIterator[FakeLuma]:
    async with FakeLuma(task_seconds=0.2) as fake:
        yield fake


@pytest.fixture
async def fal() -> AsyncIterator[FakeFal]:
    async with FakeFal(task_seconds=0.2) as fake:
        yield fake


@pytest.fixture
async def on_luma(
    store: Store, base_env: dict[str, str], tmp_path: Path, topics: Topics, luma: FakeLuma
) -> AsyncIterator[Callbacks]:
    async with callbacks(store, base_env, tmp_path, topics, luma) as cb:
        yield cb


@pytest.fixture
async def on_fal(
    store: Store, base_env: dict[str, str], tmp_path: Path, topics: Topics, fal: FakeFal
) -> AsyncIterator[Callbacks]:
    async with callbacks(store, base_env, tmp_path, topics, fal) as cb:
        yield cb


LUMA_CREATE = ("POST", "/dream-machine/v1/generations/video")
LUMA_READ = ("GET", "/dream-machine/v1/generations/{id}")


async def test_a_luma_generation_is_completed_by_its_callback_with_no_poll_in_between(
    on_luma: Callbacks, luma: FakeLuma
) -> None:
    doc = await on_luma.run_one()

    assert doc["status"] == "completed", doc["error"]
    [body] = luma.submissions
    assert body["callback_url"] == on_luma.url(doc["_id"])
    # Luma called back once (its state changed once: dreaming to completed), and that was read: no poll.
    assert [(c.phase, c.status) for c in luma.callbacks] == [("succeeded", 200)]
    assert on_luma.provider_requests() == [LUMA_CREATE, LUMA_READ]
    assert on_luma.run.watch.taken == 1
    assert on_luma.run.clock.slept.count(SAFETY_NET) == 1  # the one wait, which the callback ended


async def test_a_fal_generation_is_completed_by_its_signed_webhook_with_no_poll_in_between(
    on_fal: Callbacks, fal: FakeFal
) -> None:
    doc = await on_fal.run_one()

    assert doc["status"] == "completed", doc["error"]
    [submit] = [e for e in fal.exchanges if e.method == "POST"]
    assert submit.query == {"fal_webhook": on_fal.url(doc["_id"])}
    assert [(c.phase, c.status) for c in fal.callbacks] == [("succeeded", 200)]
    # Create, one read of the status, the result: nothing else.
    assert on_fal.provider_requests() == [
        ("POST", f"/{fal.model_id}"),
        ("GET", f"/{fal.app_id}/requests/{{id}}/status"),
        ("GET", f"/{fal.app_id}/requests/{{id}}"),
    ]
    assert on_fal.jwks.fetches == 1


async def test_a_webhook_with_a_bad_signature_is_refused_and_wakes_nothing(
    store: Store, base_env: dict[str, str], tmp_path: Path, topics: Topics, fal: FakeFal
) -> None:
    async with callbacks(
        store, base_env, tmp_path, topics, fal, provider_callback_poll_seconds=0.5
    ) as on_fal:
        fal.signing_key = Ed25519PrivateKey.generate()  # not among the keys the JWKS serves
        doc = await on_fal.run_one()

    # fal tried three times, each refused 401; the safety net's poll completed the generation.
    assert [c.status for c in fal.callbacks] == [401, 401, 401]
    assert on_fal.run.watch.taken == 0
    assert doc["status"] == "completed", doc["error"]
    assert 0.5 in on_fal.run.clock.slept
    # The keys were fetched once: a failed check fetches them again at most once per refetch interval.
    assert on_fal.jwks.fetches == 1


async def test_a_signature_the_api_refuses_is_a_401_problem(on_fal: Callbacks, fal: FakeFal) -> None:
    url = on_fal.url("gen_unknown")
    body = b'{"status": "OK", "payload": {}}'
    stale = fal.signed_headers(body, timestamp=int(time.time()) - 3600)
    tampered = {**fal.signed_headers(body), "X-Fal-Webhook-User-Id": "someone-else"}
    for headers in (stale, tampered, {}):
        answer = await on_fal.api.post(url.removeprefix(on_fal.base_url), data=body, headers=headers)
        assert answer.status == 401
        assert answer.headers["Content-Type"] == "application/problem+json"
        assert (await answer.json())["type"] == "urn:videogen:problem:invalid-signature"
    ok = await on_fal.api.post(url.removeprefix(on_fal.base_url), data=body, headers=fal.signed_headers(body))
    assert ok.status == 200


async def test_a_key_fal_added_since_is_fetched_once(
    store: Store, base_env: dict[str, str], tmp_path: Path, topics: Topics, fal: FakeFal
) -> None:
    async with FakeJWKS(fal.signing_key) as jwks:
        settings = settings_for(
            ApiSettings, base_env, api_port=0, fal_jwks_url=jwks.url, fal_jwks_refetch_seconds=0
        )
        async with api_client(settings) as api:
            path = "/v1/provider-callbacks/pika/gen_x.0.mac"
            body = b"{}"
            assert (await api.post(path, data=body, headers=fal.signed_headers(body))).status == 200
            assert jwks.fetches == 1
            newer = Ed25519PrivateKey.generate()
            jwks.keys.append(newer)
            fal.signing_key = newer
            assert (await api.post(path, data=body, headers=fal.signed_headers(body))).status == 200
            assert jwks.fetches == 2
            # The keys now known verify without another fetch.
            assert (await api.post(path, data=body, headers=fal.signed_headers(body))).status == 200
            assert jwks.fetches == 2


async def test_a_callback_with_an_unknown_token_is_answered_200_and_publishes_nothing(
    on_luma: Callbacks,
) -> None:
    forged = on_luma.url("gen_nobody").rsplit(".", 1)[0] + ".forgedmac"
    for url in (forged, on_luma.url("gen_nobody", provider="runway")):
        answer = await on_luma.api.post(url.removeprefix(on_luma.base_url), json={"state": "completed"})
        assert answer.status == 200 and await answer.json() == {"received": True}
    # Then one we issued, for the same generation (so on the same partition, after the others): the first
    # wake-up the orchestrator sees is this one, dropped (nothing of that generation runs here).
    real = await on_luma.api.post(on_luma.url("gen_nobody").removeprefix(on_luma.base_url), json={})
    assert real.status == 200

    async def dropped() -> bool:
        return on_luma.run.watch.dropped >= 1

    await eventually(dropped)
    assert (on_luma.run.watch.dropped, on_luma.run.watch.taken) == (1, 0)


async def test_a_forged_or_replayed_callback_completes_nothing(on_luma: Callbacks, luma: FakeLuma) -> None:
    luma.task_seconds = math.inf
    gid = await on_luma.run.start()
    await on_luma.run.until_submitted(gid)
    path = on_luma.url(gid).removeprefix(on_luma.base_url)
    [task] = luma.tasks.values()
    # A forged "completed" Generation at the right URL: the actor reads the task, which still runs.
    forged = {**luma.view(task), "state": "completed", "assets": {"video": "https://evil.test/v.mp4"}}
    assert (await on_luma.api.post(path, json=forged)).status == 200

    async def read_once() -> bool:
        return on_luma.provider_requests().count(LUMA_READ) == 1

    await eventually(read_once, what="the task read after the forged callback")
    doc = await on_luma.run.get(gid)
    assert doc["status"] == "processing" and doc.get("video_key") is None
    assert luma.downloads == 0

    task.run_seconds = 0  # it ends: Luma calls back, and the generation completes
    await on_luma.idle()
    final = await on_luma.run.get(gid)
    assert final["status"] == "completed"

    # The real callback replayed after the end: 200, nothing read, nothing written.
    assert (await on_luma.api.post(path, data=orjson.dumps(luma.view(task)))).status == 200

    async def replay_dropped() -> bool:
        return on_luma.run.watch.dropped >= 1

    await eventually(replay_dropped)
    assert on_luma.provider_requests() == [LUMA_CREATE, LUMA_READ, LUMA_READ]
    assert (await on_luma.run.get(gid))["version"] == final["version"]


async def test_a_callback_before_the_creates_answer_is_stored_still_wakes_the_actor(
    on_luma: Callbacks, luma: FakeLuma
) -> None:
    luma.task_seconds = math.inf
    gid = (await on_luma.run.insert())["_id"]

    async def end_and_call_back_first(task: FakeTask) -> None:
        # The task is made and not yet answered: nothing of it is stored.
        assert (await on_luma.run.get(gid)).get("provider_task_id") is None
        task.run_seconds = 0  # it ends at once: Luma calls back before our create has its answer

        async def woken() -> bool:
            return on_luma.run.watch.taken == 1

        await eventually(woken, what="the callback's wake-up taken")
        assert (await on_luma.run.get(gid)).get("provider_task_id") is None

    luma.before_create_answer = end_and_call_back_first
    assert await on_luma.run.runner.start(gid)
    await on_luma.idle()

    doc = await on_luma.run.get(gid)
    assert doc["status"] == "completed", doc["error"]
    # The remembered wake-up ended the first wait at once: one read, no safety-net poll.
    assert on_luma.provider_requests() == [LUMA_CREATE, LUMA_READ]
    assert SAFETY_NET not in on_luma.run.clock.slept


async def test_a_callback_after_the_generation_was_canceled_completes_nothing(
    on_luma: Callbacks, luma: FakeLuma, store: Store
) -> None:
    luma.task_seconds = math.inf
    gid = await on_luma.run.start()
    await on_luma.run.until_submitted(gid)
    key = await create_key(store, "acme")
    canceled = await on_luma.api.post(f"/v1/generations/{gid}/cancel", headers=bearer(key))
    assert canceled.status in (200, 202), await canceled.text()

    [task] = luma.tasks.values()
    task.run_seconds = 0  # the task ends anyway, and Luma calls back
    await on_luma.idle()

    assert [(c.phase, c.status) for c in luma.callbacks] == [("succeeded", 200)]
    doc = await on_luma.run.get(gid)
    assert doc["status"] == "failed" and doc["error"]["code"] == "canceled"
    assert doc.get("video_key") is None and luma.downloads == 0
    # The actor read the task once, found the generation no longer its own, and deleted the task.
    deleted = ("DELETE", "/dream-machine/v1/generations/{id}")
    assert on_luma.provider_requests() == [LUMA_CREATE, LUMA_READ, deleted]


async def test_with_its_callbacks_lost_a_generation_is_completed_by_the_safety_net_poll(
    store: Store, base_env: dict[str, str], tmp_path: Path, topics: Topics, luma: FakeLuma
) -> None:
    luma.callbacks_lost = True
    async with callbacks(
        store, base_env, tmp_path, topics, luma, provider_callback_poll_seconds=0.3
    ) as on_luma:
        doc = await on_luma.run_one()

    assert doc["status"] == "completed", doc["error"]
    assert luma.callbacks == [] and on_luma.run.watch.taken == 0
    # Every read came after a wait of the safety net's interval.
    waits = on_luma.run.clock.slept.count(0.3)
    assert waits >= 1 and on_luma.provider_requests().count(LUMA_READ) == waits


async def test_a_read_that_fails_after_a_wake_up_is_tried_again_at_the_polling_cadence(
    store: Store, base_env: dict[str, str], tmp_path: Path, topics: Topics, luma: FakeLuma
) -> None:
    # The callback is spent on a read Luma answers 503 (no retries in the adapter): the next read comes at the
    # polling cadence, not after the safety net's minute (the test's timeout is a third of that).
    luma.fail_next(1, status=503, kind="poll")
    async with callbacks(
        store, base_env, tmp_path, topics, luma, provider_retry_attempts=1, poll_interval_seconds=0.05
    ) as on_luma:
        doc = await on_luma.run_one()

    assert doc["status"] == "completed", doc["error"]
    assert on_luma.run.watch.taken == 1
    assert on_luma.provider_requests() == [LUMA_CREATE, LUMA_READ, LUMA_READ]
    # One wait for the callback (which it ended), then one at the polling cadence, before the second read.
    slept = on_luma.run.clock.slept
    assert slept.count(SAFETY_NET) == 1 and slept.count(0.05) == 1
    assert slept.index(SAFETY_NET) < slept.index(0.05)
