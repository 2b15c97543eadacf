"""Events are records: an owed event rides in the very write that makes its change (the changed document's
``outbox``), is due to be put on the events topic a grace after each publish until the notifier settles it,
is recorded once however often it is taken in, and the migration moves into outboxes what an earlier version
left owed on generations and webhooks."""

from __future__ import annotations

import asyncio
import random
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from tests.support.fakes import ManualClock
from tests.support.generations import insert_generation, stored_generation
from tests.support.webhooks import insert_webhook
from videogen_common.clock import to_millis
from videogen_common.domain import Status
from videogen_common.earlier_outboxes import adopt_owed_events
from videogen_common.events import status_event_id
from videogen_common.failures import CANCELED_BY_CLIENT
from videogen_common.generations import terminal_event
from videogen_common.records.event import Event
from videogen_common.records.generation import GenerationRecord, StoredVideo
from videogen_common.repositories.events import EventRepository
from videogen_common.repositories.generations import GenerationRepository
from videogen_common.repositories.leases import LeaseRepository
from videogen_common.repositories.outbox import OutboxRepository
from videogen_common.store import Store


def _media() -> StoredVideo:
    return StoredVideo("http://127.0.0.1:9/v.mp4", "k/video.mp4")


def outbox_of(doc: dict[str, object]) -> list[Event]:
    owed = doc.get("outbox") or ()
    return [Event.from_doc(e, source="generations", carrier_id=str(doc["_id"])) for e in owed]  # type: ignore[attr-defined]


async def test_a_terminal_transition_carries_its_event_in_its_own_write_and_a_lost_one_carries_none(
    store: Store,
) -> None:
    clock = ManualClock()
    generations = GenerationRepository(store)
    doc = await insert_generation(store, clock.now())
    final = await generations.transition(doc, Status.COMPLETED, now=clock.now())
    assert final is not None

    stored = await stored_generation(store, doc["_id"])
    [owed] = outbox_of(stored)
    assert owed == terminal_event(GenerationRecord.from_doc(final))
    assert owed.id == status_event_id(doc["_id"], "completed", final["version"])
    assert (owed.type, owed.subject_type, owed.subject_id) == ("video.completed", "generation", doc["_id"])
    assert owed.data["status"] == "completed" and "timeline" not in owed.data
    assert stored["outbox_at"] == clock.now()  # owed since the change
    assert await store.events.count_documents({}) == 0  # recorded by the notifier, when it takes it in

    # The same change again, from the same (now stale) document: the compare-and-set loses, nothing is owed.
    assert await generations.transition(doc, Status.FAILED, now=clock.now()) is None
    assert len(outbox_of(await stored_generation(store, doc["_id"]))) == 1
    # A transition that is not terminal owes nothing.
    other = await insert_generation(store, clock.now())
    assert await generations.transition(other, Status.QUEUED, now=clock.now()) is not None
    assert "outbox" not in await stored_generation(store, other["_id"])


async def test_a_cancel_racing_a_completion_leaves_one_terminal_state_owing_its_one_event(
    store: Store,
) -> None:
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
        stored = await stored_generation(store, doc["_id"])
        assert GenerationRecord.from_doc(stored).status is winner.status
        assert [e.id for e in outbox_of(stored)] == [terminal_event(winner).id]


async def test_terminal_transitions_keep_going_beside_lease_renewals_and_progress_writes(
    store: Store,
) -> None:
    """The orchestrator's own writes to the same generations (its reconciler renewing every lease it holds,
    its actors writing progress) never hold a terminal transition up: each is one single-document write."""
    clock = ManualClock()
    generations, leases = GenerationRepository(store), LeaseRepository(store)
    docs = [await insert_generation(store, clock.now(), lease_owner="a") for _ in range(60)]
    ids = [d["_id"] for d in docs]
    stop = asyncio.Event()

    async def renewing() -> None:
        while not stop.is_set():
            await leases.renew_leases(ids, "a", clock.now() + timedelta(seconds=30))

    async def progressing() -> None:
        while not stop.is_set():
            await generations.write_progress(GenerationRecord.from_doc(random.choice(docs)), "a", 50)

    background = [asyncio.create_task(renewing()), *(asyncio.create_task(progressing()) for _ in range(3))]
    try:
        finals = await asyncio.wait_for(
            asyncio.gather(
                *(generations.transition(d, Status.COMPLETED, now=clock.now(), owner="a") for d in docs)
            ),
            60,
        )
    finally:
        stop.set()
        await asyncio.gather(*background)
    assert all(final is not None for final in finals)
    assert await OutboxRepository(store).count_owed() == len(docs)


async def test_an_owed_event_is_due_a_grace_after_each_publish_until_the_notifier_settles_it(
    store: Store,
) -> None:
    clock = ManualClock()
    outbox = OutboxRepository(store)
    doc = await insert_generation(store, clock.now())
    final = await GenerationRepository(store).transition(doc, Status.FAILED, now=clock.now())
    assert final is not None
    event = terminal_event(GenerationRecord.from_doc(final))
    assert await outbox.count_owed() == 1

    assert [e async for e in outbox.due(clock.now(), limit=10)] == []  # put there just now
    later = clock.advance(timedelta(seconds=10))
    assert [e async for e in outbox.due(later, limit=10)] == [event]
    await outbox.republished(event, later)
    assert [e async for e in outbox.due(later, limit=10)] == []

    # The notifier records it (twice, say: it was republished meanwhile), then settles it.
    events = EventRepository(store)
    await events.record([event])
    await events.record([event])
    await outbox.settle([event])
    assert await outbox.count_owed() == 0
    assert [e async for e in outbox.due(clock.advance(timedelta(hours=1)), limit=10)] == []
    settled = await stored_generation(store, doc["_id"])
    assert "outbox" not in settled and "outbox_at" not in settled
    recorded = replace(event, source=None, carrier_id=None)  # a record, no longer carried by its document
    assert [Event.from_doc(d) async for d in store.events.find({})] == [recorded]
    assert await events.owned(event.id, "acme") == recorded


async def test_settling_one_event_leaves_a_later_one_of_the_same_document_owed(store: Store) -> None:
    clock = ManualClock()
    outbox = OutboxRepository(store)
    doc = await insert_generation(store, clock.now())
    final = await GenerationRepository(store).transition(doc, Status.COMPLETED, now=clock.now())
    assert final is not None
    first = terminal_event(GenerationRecord.from_doc(final))
    # A second owed event on the same document before the first is settled (as a deletion would make).
    second = Event(
        id=f"evt_{doc['_id']}_deleted",
        type="video.deleted",
        account_id="acme",
        subject_type="generation",
        subject_id=doc["_id"],
        data={"id": doc["_id"]},
        created_at=clock.advance(timedelta(seconds=1)),
        source="generations",
        carrier_id=doc["_id"],
    )
    await store.generations.update_one(
        {"_id": doc["_id"]}, {"$push": {"outbox": second.to_doc()}, "$set": {"outbox_at": second.created_at}}
    )

    await outbox.settle([first])
    assert outbox_of(await stored_generation(store, doc["_id"])) == [second]
    await outbox.settle([second])
    assert "outbox_at" not in await stored_generation(store, doc["_id"])


async def test_the_migration_moves_into_outboxes_what_an_earlier_version_left_owed_once(store: Store) -> None:
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

    due = {
        e.id: e async for e in OutboxRepository(store).due(datetime.now(UTC) + timedelta(days=1), limit=10)
    }
    completed_id = status_event_id(owing["_id"], "completed", 2)  # the id it was delivered under before
    disabled_id = f"evt_{webhook_id}_disabled_{to_millis(disabled_at)}"
    assert set(due) == {completed_id, disabled_id}
    assert due[completed_id].type == "video.completed" and due[completed_id].source == "generations"
    assert due[disabled_id].data["reason"] == "failing" and due[disabled_id].created_at == disabled_at
    assert "outbox_pending" not in await stored_generation(store, owing["_id"])
    assert await stored_generation(store, settled["_id"]) == settled
    webhook = await store.webhooks.find_one({"_id": webhook_id})
    assert webhook is not None and "notice_pending" not in webhook
    assert await store.audit_events.count_documents({"target.id": webhook_id}) == 1
