"""A waiting generation's place in its account's line at its provider, added to its view where one generation
is read (GET one, the first event of its stream): two small reads, never a count over everyone waiting."""

from __future__ import annotations

from typing import Any

from videogen_common.records.generation import GenerationRecord
from videogen_common.repositories.waiting import WaitingRepository
from videogen_common.store import Store


async def view_with_position(store: Store, record: GenerationRecord) -> dict[str, Any]:
    """The generation's public view; while it waits in line, with its ``queue_position``."""
    view = record.public_view()
    if record.waiting_in_line and record.slot_wait is not None:
        view["queue_position"] = await WaitingRepository(store).position(record.slot_wait)
    return view
