"""The api's snapshot of provider pools and health (``videogen_api.provider_states``), read from the real
store: callers at the same moment share one read, and a read that failed after every caller stopped waiting
for it is not handed to the next caller."""

from __future__ import annotations

import asyncio

import pytest

from tests.support.fakes import ManualClock
from videogen_api.provider_states import ProviderStates, Snapshot
from videogen_common.store import Store


class Gated(ProviderStates):
    """Each read waits for the test's gate, and fails while ``failing``."""

    def __init__(self, store: Store) -> None:
        super().__init__(store, ManualClock(), ttl_seconds=0)
        self.gate = asyncio.Event()
        self.reads = 0
        self.failing = False

    async def _read(self) -> Snapshot:
        self.reads += 1
        await self.gate.wait()
        if self.failing:
            raise ConnectionError("the store went away mid-read")
        return await super()._read()


async def test_callers_at_once_share_one_read(store: Store) -> None:
    states = Gated(store)
    waiting = [asyncio.create_task(states.snapshot()) for _ in range(5)]
    await asyncio.sleep(0)
    states.gate.set()
    snapshots = await asyncio.gather(*waiting)
    assert states.reads == 1 and all(s is snapshots[0] for s in snapshots)


async def test_a_read_that_failed_with_nobody_waiting_is_not_handed_to_the_next_caller(store: Store) -> None:
    states = Gated(store)
    states.failing = True
    caller = asyncio.create_task(states.snapshot())
    while states.reads == 0:
        await asyncio.sleep(0)
    caller.cancel()  # the request went away while the read ran
    with pytest.raises(asyncio.CancelledError):
        await caller
    states.gate.set()  # then the read fails
    for _ in range(5):
        await asyncio.sleep(0)

    states.failing = False
    snapshot = await states.snapshot()

    assert states.reads == 2 and snapshot.pools == {}
