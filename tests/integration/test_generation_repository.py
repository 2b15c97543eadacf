"""The generation and lease repositories' query shapes that differ from what MongoDB 7 alone would call for,
because the embedded store answers ``findAndModify`` and ``$or`` filters with a scan: the lease claim (a
conditional update stamping a token, then a read by id), the lost-lease scan (one range per unfinished
status), and the compare-and-set writes whose new document is computed rather than read back."""

from __future__ import annotations

from datetime import timedelta

from tests.support.fakes import ManualClock
from tests.support.generations import insert_generation, stored_generation
from videogen_common.domain import Status
from videogen_common.records.generation import GenerationRecord
from videogen_common.repositories.generations import GenerationRepository
from videogen_common.repositories.leases import LeaseRepository
from videogen_common.store import Store


async def test_a_lease_is_claimed_once_while_it_runs_and_again_once_it_expires(store: Store) -> None:
    clock = ManualClock()
    leases = LeaseRepository(store)
    doc = await insert_generation(store, clock.now(), slot_wait="mock\nacme\n1\n000000000000\nx")
    now, until = clock.now(), clock.now() + timedelta(seconds=30)

    # A generation waiting in line is claimed only by admission starting it (``waiting``).
    assert await leases.claim_lease(doc["_id"], "a", now, until, "token-a") is None
    first = await leases.claim_lease(doc["_id"], "a", now, until, "token-a", admitted=True)
    assert first is not None
    assert (first.lease_owner, first.lease_token, first.attempts) == ("a", "token-a", 1)
    assert first.slot_wait is None  # a claimed generation leaves its line
    assert first.admitted_at == now
    assert await leases.claim_lease(doc["_id"], "b", now, until, "token-b", waiting=True) is None

    later = clock.advance(timedelta(seconds=31))
    second = await leases.claim_lease(doc["_id"], "b", later, later + timedelta(seconds=30), "token-b")
    assert second is not None and second.lease_owner == "b" and second.attempts == 2


async def test_expired_leases_are_found_per_unfinished_status_oldest_first(store: Store) -> None:
    clock = ManualClock()
    start = clock.now()
    expired = [
        await insert_generation(store, start, status=status, lease_expires_at=start + timedelta(seconds=n))
        for n, status in enumerate((Status.QUEUED.value, Status.PROCESSING.value, Status.QUEUED.value))
    ]
    await insert_generation(store, start, lease_expires_at=start + timedelta(hours=1))  # still held
    await insert_generation(store, start, status=Status.COMPLETED.value, lease_expires_at=start)  # finished
    now = clock.advance(timedelta(minutes=1))

    found = [gid async for gid in LeaseRepository(store).expired_leases(now, limit=10)]

    # Each unfinished status is its own range of the (status, lease_expires_at) index.
    by_status = {
        status: [d["_id"] for d in expired if d["status"] == status]
        for status in (Status.QUEUED.value, Status.PROCESSING.value)
    }
    assert sorted(found) == sorted(d["_id"] for d in expired)
    for ids in by_status.values():
        assert [gid for gid in found if gid in ids] == ids


async def test_a_compare_and_set_returns_what_it_wrote_and_loses_to_an_earlier_writer(store: Store) -> None:
    clock = ManualClock()
    generations = GenerationRepository(store)
    doc = await insert_generation(store, clock.now(), lease_owner="a")

    record = GenerationRecord.from_doc(doc)

    updated = await generations.save_task_id(record, "a", "task-1", clock.now(), None)
    assert updated is not None
    assert updated == GenerationRecord.from_doc(await stored_generation(store, doc["_id"]))
    assert await generations.save_task_id(record, "a", "task-2", clock.now(), None) is None  # stale version
    assert await generations.transition(doc, Status.QUEUED, now=clock.now()) is None  # stale version

    assert await generations.follow_provider(updated, Status.QUEUED, now=clock.now(), owner="b") is None
    moved = await generations.follow_provider(updated, Status.QUEUED, now=clock.now(), owner="a")
    assert moved is not None
    assert moved == GenerationRecord.from_doc(await stored_generation(store, doc["_id"]))
