"""The notifier's delivery engine against the real MongoDB and real HTTP receivers on 127.0.0.1.

Time is a settable clock and jitter is off (rng 0.5), so retry times are exact; receivers are real aiohttp
servers whose answers are scripted per request, and the tests wait on their arrival events, never sleep."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack
from datetime import UTC, datetime, timedelta
from typing import Any

import aiohttp
import orjson
import pytest

from tests.support.env import settings_for
from tests.support.fakes import ManualClock
from tests.support.notifier import NotifierHarness
from tests.support.public_fields import DATA_FIELDS
from tests.support.receivers import (
    HANG,
    OK,
    Reply,
    always,
    failing,
    redirecting,
    replies,
    unavailable,
)
from tests.support.webhooks import insert_webhook
from videogen_common.clock import isoformat
from videogen_common.deliveries import generation_data
from videogen_common.events import status_event_id
from videogen_common.ids import derived_id, new_id
from videogen_common.records.event import Event
from videogen_common.store import Store
from videogen_notifier.deliveries import deliveries_for
from videogen_notifier.dispatcher import Dispatcher
from videogen_notifier.runtime import NotifierRuntime
from videogen_notifier.settings import NotifierSettings

Doc = dict[str, Any]
ACCOUNT = "acme"
COMPLETED, FAILED = "video.completed", "video.failed"
PROCESSING, PROGRESS = "video.processing", "video.progress"
BOTH = (COMPLETED, FAILED)
TYPES_OF = {"completed": COMPLETED, "failed": FAILED, "processing": PROCESSING}
PROVIDER_ERROR = {
    "code": "provider_error",
    "message": "the provider gave up",
    "provider_code": "E42",
    "retriable": False,
}


def generation(status: str, now: datetime) -> Doc:
    """A public generation dict, as the orchestrator puts it in a status event."""
    generation_id = new_id("gen", now)
    completed = status == "completed"
    media = f"http://127.0.0.1:8080/v1/media/{generation_id}"
    return {
        "id": generation_id,
        "status": status,
        "prompt": "a red fox running through snow",
        "provider": "mock",
        "duration": 5,
        "video_url": f"{media}/video.mp4?exp=1&sig=a" if completed else None,
        "thumbnail_url": f"{media}/thumbnail.jpg?exp=1&sig=b" if completed else None,
        "error": PROVIDER_ERROR if status == "failed" else None,
        "created_at": isoformat(now - timedelta(seconds=7)),
        "updated_at": isoformat(now),
        "progress": 100 if completed else None,
        "queue_reason": None,
    }


def video_event(
    status: str, now: datetime, account_id: str = ACCOUNT, *, progress: int | None = None
) -> Event:
    """The event a generation's change makes, as the orchestrator publishes it: ``video.completed`` or
    ``video.failed`` (owed) for a terminal status, ``video.processing`` for ``processing``, and with
    ``progress`` ``video.progress`` (best effort)."""
    gen = generation(status, now)
    event_id = status_event_id(gen["id"], status, 3)
    if progress is not None:
        gen["progress"] = progress
        event_id += f"_progress_{progress}"
    event_type = PROGRESS if progress is not None else TYPES_OF[status]
    owed = event_type in BOTH
    return Event(
        id=event_id,
        type=event_type,
        account_id=account_id,
        subject_type="generation",
        subject_id=gen["id"],
        data=generation_data(gen),
        created_at=now,
        trace_id=f"req_{gen['id']}",
        owed=owed,
        source="generations" if owed else None,
        carrier_id=gen["id"] if owed else None,
    )


class Harness(NotifierHarness):
    def settings(self, *, schedule: str = "5,300", timeout: float = 5.0, **env: str) -> NotifierSettings:
        """NotifierSettings from the test's environment plus these variables (``env`` without the prefix)."""
        variables = {
            **self.base_env,
            "VIDEOGEN_WEBHOOK_RETRY_SCHEDULE": schedule,
            "VIDEOGEN_DELIVERY_TIMEOUT_SECONDS": str(timeout),
            **{f"VIDEOGEN_{name.upper()}": value for name, value in env.items()},
        }
        return settings_for(NotifierSettings, variables)

    async def dispatcher(
        self, *, schedule: str = "5,300", timeout: float = 5.0, store: Store | None = None, **env: str
    ) -> Dispatcher:
        settings = self.settings(schedule=schedule, timeout=timeout, **env)
        return self.dispatcher_with(settings, aiohttp.ClientSession(), store=store)

    async def webhook(
        self, url: str, *, account_id: str = ACCOUNT, events: Sequence[str] = BOTH, active: bool = True
    ) -> tuple[str, str]:
        """An endpoint stored exactly as POST /v1/webhooks stores it; returns (id, secret)."""
        return await insert_webhook(
            self.store, url, now=self.clock.now(), account_id=account_id, events=events, active=active
        )

    async def publish(self, dispatcher: Dispatcher, event: Event) -> list[tuple[str, str]]:
        return await self.handle(dispatcher, event)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(datetime.now(UTC))


@pytest.fixture
async def h(base_env: dict[str, str], store: Store, clock: ManualClock) -> AsyncIterator[Harness]:
    async with AsyncExitStack() as stack:
        yield Harness(base_env, store, clock, stack)


def seconds(n: float) -> timedelta:
    return timedelta(seconds=n)


# --- which deliveries an event creates --------------------------------------------------------------------


async def test_deliveries_for_creates_one_per_active_subscribed_endpoint_of_the_account_and_none_on_repeat(
    h: Harness, store: Store, clock: ManualClock
) -> None:
    completed_only, _ = await h.webhook("http://127.0.0.1:9/completed", events=[COMPLETED])
    both, _ = await h.webhook("http://127.0.0.1:9/both", events=BOTH)
    failed_only, _ = await h.webhook("http://127.0.0.1:9/failed", events=[FAILED])
    await h.webhook("http://127.0.0.1:9/inactive", events=BOTH, active=False)
    await h.webhook("http://127.0.0.1:9/other-account", account_id="globex", events=BOTH)

    event = video_event("completed", clock.now())
    created = await deliveries_for(store, event, clock.now())
    assert sorted(w for _, w in created) == sorted([completed_only, both])
    assert len({d for d, _ in created}) == 2
    for delivery_id, webhook_id in created:
        doc = await h.delivery(delivery_id)
        assert doc["event_id"] == event.id and doc["webhook_id"] == webhook_id
        assert doc["account_id"] == ACCOUNT and doc["event_type"] == COMPLETED
        assert doc["generation_id"] == event.subject_id
        assert doc["status"] == "pending" and doc["attempts"] == []
        assert doc["next_attempt_at"] == clock.now()
        assert "retry_at" not in doc
        assert delivery_id == derived_id("msg", event.id, webhook_id)  # the pair's own id

    assert await deliveries_for(store, event, clock.now()) == []
    assert await store.deliveries.count_documents({"event_id": event.id}) == 2

    failed = video_event("failed", clock.now())
    created_failed = await deliveries_for(store, failed, clock.now())
    assert sorted(w for _, w in created_failed) == sorted([both, failed_only])
    assert await deliveries_for(store, failed, clock.now()) == []
    assert await store.deliveries.count_documents({}) == 4


async def test_processing_and_progress_notices_go_only_to_endpoints_that_list_them_with_the_progress(
    h: Harness, store: Store, clock: ManualClock
) -> None:
    terminal_only, _ = await h.webhook("http://127.0.0.1:9/terminal", events=BOTH)
    started, _ = await h.webhook("http://127.0.0.1:9/started", events=[PROCESSING, COMPLETED])
    everything, _ = await h.webhook("http://127.0.0.1:9/all", events=[*BOTH, PROCESSING, PROGRESS])

    processing = video_event("processing", clock.now())
    created = await deliveries_for(store, processing, clock.now())
    assert sorted(w for _, w in created) == sorted([started, everything])
    for delivery_id, _ in created:
        doc = await h.delivery(delivery_id)
        assert doc["event_type"] == PROCESSING and doc["event_id"] == processing.id
        body = orjson.loads(doc["body"])
        assert body["event"] == PROCESSING and body["data"]["status"] == "processing"

    progress = video_event("processing", clock.now(), progress=40)
    created = await deliveries_for(store, progress, clock.now())
    assert [w for _, w in created] == [everything]
    body = orjson.loads((await h.delivery(created[0][0]))["body"])
    assert (body["event"], body["data"]["progress"]) == (PROGRESS, 40)
    assert await deliveries_for(store, progress, clock.now()) == []  # a repeat creates nothing
    assert await store.deliveries.count_documents({"webhook_id": terminal_only}) == 0


# --- one attempt --------------------------------------------------------------------------------------------


async def test_success_sends_the_spec_payload_signed_both_ways_and_records_one_200_attempt(
    h: Harness, clock: ManualClock
) -> None:
    receiver = await h.receiver(always(OK))
    dispatcher = await h.dispatcher()
    _, secret = await h.webhook(receiver.url())
    event = video_event("completed", clock.now())
    [(delivery_id, _)] = await h.publish(dispatcher, event)
    await dispatcher.wait_idle()

    assert receiver.count() == 1
    request = await receiver.request(1)
    assert request.method == "POST" and request.path == "/hook"
    assert request.headers["Content-Type"] == "application/json"
    payload = orjson.loads(request.body)
    assert payload == {
        "event": COMPLETED,
        "timestamp": event.timestamp,
        # The event's data as made (every public field of the generation but its timeline), unchanged.
        "data": dict(event.data),
    }
    assert set(payload["data"]) == DATA_FIELDS

    expected_service = hmac.new(secret.encode(), request.body, hashlib.sha256).hexdigest()
    assert request.headers["X-Service-Signature"] == expected_service

    msg_id, timestamp = request.headers["webhook-id"], request.headers["webhook-timestamp"]
    assert msg_id == delivery_id
    assert timestamp == str(int(clock.now().timestamp()))
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{msg_id}.{timestamp}.".encode() + request.body
    expected_standard = "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    assert expected_standard in request.headers["webhook-signature"].split(" ")

    doc = await h.delivery(delivery_id)
    assert doc["status"] == "succeeded" and doc["next_attempt_at"] is None
    [attempt] = doc["attempts"]
    assert attempt["status_code"] == 200 and attempt["error"] is None
    assert isinstance(attempt["latency_ms"], float) and attempt["latency_ms"] >= 0
    assert attempt["at"] == clock.now()


# --- retries ------------------------------------------------------------------------------------------------


async def test_flaky_receiver_is_retried_on_schedule_with_the_same_webhook_id_until_it_succeeds(
    h: Harness, clock: ManualClock
) -> None:
    receiver = await h.receiver(failing(2, 500))
    dispatcher = await h.dispatcher(schedule="5,300")
    await h.webhook(receiver.url())
    [(delivery_id, _)] = await h.publish(dispatcher, video_event("completed", clock.now()))
    await dispatcher.wait_idle()

    doc = await h.delivery(delivery_id)
    assert doc["status"] == "pending"
    assert doc["next_attempt_at"] == doc["retry_at"] == clock.now() + seconds(5)  # counted as a retry
    assert [a["status_code"] for a in doc["attempts"]] == [500]

    assert await dispatcher.sweep() == 0  # not due yet
    await dispatcher.wait_idle()
    assert receiver.count() == 1

    clock.advance(timedelta(seconds=5))
    assert await dispatcher.sweep() == 1
    await dispatcher.wait_idle()
    assert receiver.count() == 2
    doc = await h.delivery(delivery_id)
    assert doc["status"] == "pending"
    assert doc["next_attempt_at"] == doc["retry_at"] == clock.now() + seconds(300)

    clock.advance(timedelta(seconds=299))
    assert await dispatcher.sweep() == 0
    clock.advance(timedelta(seconds=1))
    assert await dispatcher.sweep() == 1
    await dispatcher.wait_idle()

    assert receiver.count() == 3
    assert {r.headers["webhook-id"] for r in receiver.requests} == {delivery_id}
    doc = await h.delivery(delivery_id)
    assert doc["status"] == "succeeded" and doc["next_attempt_at"] is None
    assert "retry_at" not in doc  # no longer waiting for a retry
    assert [a["status_code"] for a in doc["attempts"]] == [500, 500, 200]


async def test_an_exhausted_schedule_fails_the_delivery(h: Harness, clock: ManualClock) -> None:
    receiver = await h.receiver(always(Reply(500)))
    dispatcher = await h.dispatcher(schedule="1")
    await h.webhook(receiver.url())
    [(delivery_id, _)] = await h.publish(dispatcher, video_event("failed", clock.now()))
    await dispatcher.wait_idle()
    clock.advance(timedelta(seconds=1))
    assert await dispatcher.sweep() == 1
    await dispatcher.wait_idle()

    doc = await h.delivery(delivery_id)
    assert doc["status"] == "failed" and doc["next_attempt_at"] is None
    assert "exhausted" in doc["failure_reason"]
    assert "retry_at" not in doc
    assert [a["status_code"] for a in doc["attempts"]] == [500, 500]

    clock.advance(timedelta(seconds=3600))
    assert await dispatcher.sweep() == 0
    assert receiver.count() == 2


async def test_410_gone_disables_the_endpoint_and_fails_the_delivery_without_retry(
    h: Harness, store: Store, clock: ManualClock
) -> None:
    receiver = await h.receiver(always(Reply(410)))
    dispatcher = await h.dispatcher(schedule="5,300")
    webhook_id, _ = await h.webhook(receiver.url())
    [(delivery_id, _)] = await h.publish(dispatcher, video_event("completed", clock.now()))
    await dispatcher.wait_idle()

    endpoint = await store.webhooks.find_one({"_id": webhook_id})
    assert endpoint is not None and endpoint["active"] is False
    doc = await h.delivery(delivery_id)
    assert doc["status"] == "failed" and doc["next_attempt_at"] is None
    assert "410" in doc["failure_reason"]
    assert [a["status_code"] for a in doc["attempts"]] == [410]

    clock.advance(timedelta(seconds=3600))
    assert await dispatcher.sweep() == 0
    await dispatcher.wait_idle()
    assert receiver.count() == 1
    assert await h.publish(dispatcher, video_event("completed", clock.now())) == []


async def test_a_302_redirect_is_a_failure_and_its_target_is_never_requested(
    h: Harness, clock: ManualClock
) -> None:
    target = await h.receiver(always(OK))
    redirector = await h.receiver(redirecting(target.url("/elsewhere")))
    dispatcher = await h.dispatcher(schedule="5")
    await h.webhook(redirector.url())
    [(delivery_id, _)] = await h.publish(dispatcher, video_event("completed", clock.now()))
    await dispatcher.wait_idle()

    doc = await h.delivery(delivery_id)
    assert doc["status"] == "pending"
    [attempt] = doc["attempts"]
    assert attempt["status_code"] == 302 and attempt["error"] is not None

    clock.advance(timedelta(seconds=5))
    assert await dispatcher.sweep() == 1
    await dispatcher.wait_idle()
    doc = await h.delivery(delivery_id)
    assert doc["status"] == "failed"
    assert [a["status_code"] for a in doc["attempts"]] == [302, 302]
    assert redirector.count() == 2
    assert target.count() == 0


async def test_503_retry_after_outweighs_a_shorter_scheduled_delay(h: Harness, clock: ManualClock) -> None:
    receiver = await h.receiver(unavailable("120"))
    dispatcher = await h.dispatcher(schedule="5")
    await h.webhook(receiver.url())
    [(delivery_id, _)] = await h.publish(dispatcher, video_event("completed", clock.now()))
    await dispatcher.wait_idle()

    doc = await h.delivery(delivery_id)
    assert doc["status"] == "pending"
    assert [a["status_code"] for a in doc["attempts"]] == [503]
    assert doc["next_attempt_at"] == clock.now() + seconds(120)

    clock.advance(timedelta(seconds=5))
    assert await dispatcher.sweep() == 0


async def test_a_receiver_slower_than_the_timeout_is_recorded_as_a_timeout(
    h: Harness, clock: ManualClock
) -> None:
    receiver = await h.receiver(always(HANG))
    dispatcher = await h.dispatcher(schedule="5", timeout=0.5)
    await h.webhook(receiver.url())
    [(delivery_id, _)] = await h.publish(dispatcher, video_event("completed", clock.now()))
    await dispatcher.wait_idle()

    assert receiver.count() == 1 and receiver.answered == 0
    doc = await h.delivery(delivery_id)
    assert doc["status"] == "pending"
    [attempt] = doc["attempts"]
    assert attempt["error"] == "timeout" and attempt["status_code"] is None
    assert attempt["latency_ms"] >= 400
    assert doc["next_attempt_at"] == clock.now() + seconds(5)


# --- isolation, claiming, recovery --------------------------------------------------------------------------


async def test_a_hanging_endpoint_does_not_delay_a_healthy_one(h: Harness, clock: ManualClock) -> None:
    hanging = await h.receiver(always(HANG))
    healthy = await h.receiver(always(OK))
    dispatcher = await h.dispatcher(timeout=30)
    await h.webhook(hanging.url())
    await h.webhook(healthy.url())
    count = 6
    created = [
        d for _ in range(count) for d in await h.publish(dispatcher, video_event("completed", clock.now()))
    ]
    assert len(created) == 2 * count

    await healthy.request(count, timeout=10)  # all of its deliveries, while …
    assert hanging.answered == 0  # … the other endpoint is still blocked
    assert 1 <= hanging.count() <= h.settings().endpoint_concurrency
    assert len({r.headers["webhook-id"] for r in healthy.requests}) == count

    hanging.release()
    await dispatcher.wait_idle()
    assert hanging.count() == count
    statuses = [(await h.delivery(d))["status"] for d, _ in created]
    assert statuses == ["succeeded"] * (2 * count)


async def test_two_dispatchers_sweeping_concurrently_send_each_due_delivery_once(
    h: Harness, store: Store, clock: ManualClock
) -> None:
    receiver = await h.receiver(always(OK))
    first = await h.dispatcher()
    second = await h.dispatcher(store=await h.other_store())
    await h.webhook(receiver.url())
    ids = [
        d
        for _ in range(10)
        for d, _ in await deliveries_for(store, video_event("completed", clock.now()), clock.now())
    ]

    await asyncio.gather(first.sweep(), second.sweep())
    await asyncio.gather(first.wait_idle(), second.wait_idle())

    assert sorted(r.headers["webhook-id"] for r in receiver.requests) == sorted(ids)
    for delivery_id in ids:
        doc = await h.delivery(delivery_id)
        assert doc["status"] == "succeeded" and len(doc["attempts"]) == 1


async def test_two_dispatchers_submitting_the_same_delivery_at_once_send_it_once(
    h: Harness, store: Store, clock: ManualClock
) -> None:
    receiver = await h.receiver(always(OK))
    first = await h.dispatcher()
    second = await h.dispatcher(store=await h.other_store())
    await h.webhook(receiver.url())
    [(delivery_id, webhook_id)] = await deliveries_for(
        store, video_event("completed", clock.now()), clock.now()
    )

    first.submit(delivery_id, webhook_id)
    second.submit(delivery_id, webhook_id)
    await asyncio.gather(first.wait_idle(), second.wait_idle())

    assert receiver.count() == 1
    assert len((await h.delivery(delivery_id))["attempts"]) == 1


async def test_a_delivery_a_dead_notifier_left_pending_is_sent_by_a_fresh_dispatcher_with_its_original_id(
    h: Harness, clock: ManualClock
) -> None:
    receiver = await h.receiver(replies(HANG))  # the first attempt never comes back
    dead = await h.dispatcher(timeout=30)
    await h.webhook(receiver.url())
    [(delivery_id, _)] = await h.publish(dead, video_event("completed", clock.now()))
    first = await receiver.request(1)
    await dead.stop()  # the process dies mid-attempt

    doc = await h.delivery(delivery_id)
    assert doc["status"] == "pending" and doc["attempts"] == []
    assert doc["next_attempt_at"] > clock.now()  # still claimed by the dead process …
    fresh = await h.dispatcher(timeout=30)
    assert await fresh.sweep() == 0

    clock.advance(
        timedelta(seconds=(doc["next_attempt_at"] - clock.now()).total_seconds() + 1)
    )  # … until the claim lapses
    assert doc["next_attempt_at"] < clock.now()
    assert await fresh.sweep() == 1
    await fresh.wait_idle()

    second = await receiver.request(2)
    assert first.headers["webhook-id"] == second.headers["webhook-id"] == delivery_id
    assert second.body == first.body
    doc = await h.delivery(delivery_id)
    assert doc["status"] == "succeeded"
    assert [a["status_code"] for a in doc["attempts"]] == [200]


# --- the production wiring ----------------------------------------------------------------------------------


async def test_a_hanging_endpoint_does_not_delay_a_healthy_one_on_the_same_host_in_the_runtime(
    h: Harness, clock: ManualClock
) -> None:
    receiver = await h.receiver(lambda r: HANG if r.path == "/dead" else OK)
    runtime = NotifierRuntime(h.settings(timeout=30), clock=clock)
    await runtime.start()
    try:
        await h.webhook(receiver.url("/dead"))
        await h.webhook(receiver.url("/live"))
        count = 6
        for _ in range(count):
            await h.publish(runtime.dispatcher, video_event("completed", clock.now()))
        await receiver.request(count, path="/live", timeout=20)  # well before a dead attempt's 30 s ends
        assert receiver.count("/dead") <= runtime.settings.endpoint_concurrency
    finally:
        receiver.release()
        await runtime.stop()


async def test_a_dead_endpoints_queued_deliveries_do_not_keep_the_sweep_from_other_endpoints_retries(
    h: Harness, clock: ManualClock
) -> None:
    healthy = await h.receiver(failing(1))
    dead = await h.receiver(always(HANG))
    dispatcher = await h.dispatcher(schedule="5", timeout=30, endpoint_concurrency="1", sweep_batch="2")
    await h.webhook(healthy.url(), account_id=ACCOUNT)
    await h.webhook(dead.url(), account_id="globex")
    [(healthy_delivery, _)] = await h.publish(dispatcher, video_event("completed", clock.now()))
    await dispatcher.wait_idle()
    assert (await h.delivery(healthy_delivery))["next_attempt_at"] == clock.now() + seconds(5)

    for _ in range(3):  # one in flight to the dead endpoint, two waiting in its lane
        await h.publish(dispatcher, video_event("completed", clock.now(), account_id="globex"))
    await dead.request(1)

    clock.advance(timedelta(seconds=5))
    await dispatcher.sweep()
    # The healthy endpoint's retry is due, and sent: well before the dead endpoint's attempt (30 s) ends.
    await healthy.request(2, timeout=20)
