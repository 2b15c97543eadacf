"""A waiting generation's place in its account's line at its provider, added to its view where one generation
is read (GET one, the first event of its stream): two small reads, never a count over everyone waiting."""

from __future__ import annotations

from typing import Any

from videogen_common.domain import Status
from videogen_common.generations import QueueReason
from videogen_common.records.generation import GenerationRecord
from videogen_common.repositories.waiting import WaitingRepository
from videogen_common.store import Store


async def view_with_position(store: Store, record: GenerationRecord) -> dict[str, Any]:
    """The generation's public view; while it waits in line, with its ``queue_position`` (1 once taken from
    its line to start next: kept ready for a slot by an orchestrator, or being started)."""
    view = record.public_view()
    if record.waiting_in_line and record.slot_wait is not None:
        view["queue_position"] = await WaitingRepository(store).position(record.slot_wait)
    elif _taken_from_line(record):
        view["queue_position"] = 1
    return view


def _taken_from_line(record: GenerationRecord) -> bool:
    """Queued for capacity, claimed, and not yet at its provider: out of its line, the next to start."""
    return (
        record.status is Status.QUEUED
        and record.queue_reason == QueueReason.PROVIDER_CAPACITY
        and record.lease_owner is not None
        and record.submit_started_at is None
        and record.provider_task_id is None
    )
