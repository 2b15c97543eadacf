"""How the notifier guards our network from endpoints and endpoints from itself, against the real MongoDB and
real receivers on 127.0.0.1: the destination guard in the session the runtime builds, the per-endpoint
circuit breaker, endpoint health on the webhook document, and disabling an endpoint that only ever fails,
with its ``webhook.disabled`` event.

Time is a ManualClock and jitter is off, so schedules are exact; tests wait on receiver events, not sleeps."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import pytest

from tests.integration.test_notifier_deliveries import video_event
from tests.support.env import settings_for
from tests.support.fakes import ManualClock
from tests.support.notifier import NotifierHarness
from tests.support.receivers import OK, Reply, always, replies
from tests.support.webhooks import insert_webhook
from videogen_common.clock import isoformat, to_millis
from videogen_common.destinations.guarded_http import guarded_session
from videogen_common.disabling import disable_endpoint
from videogen_common.records.event import Event
from videogen_common.records.webhook import WebhookEndpoint
from videogen_common.repositories.outbox import OutboxRepository
from videogen_common.settings import load_settings
from videogen_common.signing import service_signature
from videogen_common.store import Store
from videogen_notifier.dispatcher import Dispatcher
from videogen_notifier.runtime import USER_AGENT, NotifierRuntime
from videogen_notifier.settings import NotifierSettings

Doc = dict[str, Any]
ACCOUNT = "acme"
COMPLETED = "video.completed"
LOOPBACK = "127.0.0.0/8"
FIVE_DAYS = timedelta(days=5)
WEBHOOK_DISABLED = "webhook.disabled"


def disabled_event_id(webhook_id: str, disabled_at: datetime) -> str:
    """One event per disable: its id is derived from the endpoint and the moment."""
    return f"evt_{webhook_id}_disabled_{to_millis(disabled_at)}"


def seconds(n: float) -> timedelta:
    return timedelta(seconds=n)


class Harness(NotifierHarness):
    def settings(self, **overrides: Any) -> NotifierSettings:
        """Loopback is allow-listed unless ``webhook_allow_cidrs`` says otherwise; retries "5,300"."""
        values = {"webhook_allow_cidrs": LOOPBACK, "webhook_retry_schedule": "5,300", **overrides}
        return settings_for(NotifierSettings, self.base_env, **values)

    async def dispatcher(self, **overrides: Any) -> Dispatcher:
        """A Dispatcher sending through the guarded session, exactly as the runtime builds it."""
        settings = self.settings(**overrides)
        return self.dispatcher_with(settings, guarded_session(settings.webhook_networks, USER_AGENT))

    async def webhook(
        self,
        url: str,
        *,
        account_id: str = ACCOUNT,
        events: Sequence[str] = (COMPLETED,),
        active: bool = True,
        **fields: Any,
    ) -> tuple[str, str]:
        return await insert_webhook(
            self.store,
            url,
            now=self.clock.now(),
            account_id=account_id,
            events=events,
            active=active,
            **fields,
        )

    async def publish(self, dispatcher: Dispatcher, account_id: str = ACCOUNT) -> list[str]:
        """A video.completed status event, as the notifier's agent handles it; returns the delivery ids."""
        envelope = video_event("completed", self.clock.now(), account_id=account_id)
        return [d for d, _ in await self.handle(dispatcher, envelope)]


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(datetime.now(UTC))


@pytest.fixture
async def h(base_env: dict[str, str], store: Store, clock: ManualClock) -> AsyncIterator[Harness]:
    async with AsyncExitStack() as stack:
        yield Harness(base_env, store, clock, stack)


# --- the destination guard ----------------------------------------------------------------------------------


async def test_a_delivery_to_loopback_not_allow_listed_is_refused_and_failed_without_retry(
    h: Harness, clock: ManualClock
) -> None:
    receiver = await h.receiver(always(OK))
    dispatcher = await h.dispatcher(webhook_allow_cidrs="")
    await h.webhook(receiver.url())
    [delivery_id] = await h.publish(dispatcher)
    await dispatcher.wait_idle()

    doc = await h.delivery(delivery_id)
    assert doc["status"] == "failed" and doc["next_attempt_at"] is None
    [attempt] = doc["attempts"]
    assert attempt["error"] == "destination address not allowed: 127.0.0.1"
    assert attempt["status_code"] is None
    assert doc["failure_reason"] == "destination address not allowed: 127.0.0.1; not retried"

    clock.advance(seconds(3600))
    assert await dispatcher.sweep() == 0
    assert receiver.count() == 0


async def test_a_delivery_to_loopback_is_sent_when_loopback_is_allow_listed(h: Harness) -> None:
    receiver = await h.receiver(always(OK))
    dispatcher = await h.dispatcher(webhook_allow_cidrs=LOOPBACK)
    await h.webhook(receiver.url())
    [delivery_id] = await h.publish(dispatcher)
    await dispatcher.wait_idle()

    assert (await receiver.request(1)).headers["webhook-id"] == delivery_id
    doc = await h.delivery(delivery_id)
    assert doc["status"] == "succeeded"
    assert [a["status_code"] for a in doc["attempts"]] == [200]


async def test_the_runtime_refuses_a_destination_its_allow_list_does_not_open(
    h: Harness, clock: ManualClock
) -> None:
    receiver = await h.receiver(always(OK))
    runtime = NotifierRuntime(h.settings(webhook_allow_cidrs="10.0.0.0/8"), clock=clock)
    await runtime.start()
    try:
        await h.webhook(receiver.url())
        [delivery_id] = await h.publish(runtime.dispatcher)
        await runtime.dispatcher.wait_idle()
    finally:
        await runtime.stop()

    doc = await h.delivery(delivery_id)
    assert doc["status"] == "failed"
    assert [a["error"] for a in doc["attempts"]] == ["destination address not allowed: 127.0.0.1"]
    assert receiver.count() == 0


# --- the circuit breaker ------------------------------------------------------------------------------------


async def test_after_breaker_failures_in_a_row_the_lane_pauses_for_the_cooldown_and_loses_nothing(
    h: Harness, store: Store, clock: ManualClock
) -> None:
    receiver = await h.receiver(replies(*[Reply(500)] * 3))
    dispatcher = await h.dispatcher(
        breaker_failures=3,
        breaker_cooldown_seconds=30,
        webhook_retry_schedule="1,1,1",
        endpoint_concurrency=1,  # one attempt at a time, so exactly three are sent before the breaker opens
    )
    webhook_id, _ = await h.webhook(receiver.url())
    tripped_at = clock.now()
    ids = [d for _ in range(5) for d in await h.publish(dispatcher)]
    await dispatcher.wait_idle()

    assert receiver.count() == 3
    docs = [await h.delivery(d) for d in ids]
    assert [len(d["attempts"]) for d in docs] == [1, 1, 1, 0, 0]
    assert [d["status"] for d in docs] == ["pending"] * 5
    # The first two retries are due on their schedule; the third, whose failure opened the breaker, when the
    # cooldown ends; the last two the lane keeps (this instance created them claimed, for 60 s by default).
    # The paused lane sends none of them before the cooldown ends.
    held_until = tripped_at + seconds(60)
    assert [d["next_attempt_at"] for d in docs] == [
        tripped_at + seconds(1),
        tripped_at + seconds(1),
        tripped_at + seconds(30),
        held_until,
        held_until,
    ]

    clock.advance(seconds(1))  # the first two retries fall due while the breaker is open
    assert await dispatcher.sweep() == 0
    await dispatcher.wait_idle()
    assert receiver.count() == 3
    docs = [await h.delivery(d) for d in ids]
    assert [len(d["attempts"]) for d in docs] == [1, 1, 1, 0, 0]

    clock.set(tripped_at + seconds(29.999))
    assert await dispatcher.sweep() == 0
    clock.set(tripped_at + seconds(30))
    assert await dispatcher.sweep() == 0  # the lane goes on with the two it kept ...
    await dispatcher.wait_idle()
    assert receiver.count() == 5
    assert await dispatcher.sweep() == 3  # ... then takes the three retries
    await dispatcher.wait_idle()

    assert receiver.count() == 8
    docs = [await h.delivery(d) for d in ids]
    assert [d["status"] for d in docs] == ["succeeded"] * 5
    assert [[a["status_code"] for a in d["attempts"]] for d in docs] == [[500, 200]] * 3 + [[200]] * 2
    assert sorted(r.headers["webhook-id"] for r in receiver.requests[3:]) == sorted(ids)
    health = (await h.endpoint(webhook_id))["health"]
    assert health["consecutive_failures"] == 0 and health["failing_since"] is None


async def test_the_breaker_is_per_endpoint_so_a_failing_endpoint_never_pauses_a_healthy_one(
    h: Harness, clock: ManualClock
) -> None:
    failing = await h.receiver(always(Reply(500)))
    healthy = await h.receiver(always(OK))
    dispatcher = await h.dispatcher(breaker_failures=2, endpoint_concurrency=1)
    failing_id, _ = await h.webhook(failing.url())
    healthy_id, _ = await h.webhook(healthy.url())
    for _ in range(4):
        await h.publish(dispatcher)
    await dispatcher.wait_idle()

    assert failing.count() == 2
    assert healthy.count() == 4
    assert (await h.endpoint(failing_id))["health"]["consecutive_failures"] == 2
    assert (await h.endpoint(healthy_id))["health"]["consecutive_failures"] == 0


async def test_endpoint_health_is_persisted_on_the_webhook_and_a_success_resets_it(
    h: Harness, clock: ManualClock
) -> None:
    receiver = await h.receiver(replies(Reply(500), Reply(503)))
    dispatcher = await h.dispatcher(webhook_retry_schedule="5,300")
    webhook_id, _ = await h.webhook(receiver.url())
    first_failure = clock.now()
    [delivery_id] = await h.publish(dispatcher)
    await dispatcher.wait_idle()
    assert (await h.endpoint(webhook_id))["health"] == {
        "consecutive_failures": 1,
        "failing_since": first_failure,
        "last_failure_at": first_failure,
    }

    clock.advance(seconds(5))
    await dispatcher.sweep()
    await dispatcher.wait_idle()
    assert (await h.endpoint(webhook_id))["health"] == {
        "consecutive_failures": 2,
        "failing_since": first_failure,
        "last_failure_at": clock.now(),
    }

    last_failure = clock.now()
    clock.advance(seconds(300))
    await dispatcher.sweep()
    await dispatcher.wait_idle()
    assert (await h.delivery(delivery_id))["status"] == "succeeded"
    assert (await h.endpoint(webhook_id))["health"] == {
        "consecutive_failures": 0,
        "failing_since": None,
        "last_success_at": clock.now(),
        "last_failure_at": last_failure,
    }


# --- disabling, and the webhook.disabled event --------------------------------------------------------------


async def test_an_endpoint_failing_for_longer_than_disable_after_is_disabled_with_a_notice_and_deliveries(
    h: Harness, store: Store, clock: ManualClock
) -> None:
    receiver = await h.receiver(lambda r: Reply(500) if r.path == "/dying" else OK)
    dispatcher = await h.dispatcher(webhook_retry_schedule="5")
    dying, _ = await h.webhook(receiver.url("/dying"))
    watcher, watcher_secret = await h.webhook(receiver.url("/watcher"), events=[WEBHOOK_DISABLED])
    await h.webhook(receiver.url("/other-account"), account_id="globex", events=[WEBHOOK_DISABLED])
    await h.webhook(receiver.url("/inactive"), events=[WEBHOOK_DISABLED], active=False)
    await h.webhook(receiver.url("/not-subscribed"), events=["video.failed"])
    started = clock.now()

    [first] = await h.publish(dispatcher)
    await dispatcher.wait_idle()
    clock.set(started + FIVE_DAYS - seconds(1))
    [second] = await h.publish(dispatcher)
    await dispatcher.wait_idle()
    assert (await h.endpoint(dying))["active"] is True  # four days, 23:59:59 of nothing but failures

    clock.set(started + FIVE_DAYS)
    [third] = await h.publish(dispatcher)
    await dispatcher.wait_idle()

    endpoint = await h.endpoint(dying)
    assert endpoint["active"] is False
    assert endpoint["disabled_at"] == clock.now()
    assert endpoint["disabled_reason"] == f"every attempt failed for 5.0 days (since {isoformat(started)})"
    doc = await h.delivery(third)
    assert doc["status"] == "failed"
    assert doc["failure_reason"] == f"endpoint disabled: {endpoint['disabled_reason']}"

    event_id = disabled_event_id(dying, clock.now())
    # The event, carried by the disable's write, recorded once the notifier took it in (it made its
    # deliveries), and owed no more.
    assert [Event.from_doc(d) async for d in store.events.find({"type": WEBHOOK_DISABLED})] == [
        Event(
            id=event_id,
            type=WEBHOOK_DISABLED,
            account_id=ACCOUNT,
            subject_type="webhook",
            subject_id=dying,
            data={
                "id": dying,
                "url": receiver.url("/dying"),
                "reason": endpoint["disabled_reason"],
                "disabled_at": isoformat(clock.now()),
            },
            created_at=clock.now(),
        )
    ]
    [notice_delivery] = await store.deliveries.find({"event_id": event_id}).to_list(None)
    assert notice_delivery["webhook_id"] == watcher and notice_delivery["status"] == "succeeded"
    request = await receiver.request(1, path="/watcher")
    assert request.headers["webhook-id"] == notice_delivery["_id"]
    assert request.headers["X-Service-Signature"] == service_signature(watcher_secret, request.body)
    assert orjson.loads(request.body) == {
        "event": WEBHOOK_DISABLED,
        "timestamp": isoformat(clock.now()),
        "data": {
            "id": dying,
            "url": receiver.url("/dying"),
            "reason": endpoint["disabled_reason"],
            "disabled_at": isoformat(clock.now()),
        },
    }
    assert [receiver.count(p) for p in ("/other-account", "/inactive", "/not-subscribed")] == [0, 0, 0]

    # The retries still scheduled for the disabled endpoint end without another request to it.
    clock.advance(seconds(5))
    await dispatcher.sweep()
    await dispatcher.wait_idle()
    for delivery_id in (first, second):
        doc = await h.delivery(delivery_id)
        assert doc["status"] == "failed" and doc["failure_reason"] == "endpoint disabled"
    assert receiver.count("/dying") == 3  # the first attempts of first, second and third
    assert receiver.count("/watcher") == 1


async def test_a_success_within_the_window_restarts_the_count_so_the_endpoint_stays_active(
    h: Harness, clock: ManualClock
) -> None:
    receiver = await h.receiver(replies(Reply(500), OK, Reply(500), Reply(500)))
    dispatcher = await h.dispatcher()
    webhook_id, _ = await h.webhook(receiver.url())
    started = clock.now()
    for at in (timedelta(0), timedelta(days=1), FIVE_DAYS, FIVE_DAYS + timedelta(days=1)):
        clock.set(started + at)
        await h.publish(dispatcher)
        await dispatcher.wait_idle()

    endpoint = await h.endpoint(webhook_id)
    assert receiver.count() == 4
    assert endpoint["active"] is True
    assert endpoint["health"]["failing_since"] == started + FIVE_DAYS
    assert endpoint["health"]["consecutive_failures"] == 2


async def test_410_gone_also_records_a_webhook_disabled_event(h: Harness, store: Store) -> None:
    receiver = await h.receiver(lambda r: Reply(410) if r.path == "/gone" else OK)
    dispatcher = await h.dispatcher()
    gone, _ = await h.webhook(receiver.url("/gone"))
    await h.webhook(receiver.url("/watcher"), events=[WEBHOOK_DISABLED])
    await h.publish(dispatcher)
    await dispatcher.wait_idle()

    [event] = [Event.from_doc(d) async for d in store.events.find({"type": WEBHOOK_DISABLED})]
    assert event.subject_id == gone and event.data["reason"] == "endpoint answered 410 Gone"
    request = await receiver.request(1, path="/watcher")
    assert orjson.loads(request.body)["data"]["reason"] == "endpoint answered 410 Gone"


async def test_a_disable_whose_event_was_not_taken_in_is_delivered_once_when_it_is_republished(
    h: Harness, store: Store, clock: ManualClock
) -> None:
    """A notifier that died right after its disable leaves the event owed, in the endpoint's outbox; the
    orchestrator's reconciler puts it on the events topic again, maybe more than once, and it is delivered
    once."""
    receiver = await h.receiver(always(OK))
    dispatcher = await h.dispatcher()
    dead, _ = await h.webhook(receiver.url("/dead"))
    watcher, _ = await h.webhook(receiver.url("/watcher"), events=[WEBHOOK_DISABLED])
    endpoint = WebhookEndpoint.from_doc(await h.endpoint(dead))
    disabled_at = clock.now()

    event = await disable_endpoint(store, endpoint, "endpoint answered 410 Gone", disabled_at)
    assert event is not None and event.id == disabled_event_id(dead, disabled_at)
    assert await disable_endpoint(store, endpoint, "again", disabled_at) is None  # disabled once
    assert (await h.endpoint(dead))["active"] is False
    assert await store.audit_events.count_documents({"target.id": dead}) == 1  # right after the disable
    outbox = OutboxRepository(store)
    [owed] = [e async for e in outbox.due(clock.now() + seconds(10), limit=10)]
    assert owed == event and owed.source == "webhooks"

    # Republished twice (the broker took the first, the reconciler had not yet seen it settled).
    await dispatcher.take_in([owed])
    await dispatcher.take_in([owed])
    await dispatcher.wait_idle()

    [delivery] = await store.deliveries.find({"event_id": event.id}).to_list(None)
    assert delivery["webhook_id"] == watcher and delivery["status"] == "succeeded"
    assert receiver.count("/watcher") == 1
    assert [e async for e in outbox.due(clock.now() + seconds(10), limit=10)] == []
    assert await store.events.count_documents({"_id": event.id}) == 1


def test_breaker_and_disable_settings_default_to_five_failures_thirty_seconds_and_five_days(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in list(os.environ):
        if name.startswith("VIDEOGEN_"):
            monkeypatch.delenv(name)
    settings = load_settings(NotifierSettings)
    assert settings.breaker_failures == 5
    assert settings.breaker_cooldown_seconds == 30.0
    assert settings.webhook_disable_after_seconds == FIVE_DAYS.total_seconds()
    monkeypatch.setenv("VIDEOGEN_BREAKER_FAILURES", "2")
    monkeypatch.setenv("VIDEOGEN_BREAKER_COOLDOWN_SECONDS", "1.5")
    monkeypatch.setenv("VIDEOGEN_WEBHOOK_DISABLE_AFTER_SECONDS", "3600")
    settings = load_settings(NotifierSettings)
    assert (settings.breaker_failures, settings.breaker_cooldown_seconds) == (2, 1.5)
    assert settings.webhook_disable_after_seconds == 3600.0
