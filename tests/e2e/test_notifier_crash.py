"""A notifier killed with deliveries pending and retries scheduled loses none of them: the three services run
as processes over the real broker and store, the receiver fails every request until the notifier has been
SIGKILLed, and a new notifier process then delivers each one with the webhook-id its failed attempts
carried."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest

from tests.support.pipeline import call
from tests.support.receivers import OK, Received, Reply, receiving
from tests.support.services import ServiceProcess, wait_http_ok
from tests.support.waiting import eventually
from videogen.engines import free_port
from videogen.keys import create_key
from videogen.migrate import migrate
from videogen_client.webhooks import verify
from videogen_common.settings import CommonSettings
from videogen_common.store import Store

pytestmark = pytest.mark.e2e

GENERATIONS = 3


def generation_of(request: Received) -> str:
    return str(orjson.loads(request.body)["data"]["id"])


def for_generation(generation_id: str, *, after: int = 0) -> Callable[[Received], bool]:
    """Matches the requests for one generation's delivery that arrived after the ``after``-th request."""
    return lambda request: request.number > after and generation_of(request) == generation_id


async def test_deliveries_pending_when_the_notifier_is_killed_arrive_from_a_new_one_with_their_original_ids(
    base_env: dict[str, str], common_settings: CommonSettings, store: Store, tmp_path: Path
) -> None:
    await migrate(common_settings)
    key = await create_key(store, "acme")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {
        **base_env,
        "VIDEOGEN_API_PORT": str(port),
        "VIDEOGEN_PUBLIC_BASE_URL": base,
        "VIDEOGEN_WEBHOOK_ALLOW_CIDRS": "127.0.0.0/8",
        # Retries a second apart; enough of them that none runs out before the kill.
        "VIDEOGEN_WEBHOOK_RETRY_SCHEDULE": "1,1,1,1,1,1,1,1",
        "VIDEOGEN_SWEEP_INTERVAL_SECONDS": "0.2",
        # A killed attempt's claim lapses after 2 x timeout + 5 s; keep that short.
        "VIDEOGEN_DELIVERY_TIMEOUT_SECONDS": "1",
        # Several deliveries failing in a row open the endpoint's breaker; a short cooldown keeps it brief.
        "VIDEOGEN_BREAKER_COOLDOWN_SECONDS": "1",
    }
    answers: dict[int, int] = {}  # request number → the status the receiver answered with
    failing = True

    def script(request: Received) -> Reply:
        reply = Reply(500) if failing else OK
        answers[request.number] = reply.status
        return reply

    logs = tmp_path / "logs"
    api, orchestrator, notifier = (ServiceProcess(n, env, logs) for n in ("api", "orchestrator", "notifier"))
    successor = ServiceProcess("notifier", env, logs / "successor")
    try:
        for service in (api, orchestrator, notifier):
            await service.start()
        await wait_http_ok(f"{base}/healthz", api)
        async with receiving(script) as receiver, aiohttp.ClientSession() as session:
            status, hook = await call(
                session,
                "POST",
                f"{base}/v1/webhooks",
                key,
                {"url": receiver.url(), "events": ["video.completed"]},
            )
            assert status == 201
            ids = []
            for i in range(GENERATIONS):
                status, created = await call(
                    session,
                    "POST",
                    f"{base}/v1/generate",
                    key,
                    {"prompt": f"crash {i}", "provider": "mock", "duration": 3},
                )
                assert status == 202
                ids.append(created["id"])

            # A second request for a delivery means its first failed attempt is recorded and a retry is due.
            for generation_id in ids:
                await receiver.request_where(for_generation(generation_id), 2, timeout=90)
            assert await notifier.stop(signal.SIGKILL) == -signal.SIGKILL
            killed_at = receiver.count()

            deliveries = {d["generation_id"]: d async for d in store.deliveries.find({})}
            assert sorted(deliveries) == sorted(ids)
            for delivery in deliveries.values():
                assert delivery["status"] == "pending" and delivery["next_attempt_at"] is not None
                assert delivery["attempts"] and {a["status_code"] for a in delivery["attempts"]} == {500}

            failing = False
            await successor.start()
            for generation_id in ids:
                await receiver.request_where(for_generation(generation_id, after=killed_at), timeout=60)

            for generation_id in ids:
                original = deliveries[generation_id]["_id"]
                requests = [r for r in receiver.requests if generation_of(r) == generation_id]
                failed = [r for r in requests if answers[r.number] == 500]
                succeeded = [r for r in requests if answers[r.number] == 200]
                assert len(failed) >= 2 and succeeded
                assert {r.headers["webhook-id"] for r in requests} == {original}
                assert {r.body for r in requests} == {requests[0].body}
                for request in succeeded:
                    assert (
                        verify(hook["secret"], request.headers, request.body)["data"]["id"] == generation_id
                    )

            async def all_recorded() -> bool:
                docs: list[dict[str, Any]] = await store.deliveries.find({}).to_list(None)
                return len(docs) == GENERATIONS and all(d["status"] == "succeeded" for d in docs)

            await eventually(all_recorded, 30, "every delivery recorded as succeeded")
            for doc in await store.deliveries.find({}).to_list(None):
                codes = [a["status_code"] for a in doc["attempts"]]
                assert codes[-1] == 200 and set(codes[:-1]) == {500}
    finally:
        codes = await asyncio.gather(*(s.stop() for s in (api, orchestrator, successor)))
        await notifier.stop(signal.SIGKILL)
    assert codes == [0, 0, 0], f"services did not exit cleanly on SIGTERM: {codes}"
