"""A provider's lines (``repositories.waiting``) against the real store, with the races between a reader
finding a lane empty and a generation joining it forced by holding the reader's write
(``tests.support.held_writes``)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

from tests.support.generations import insert_generation
from tests.support.held_writes import HeldWrites
from videogen_common.domain import Provider
from videogen_common.records.admission import wait_key
from videogen_common.records.generation import GenerationRecord
from videogen_common.repositories.leases import LeaseRepository
from videogen_common.repositories.waiting import WaitingRepository
from videogen_common.store import Store

NOW = datetime(2026, 12, 6, 9, 0, tzinfo=UTC)
RANK = 1


async def leased(store: Store, minute: int) -> GenerationRecord:
    """A generation an instance holds (as admission does when it puts it in line)."""
    now = NOW + timedelta(minutes=minute)
    token = f"t{minute}"
    lease: dict[str, Any] = {
        "lease_owner": "a",
        "lease_token": token,
        "lease_expires_at": now + timedelta(hours=1),
    }
    doc = await insert_generation(store, now, provider=Provider.LUMA, status="processing", **lease)
    return GenerationRecord.from_doc(doc)


async def join(store: Store, record: GenerationRecord, place: int | None = None) -> int:
    """Joining as ``admission.wait`` does: a place (or the one kept), the key, the lane told; then the lease
    let go."""
    lines = WaitingRepository(store)
    lane = f"luma\n{record.account_id}\n{RANK}"
    if place is None:
        lane, place = await lines.take_place("luma", record.account_id, RANK)
    key = wait_key(lane, place, record.id)
    waiting = await lines.join_lane(record, key, place, "provider_capacity", now=NOW)
    assert waiting is not None
    await lines.joined(lane, place, record.created_at)
    assert await LeaseRepository(store).leave_lease(waiting)
    return place


def emptying(collection: str, filter: Any, update: Any) -> bool:
    return collection == "waiting_lanes" and (update.get("$set") or {}).get("pending") is False


async def test_a_reader_that_looked_before_a_rejoin_does_not_mark_the_lane_empty(store: Store) -> None:
    lines, leases = WaitingRepository(store), LeaseRepository(store)
    first = await leased(store, 0)
    place = await join(store, first)
    [lane] = await lines.pending_at("luma")

    # Admission takes it out of its line to start it (its key goes)…
    claimed = await leases.claim_lease(first.id, "b", NOW, NOW + timedelta(hours=1), "t-b", waiting=True)
    assert claimed is not None
    await lines.left(lane.id)
    # …while another reader, with the lane as it was, finds no key and is about to mark the lane empty.
    with HeldWrites(emptying).installed() as held:
        reading = asyncio.create_task(lines.next_in(lane))
        await held.until_held(1)
        # It could not start after all (no room): it rejoins at the place it kept (tail and head stay).
        await join(store, claimed, place)
        held.release()
        found = await reading

    assert found is not None and found[0] == first.id
    [after] = await lines.pending_at("luma")
    assert (after.pending, after.waiting) == (True, 1)


async def test_a_reader_that_looked_before_a_new_joiners_key_was_written_does_not_mark_the_lane_empty(
    store: Store,
) -> None:
    lines = WaitingRepository(store)
    earlier = await leased(store, 0)
    await join(store, earlier)
    await store.generations.update_one(
        {"_id": earlier.id}, {"$unset": {"slot_wait": ""}}
    )  # started meanwhile
    newcomer = await leased(store, 1)
    lane_id, place = await lines.take_place("luma", newcomer.account_id, RANK)
    [lane] = await lines.pending_at("luma")  # read after the place was taken: its tail counts it

    with HeldWrites(emptying).installed() as held:
        reading = asyncio.create_task(lines.next_in(lane))
        await held.until_held(1)
        waiting = await lines.join_lane(
            newcomer, wait_key(lane_id, place, newcomer.id), place, "provider_capacity", now=NOW
        )
        assert waiting is not None
        await lines.joined(lane_id, place, newcomer.created_at)
        held.release()
        found = await reading

    assert found is not None and found[0] == newcomer.id
    assert [lane.pending for lane in await lines.pending_at("luma")] == [True]
