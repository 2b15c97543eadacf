"""The notifier's lanes against the real store, the real api and real receivers on 127.0.0.1.

A batch of status events makes its deliveries in one insert, idempotently. A delivery made while its lane has
room is stored claimed by the instance that made it, so its first attempt needs no claim of its own; one
whose claim ran short while it waited is claimed again, or left to the instance that took it; stopping hands
back what was not begun. Each lane reads its endpoint once per ``endpoint_cache_seconds``: a PATCH, a secret
rotation or a deletion made through the api reaches deliveries once that long has passed (at once with 0),
and the lane's own writes (a disable) apply at once.

Time is one ManualClock shared by the api and the dispatchers, so claim and cache periods are crossed without
waiting; tests wait on receiver events, never sleep."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack
from datetime import UTC, datetime, timedelta
from typing import Any

import aiohttp
import orjson
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from tests.integration.test_notifier_deliveries import video_event
from tests.support.api import api_client, bearer
from tests.support.env import settings_for
from tests.support.fakes import ManualClock
from tests.support.generations import insert_generation, stored_generation
from tests.support.notifier import NotifierHarness
from tests.support.receivers import HANG, OK, Received, Reply, always, replies
from tests.support.webhooks import insert_webhook
from videogen_api.settings import ApiSettings
from videogen_common.events import event_message
from videogen_common.records.delivery import Delivery
from videogen_common.repositories.outbox import OutboxRepository
from videogen_common.signing import service_signature
from videogen_common.store import Store
from videogen_notifier.deliveries import insert_new, new_deliveries, new_deliveries_for
from videogen_notifier.dispatcher import Dispatcher
from videogen_notifier.intake import parse, take_in
from videogen_notifier.settings import NotifierSettings

Client = TestClient[web.Request, web.Application]
Doc = dict[str, Any]
ACCOUNT = "acme"  # the account of the ``key`` fixture
COMPLETED, FAILED = "video.completed", "video.failed"
# An attempt's deadline, long enough that a hanging receiver's request is not cut short (and retried) on a
# loaded machine while a test is still looking at it.
TIMEOUT = 30.0
HOLD = timedelta(seconds=60)  # how long a delivery a dispatcher creates stays claimed by it (the default)


def seconds(n: float) -> timedelta:
    return timedelta(seconds=n)


class Lanes(NotifierHarness):
    async def dispatcher(self, *, store: Store | None = None, **overrides: Any) -> Dispatcher:
        values = {
            "webhook_retry_schedule": "5,300",
            "delivery_timeout_seconds": TIMEOUT,
            **overrides,
        }
        settings = settings_for(NotifierSettings, self.base_env, **values)
        return self.dispatcher_with(settings, aiohttp.ClientSession(), store=store)

    async def webhook(
        self, url: str, *, account_id: str = ACCOUNT, events: Sequence[str] = (COMPLETED,)
    ) -> str:
        webhook_id, _ = await insert_webhook(
            self.store, url, now=self.clock.now(), account_id=account_id, events=events
        )
        return webhook_id

    async def publish(self, dispatcher: Dispatcher, account_id: str = ACCOUNT) -> list[str]:
        """A video.completed event, as the notifier's agent handles it; returns the delivery ids."""
        event = video_event("completed", self.clock.now(), account_id=account_id)
        return [delivery_id for delivery_id, _ in await self.handle(dispatcher, event)]


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(datetime.now(UTC))


@pytest.fixture
async def h(base_env: dict[str, str], store: Store, clock: ManualClock) -> AsyncIterator[Lanes]:
    async with AsyncExitStack() as stack:
        yield Lanes(base_env, store, clock, stack)


@pytest.fixture
async def api(api_settings: ApiSettings, store: Store, clock: ManualClock) -> AsyncIterator[Client]:
    """The api on the test's clock."""
    async with api_client(api_settings, clock) as client:
        yield client


async def create_hook(api: Client, key: str, url: str) -> tuple[str, str]:
    response = await api.post("/v1/webhooks", json={"url": url, "events": [COMPLETED]}, headers=bearer(key))
    assert response.status == 201, await response.text()
    body = await response.json()
    return body["id"], body["secret"]


# --- creating deliveries in batches -------------------------------------------------------------------------


async def test_a_batch_of_events_makes_every_delivery_it_calls_for_and_a_repeated_event_none(
    h: Lanes, store: Store, clock: ManualClock
) -> None:
    both = await h.webhook("http://127.0.0.1:9/both", events=[COMPLETED, FAILED])
    completed = await h.webhook("http://127.0.0.1:9/completed", events=[COMPLETED])
    globex = await h.webhook("http://127.0.0.1:9/globex", account_id="globex", events=[FAILED])
    now = clock.now()
    first = video_event("completed", now)
    others = [
        video_event("completed", now, account_id="globex"),  # its endpoint wants video.failed only
        video_event("processing", now),  # nobody listed video.processing
        video_event("failed", now, account_id="globex"),
    ]
    made = await insert_new(store, await new_deliveries_for(store, [first, *others], now))
    assert sorted((d.event_id, d.webhook_id) for d in made) == sorted(
        [(first.id, both), (first.id, completed), (others[2].id, globex)]
    )

    # The first event again (Kafka redelivered it), in a batch with a new one: only the new one's are made.
    new = video_event("completed", now)
    again = await insert_new(store, await new_deliveries_for(store, [first, new, new], now))
    assert sorted((d.event_id, d.webhook_id) for d in again) == sorted([(new.id, both), (new.id, completed)])
    assert await insert_new(store, await new_deliveries_for(store, [first, new], now)) == []
    assert await store.deliveries.count_documents({}) == 5


async def test_a_repeated_event_is_sent_once(h: Lanes, store: Store, clock: ManualClock) -> None:
    receiver = await h.receiver(always(OK))
    dispatcher = await h.dispatcher()
    await h.webhook(receiver.url())
    event = video_event("completed", clock.now())
    [(delivery_id, _)] = await dispatcher.create(await new_deliveries(store, event, clock.now()))
    await dispatcher.wait_idle()
    assert await dispatcher.create(await new_deliveries(store, event, clock.now())) == []
    await dispatcher.wait_idle()

    assert [r.headers["webhook-id"] for r in receiver.requests] == [delivery_id]
    assert [a["status_code"] for a in (await h.delivery(delivery_id))["attempts"]] == [200]


async def test_an_event_twice_in_one_batch_is_sent_once_and_holds_its_lane_room_once(
    h: Lanes, store: Store, clock: ManualClock
) -> None:
    receiver = await h.receiver(always(OK))
    dispatcher = await h.dispatcher()
    await h.webhook(receiver.url())
    event = video_event("completed", clock.now())  # republished at once, so both are in one batch

    [(delivery_id, _)] = await take_in(dispatcher, [event, event])
    await dispatcher.wait_idle()
    assert [r.headers["webhook-id"] for r in receiver.requests] == [delivery_id]
    assert dispatcher.in_flight == 0  # nothing left counted against the queue limit


async def test_the_agents_batch_skips_a_malformed_message_and_sends_the_others_deliveries(
    h: Lanes, store: Store, clock: ManualClock
) -> None:
    receiver = await h.receiver(always(OK))
    dispatcher = await h.dispatcher()
    await h.webhook(receiver.url(), events=[COMPLETED, FAILED])
    good = [video_event("completed", clock.now()), video_event("failed", clock.now())]
    no_subject = orjson.loads(event_message(video_event("completed", clock.now())))
    del no_subject["subject"]
    raws = [
        event_message(good[0]),
        b'{"id": 3}',
        b"not json",
        orjson.dumps(no_subject),
        event_message(good[1]),
    ]
    events = parse(raws)
    assert [e.id for e in events] == [e.id for e in good]

    created = await take_in(dispatcher, events)
    await dispatcher.wait_idle()
    assert sorted(r.headers["webhook-id"] for r in receiver.requests) == sorted(d for d, _ in created)
    assert len(created) == 2


async def test_taking_in_a_batch_records_and_settles_its_owed_events_and_no_other(
    h: Lanes, store: Store, clock: ManualClock
) -> None:
    """An owed event is owed, in its generation's outbox, until the notifier has recorded it and its
    deliveries: then, and only for the events of the batch, it leaves the outbox (a best-effort event is never
    recorded, and owes nothing)."""
    receiver = await h.receiver(always(OK))
    dispatcher = await h.dispatcher()
    await h.webhook(receiver.url(), events=[COMPLETED])
    completed, processing, other = (
        video_event(s, clock.now()) for s in ("completed", "processing", "failed")
    )
    for event, status in ((completed, "completed"), (processing, "processing"), (other, "failed")):
        owes: dict[str, Any] = {"outbox": [event.to_doc()], "outbox_at": clock.now()} if event.owed else {}
        await insert_generation(
            store, clock.now(), account_id=ACCOUNT, generation_id=event.subject_id, status=status, **owes
        )

    created = await take_in(dispatcher, [completed, processing])
    await dispatcher.wait_idle()

    assert [w for _, w in created] and await store.deliveries.count_documents({}) == 1
    later = clock.now() + timedelta(hours=1)
    assert [e.id async for e in OutboxRepository(store).due(later, limit=10)] == [other.id]
    settled = await stored_generation(store, completed.subject_id)
    assert "outbox" not in settled and "outbox_at" not in settled
    assert [d["_id"] async for d in store.events.find({})] == [completed.id]  # recorded; not the notice


# --- created claimed ----------------------------------------------------------------------------------------


async def test_a_delivery_made_with_room_in_its_lane_is_stored_claimed_and_no_other_instance_takes_it(
    h: Lanes, clock: ManualClock
) -> None:
    receiver = await h.receiver(always(HANG))
    dispatcher = await h.dispatcher()
    other = await h.dispatcher(store=await h.other_store())
    await h.webhook(receiver.url())
    [delivery_id] = await h.publish(dispatcher)

    doc = await h.delivery(delivery_id)
    assert doc["next_attempt_at"] == clock.now() + HOLD and doc["claim"]
    assert (await receiver.request(1)).headers["webhook-id"] == delivery_id
    assert await other.sweep() == 0
    clock.advance(HOLD - seconds(0.001))
    assert await other.sweep() == 0
    receiver.release()
    await dispatcher.wait_idle()
    assert receiver.count() == 1
    assert (await h.delivery(delivery_id))["status"] == "succeeded"


async def test_a_delivery_made_for_a_paused_lane_is_kept_and_sent_when_the_cooldown_ends(
    h: Lanes, clock: ManualClock
) -> None:
    receiver = await h.receiver(replies(Reply(500)))
    dispatcher = await h.dispatcher(breaker_failures=1, breaker_cooldown_seconds=30)
    await h.webhook(receiver.url())
    failed_at = clock.now()
    [first] = await h.publish(dispatcher)
    await dispatcher.wait_idle()  # one failure: the breaker is open for 30 s
    clock.advance(seconds(1))
    [second] = await h.publish(dispatcher)
    await dispatcher.wait_idle()
    assert receiver.count() == 1
    assert (await h.delivery(first))["next_attempt_at"] == failed_at + seconds(30)  # not its 5 s retry
    assert (await h.delivery(second))["next_attempt_at"] == clock.now() + HOLD  # held by the lane

    clock.set(failed_at + seconds(30))
    assert await dispatcher.sweep() == 1  # the retry; the lane goes on with the one it kept
    await dispatcher.wait_idle()
    assert sorted(r.headers["webhook-id"] for r in receiver.requests[1:]) == sorted([first, second])
    assert [(await h.delivery(d))["status"] for d in (first, second)] == ["succeeded"] * 2


async def test_a_delivery_for_a_full_lane_is_stored_due_now_or_when_its_breaker_closes(
    h: Lanes, clock: ManualClock
) -> None:
    hanging = await h.receiver(always(HANG))
    failing = await h.receiver(replies(Reply(500)))
    settings: dict[str, Any] = {"endpoint_concurrency": 1, "endpoint_queue_limit": 1}
    dispatcher = await h.dispatcher(**settings, breaker_failures=1, breaker_cooldown_seconds=30)
    await h.webhook(failing.url(), account_id="broken")
    await h.webhook(hanging.url(), account_id="full")

    failed_at = clock.now()
    await h.publish(dispatcher, "broken")
    await dispatcher.wait_idle()  # its breaker is open for 30 s, and its lane is empty
    await h.publish(dispatcher, "broken")  # the lane keeps this one: it is full now
    [later] = await h.publish(dispatcher, "broken")
    doc = await h.delivery(later)
    assert doc["next_attempt_at"] == failed_at + seconds(30) and "claim" not in doc

    [held] = await h.publish(dispatcher, "full")
    await hanging.request(1)
    [waiting] = await h.publish(dispatcher, "full")
    assert (await h.delivery(held))["next_attempt_at"] == clock.now() + HOLD
    doc = await h.delivery(waiting)
    assert doc["next_attempt_at"] == clock.now() and "claim" not in doc  # for the sweeper, once there is room
    hanging.release()
    await dispatcher.wait_idle()
    assert await dispatcher.sweep() == 1
    await dispatcher.wait_idle()
    assert hanging.count() == 2 and failing.count() == 1
    assert [(await h.delivery(d))["status"] for d in (held, waiting)] == ["succeeded"] * 2


async def test_a_lane_sends_up_to_its_concurrency_at_once_and_no_more(h: Lanes, clock: ManualClock) -> None:
    receiver = await h.receiver(always(HANG))
    dispatcher = await h.dispatcher(endpoint_concurrency=3)
    await h.webhook(receiver.url())
    ids = [d for _ in range(3) for d in await h.publish(dispatcher)]
    await receiver.request(3)  # three at once, none of them answered
    ids += [d for _ in range(2) for d in await h.publish(dispatcher)]
    assert receiver.count() == 3 and receiver.answered == 0  # the other two wait in the lane
    receiver.release()
    await dispatcher.wait_idle()
    assert sorted(r.headers["webhook-id"] for r in receiver.requests) == sorted(ids)


async def test_a_made_delivery_whose_claim_ran_short_while_it_waited_is_claimed_again_and_sent_once(
    h: Lanes, clock: ManualClock
) -> None:
    receiver = await h.receiver(replies(HANG))
    dispatcher = await h.dispatcher(endpoint_concurrency=1)
    await h.webhook(receiver.url())
    [first] = await h.publish(dispatcher)
    await receiver.request(1)
    [second] = await h.publish(dispatcher)  # queued behind the first
    # Less than an attempt's deadline plus 5 s is left of its claim: it is extended before it is sent.
    clock.advance(HOLD - seconds(TIMEOUT + 5) + seconds(0.001))
    receiver.release()
    await dispatcher.wait_idle()

    assert [r.headers["webhook-id"] for r in receiver.requests] == [first, second]
    assert [a["status_code"] for a in (await h.delivery(second))["attempts"]] == [200]


async def test_a_made_delivery_another_instance_took_after_its_claim_ended_is_not_sent_again(
    h: Lanes, clock: ManualClock
) -> None:
    receiver = await h.receiver(replies(HANG))
    dispatcher = await h.dispatcher(endpoint_concurrency=1)
    other = await h.dispatcher(store=await h.other_store())
    webhook_id = await h.webhook(receiver.url())
    [first] = await h.publish(dispatcher)
    await receiver.request(1)
    [second] = await h.publish(dispatcher)  # queued behind the first, claimed until HOLD from now
    clock.advance(HOLD)
    assert other.submit(second, webhook_id)  # its claim has ended: another instance claims it and sends it
    await other.wait_idle()
    receiver.release()
    await dispatcher.wait_idle()  # the first instance finds it claimed by the other one, and leaves it

    assert sorted(r.headers["webhook-id"] for r in receiver.requests) == sorted([first, second])
    assert [a["status_code"] for a in (await h.delivery(second))["attempts"]] == [200]


async def test_stop_hands_back_the_made_deliveries_not_begun_and_leaves_the_cut_short_attempt_claimed(
    h: Lanes, clock: ManualClock
) -> None:
    receiver = await h.receiver(always(HANG))
    dispatcher = await h.dispatcher(endpoint_concurrency=1)
    await h.webhook(receiver.url())
    ids = [d for _ in range(3) for d in await h.publish(dispatcher)]
    await receiver.request(1)
    await dispatcher.stop()

    docs = [await h.delivery(d) for d in ids]
    assert [d["next_attempt_at"] for d in docs] == [clock.now() + HOLD, clock.now(), clock.now()]
    assert [d["attempts"] for d in docs] == [[], [], []]
    fresh = await h.dispatcher()
    assert await fresh.sweep() == 2


async def test_a_swept_delivery_is_claimed_only_if_its_attempts_are_still_the_ones_read(
    h: Lanes, store: Store, clock: ManualClock
) -> None:
    receiver = await h.receiver(replies(Reply(500)))
    dispatcher = await h.dispatcher()
    webhook_id = await h.webhook(receiver.url())
    [delivery_id] = await h.publish(dispatcher)
    await dispatcher.wait_idle()
    # As read before its attempt was recorded.
    stale = Delivery.from_doc({**await h.delivery(delivery_id), "attempts": []})
    clock.advance(seconds(5))  # its retry is due

    assert dispatcher.submit(delivery_id, webhook_id, stale)
    await dispatcher.wait_idle()
    assert receiver.count() == 1  # the known document is not the stored one: no claim, no attempt
    assert await dispatcher.sweep() == 1  # read afresh, it is
    await dispatcher.wait_idle()
    assert [a["status_code"] for a in (await h.delivery(delivery_id))["attempts"]] == [500, 200]


# --- the lane's copy of its endpoint ------------------------------------------------------------------------


async def test_a_url_changed_by_patch_is_used_once_the_lanes_copy_is_a_cache_period_old(
    h: Lanes, api: Client, key: str, clock: ManualClock
) -> None:
    before = await h.receiver(replies(HANG))  # the first request holds a slot, so the lane and its copy stay
    after = await h.receiver(always(OK))
    dispatcher = await h.dispatcher(endpoint_concurrency=2)
    hook, _ = await create_hook(api, key, before.url())
    await h.publish(dispatcher)
    await before.request(1)

    patched = await api.patch(f"/v1/webhooks/{hook}", json={"url": after.url()}, headers=bearer(key))
    assert patched.status == 200
    [within] = await h.publish(dispatcher)  # the copy read before the PATCH is still used (at most 1 s)
    assert (await before.request(2)).headers["webhook-id"] == within
    clock.advance(seconds(1))  # endpoint_cache_seconds, by default
    [later] = await h.publish(dispatcher)
    assert (await after.request(1)).headers["webhook-id"] == later
    assert before.count() == 2 and after.count() == 1
    before.release()


async def test_a_url_changed_by_patch_is_used_at_once_with_no_cache(h: Lanes, api: Client, key: str) -> None:
    before = await h.receiver(replies(HANG))
    after = await h.receiver(always(OK))
    dispatcher = await h.dispatcher(endpoint_concurrency=2, endpoint_cache_seconds=0)
    hook, _ = await create_hook(api, key, before.url())
    await h.publish(dispatcher)
    await before.request(1)

    patched = await api.patch(f"/v1/webhooks/{hook}", json={"url": after.url()}, headers=bearer(key))
    assert patched.status == 200
    [delivery_id] = await h.publish(dispatcher)
    assert (await after.request(1)).headers["webhook-id"] == delivery_id
    assert before.count() == 1
    before.release()


async def test_a_rotated_secret_signs_deliveries_once_the_lanes_copy_is_a_cache_period_old(
    h: Lanes, api: Client, key: str, clock: ManualClock
) -> None:
    receiver = await h.receiver(replies(HANG))
    dispatcher = await h.dispatcher(endpoint_concurrency=2)
    hook, first_secret = await create_hook(api, key, receiver.url())
    await h.publish(dispatcher)
    await receiver.request(1)

    rotated = await api.post(f"/v1/webhooks/{hook}/rotate-secret", headers=bearer(key))
    new_secret = (await rotated.json())["secret"]
    await h.publish(dispatcher)
    within = await receiver.request(2)  # signed as before the rotation: the old secret stays valid (24 h)
    assert within.headers["X-Service-Signature"] == service_signature(first_secret, within.body)
    clock.advance(seconds(1))
    await h.publish(dispatcher)
    later = await receiver.request(3)
    assert later.headers["X-Service-Signature"].split(" ") == [
        service_signature(new_secret, later.body),
        service_signature(first_secret, later.body),
    ]
    assert len(later.headers["webhook-signature"].split(" ")) == 2
    receiver.release()


async def test_a_queued_delivery_to_an_endpoint_deleted_a_cache_period_ago_is_not_sent(
    h: Lanes, api: Client, key: str, clock: ManualClock
) -> None:
    receiver = await h.receiver(replies(HANG))
    dispatcher = await h.dispatcher(endpoint_concurrency=1)
    hook, _ = await create_hook(api, key, receiver.url())
    await h.publish(dispatcher)
    await receiver.request(1)
    [queued] = await h.publish(dispatcher)

    deleted = await api.delete(f"/v1/webhooks/{hook}", headers=bearer(key))
    assert deleted.status == 204
    clock.advance(seconds(1))
    receiver.release()
    await dispatcher.wait_idle()

    assert receiver.count() == 1
    doc = await h.delivery(queued)
    assert doc["status"] == "failed" and doc["failure_reason"] == "endpoint deleted" and doc["attempts"] == []


async def test_a_410_disables_the_endpoint_for_the_deliveries_queued_behind_it_at_once(
    h: Lanes, clock: ManualClock
) -> None:
    receiver = await h.receiver(always(Reply(410)))
    dispatcher = await h.dispatcher(endpoint_concurrency=1)
    await h.webhook(receiver.url())
    batch = [video_event("completed", clock.now()) for _ in range(3)]  # queued together, one after another
    ids = [delivery_id for delivery_id, _ in await dispatcher.take_in(batch)]
    await dispatcher.wait_idle()

    assert receiver.count() == 1  # the copy of the endpoint says disabled as soon as it is
    docs = [await h.delivery(d) for d in ids]
    assert [d["status"] for d in docs] == ["failed"] * 3
    assert [d["failure_reason"] for d in docs[1:]] == ["endpoint disabled"] * 2
    assert [len(d["attempts"]) for d in docs] == [1, 0, 0]


async def test_a_failing_endpoint_is_probed_one_attempt_at_a_time_until_it_answers_again(
    h: Lanes, clock: ManualClock
) -> None:
    failures, later = asyncio.Event(), asyncio.Event()
    script = replies(
        *[Reply(500, until=failures)] * 4,  # four at once, failing together
        Reply(500),  # the probe: one attempt, the fifth failure in a row, opens the breaker
        OK,  # after the cooldown, a probe that succeeds
        *[Reply(200, until=later)] * 3,  # then all at once again
    )
    in_flight: list[int] = []  # requests in flight as each arrives, itself included

    def counting(request: Received) -> Reply:
        in_flight.append(len(receiver.requests) - receiver.answered)
        return script(request)

    receiver = await h.receiver(counting)
    dispatcher = await h.dispatcher(endpoint_concurrency=4, breaker_failures=5, breaker_cooldown_seconds=30)
    await h.webhook(receiver.url())
    ids = [d for _ in range(9) for d in await h.publish(dispatcher)]
    await receiver.request(4)
    failures.set()
    await dispatcher.wait_idle()
    # Without the probe, the three other workers would each have sent one more before the breaker opened.
    assert receiver.count() == 5
    assert in_flight == [1, 2, 3, 4, 1]

    clock.advance(seconds(30))
    await dispatcher.sweep()  # the cooldown is over: the lane goes on, with one probe first
    await receiver.request(9)
    assert in_flight[5:] == [1, 1, 2, 3]  # the probe alone, then its success restored the concurrency
    later.set()
    await dispatcher.wait_idle()
    delivered = [r.headers["webhook-id"] for r in receiver.requests if r.number >= 6]
    assert sorted(delivered) == sorted(ids[5:])
