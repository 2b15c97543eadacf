"""Events are records: a change and the event it reports are stored by one transaction (both or neither),
an owed event is due to be put on the events topic until the notifier settles it, and the migration adopts
what an earlier version left owed on generations and webhooks."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from tests.support.fakes import ManualClock
from tests.support.generations import insert_generation, stored_generation
from tests.support.webhooks import insert_webhook
from videogen_common.clock import to_millis
from videogen_common.domain import Status
from videogen_common.earlier_outboxes import adopt_owed_events
from videogen_common.event_types import Account
from videogen_common.events import status_event_id
from videogen_common.failures import CANCELED_BY_CLIENT
from videogen_common.generations import terminal_event
from videogen_common.records.event import Event
from videogen_common.records.generation import GenerationRecord, StoredVideo
from videogen_common.repositories.events import EventRepository, record_with_change
from videogen_common.repositories.generations import GenerationRepository
from videogen_common.store import DuplicateKeyError, Session, Store


async def test_a_terminal_transition_stores_its_event_owed_and_a_lost_compare_and_set_stores_none(
    store: Store,
) -> None:
    clock = ManualClock()
    generations = GenerationRepository(store)
    doc = await insert_generation(store, clock.now())
    final = await generations.transition(doc, Status.COMPLETED, now=clock.now())
    assert final is not None

    [stored] = [Event.from_doc(d) async for d in store.events.find({})]
    assert stored == terminal_event(GenerationRecord.from_doc(final))
    assert stored.id == status_event_id(doc["_id"], "completed", final["version"])
    assert (stored.type, stored.subject_type, stored.subject_id) == (
        "video.completed",
        "generation",
        doc["_id"],
    )
    assert stored.data["status"] == "completed" and "timeline" not in stored.data
    assert stored.outbox_at == clock.now()  # owed

    # The same change again, from the same (now stale) document: the compare-and-set loses, nothing is stored.
    assert await generations.transition(doc, Status.FAILED, now=clock.now()) is None
    assert await store.events.count_documents({}) == 1
    # A transition that is not terminal owes nothing.
    other = await insert_generation(store, clock.now())
    assert await generations.transition(other, Status.QUEUED, now=clock.now()) is not None
    assert await store.events.count_documents({}) == 1


async def test_an_event_that_cannot_be_stored_undoes_the_change_it_reports(store: Store) -> None:
    """One transaction: the terminal state is never stored without its event."""
    clock = ManualClock()
    doc = await insert_generation(store, clock.now(), lease_owner="a")
    record = GenerationRecord.from_doc(doc)
    would_be = GenerationRecord.from_doc({**doc, "status": "completed", "version": doc["version"] + 1})
    # An event already stored under the id the completion's event will have makes its insert fail.
    await EventRepository(store).insert(terminal_event(would_be))

    with pytest.raises(DuplicateKeyError):
        await GenerationRepository(store).complete(record, _media(), now=clock.now(), owner="a")
    with pytest.raises(DuplicateKeyError):
        await GenerationRepository(store).transition(doc, Status.COMPLETED, now=clock.now())
    assert await stored_generation(store, doc["_id"]) == doc


async def test_a_change_that_answers_none_writes_nothing_and_its_event_is_not_made(store: Store) -> None:
    async def lost(session: Session) -> Account | None:
        await store.generations.insert_one({"_id": "written-then-undone"}, session=session)
        return None

    def event(account: Account) -> Event:
        raise AssertionError("no event for a change that did not happen")

    assert await record_with_change(store, lost, event) is None
    assert await store.generations.find_one({"_id": "written-then-undone"}) is None
    assert await store.events.count_documents({}) == 0


async def test_a_cancel_racing_a_completion_leaves_one_terminal_state_and_its_one_event(store: Store) -> None:
    """Both are transactions on one document: the server's write conflict makes one run again, and its
    compare-and-set then finds the generation moved."""
    clock = ManualClock()
    generations = GenerationRepository(store)
    for _ in range(5):
        doc = await insert_generation(store, clock.now(), lease_owner="a")
        record = GenerationRecord.from_doc(doc)
        completed, canceled = await asyncio.gather(
            generations.complete(record, _media(), now=clock.now(), owner="a"),
            generations.fail(record, CANCELED_BY_CLIENT, now=clock.now()),
        )
        winner = completed or canceled
        assert winner is not None and (completed is None) != (canceled is None)
        assert GenerationRecord.from_doc(await stored_generation(store, doc["_id"])).status is winner.status
        [event] = [Event.from_doc(d) async for d in store.events.find({"subject_id": doc["_id"]})]
        assert event.id == terminal_event(winner).id


async def test_an_owed_event_is_due_a_grace_after_each_publish_until_the_notifier_settles_it(
    store: Store,
) -> None:
    clock = ManualClock()
    events = EventRepository(store)
    doc = await insert_generation(store, clock.now())
    final = await GenerationRepository(store).transition(doc, Status.FAILED, now=clock.now())
    assert final is not None
    event_id = terminal_event(GenerationRecord.from_doc(final)).id
    assert await events.count_owed() == 1

    assert [e.id async for e in events.outbox_due(clock.now(), limit=10)] == []  # put there just now
    later = clock.advance(timedelta(seconds=10))
    assert [e.id async for e in events.outbox_due(later, limit=10)] == [event_id]
    await events.republished(event_id, later)
    assert [e.id async for e in events.outbox_due(later, limit=10)] == []

    await events.settle([event_id])
    assert await events.count_owed() == 0
    assert [e.id async for e in events.outbox_due(clock.advance(timedelta(hours=1)), limit=10)] == []
    stored = await store.events.find_one({"_id": event_id})
    assert stored is not None and "outbox_at" not in stored  # settled, and still there to be listed


async def test_the_migration_adopts_the_events_an_earlier_version_left_owed_once(store: Store) -> None:
    clock = ManualClock()
    now = clock.now()
    # Left by the earlier version: a completed generation still owing its status event, one settled, and an
    # endpoint the notifier disabled whose notice it never recorded.
    owing = await insert_generation(
        store, now, status="completed", version=2, outbox_pending=True, outbox_at=now
    )
    settled = await insert_generation(store, now, status="failed", version=2)
    disabled_at = now - timedelta(minutes=1)
    webhook_id, _ = await insert_webhook(
        store,
        "http://127.0.0.1:9/h",
        now=now,
        account_id="acme",
        events=["video.completed"],
        active=False,
        notice_pending=True,
        disabled_at=disabled_at,
        disabled_reason="failing",
    )
    later = clock.advance(timedelta(seconds=5))

    assert await adopt_owed_events(store, later) == 2
    assert await adopt_owed_events(store, later) == 0  # idempotent

    owed = {e.id: e async for e in EventRepository(store).outbox_due(clock.advance(timedelta(1)), limit=10)}
    completed_id = status_event_id(owing["_id"], "completed", 2)  # the id it was delivered under before
    disabled_id = f"evt_{webhook_id}_disabled_{to_millis(disabled_at)}"
    assert set(owed) == {completed_id, disabled_id}
    assert owed[completed_id].type == "video.completed" and owed[completed_id].outbox_at == later
    assert owed[disabled_id].data["reason"] == "failing" and owed[disabled_id].created_at == disabled_at
    assert "outbox_pending" not in await stored_generation(store, owing["_id"])
    assert await stored_generation(store, settled["_id"]) == settled
    webhook = await store.webhooks.find_one({"_id": webhook_id})
    assert webhook is not None and "notice_pending" not in webhook
    assert await store.audit_events.count_documents({"target.id": webhook_id}) == 1


def _media() -> StoredVideo:
    return StoredVideo("http://127.0.0.1:9/v.mp4", "k/video.mp4")
