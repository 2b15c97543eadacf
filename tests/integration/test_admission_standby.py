"""A successor on standby, against the real MongoDB: while work waits at a full provider, an instance running
tasks there keeps the generation admission would start next claimed, out of its line and holding its account's
slot, and hands it the slot of its own next task to end; a slot freed by another instance reaches it too; it
goes back to its place in line when work the fair turn would start first joins the line (another account's, a
higher priority: at any instance), when its instance stops or frees nothing there any more, and one whose
instance died is resumed without keeping its account's slot.

The mock provider is held by the test (``HeldProvider``), its limit one task, so which generation holds the
slot is exact."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.support.generations import insert_generation
from tests.support.held_provider import HeldOrchestration
from tests.support.waiting import eventually
from videogen_api.queue_position import view_with_position
from videogen_common.domain import Status
from videogen_common.failures import CANCELED_BY_CLIENT
from videogen_common.ids import new_id
from videogen_common.records.generation import GenerationRecord
from videogen_common.repositories.generations import GenerationRepository
from videogen_common.repositories.provider_pools import ProviderPoolRepository
from videogen_common.repositories.slots import SlotRepository
from videogen_common.store import Store
from videogen_orchestrator.runner import Runner

TICK = timedelta(milliseconds=1)


class Held(HeldOrchestration):
    """Instances on one store whose mock provider takes one task at a time and is held by the test."""

    def __init__(self, store: Store, base_env: dict[str, str], media_root: Path) -> None:
        super().__init__(
            store,
            base_env,
            media_root,
            {"account_max_in_flight": 64, "mock_max_concurrency": 1, "admission_standby": True},
        )

    async def create(self, count: int, account: str = "acme", **fields: Any) -> list[str]:
        ids = []
        for i in range(count):
            now = self.clock.advance(TICK)
            doc = await insert_generation(
                self.store,
                now,
                account_id=account,
                prompt=f"{account} {i}",
                generation_id=new_id("gen", now),
                **fields,
            )
            ids.append(doc["_id"])
        return ids

    async def until_standby(self, runner: Runner, generation_id: str | None) -> None:
        async def chosen() -> bool:
            return runner.successors.on_standby.get("mock") == generation_id

        await eventually(chosen, what=f"{generation_id} on standby")

    async def view(self, generation_id: str) -> dict[str, Any]:
        """What ``GET /v1/generations/{id}`` answers of it."""
        return await view_with_position(self.store, GenerationRecord.from_doc(await self.get(generation_id)))

    async def holders(self) -> list[str]:
        [pool] = await ProviderPoolRepository(self.store).of_provider("mock")
        return [holder.generation_id for holder in pool.holders]

    async def account_slots(self, account: str = "acme") -> list[str]:
        return sorted(await SlotRepository(self.store).holders(account))

    async def cancel(self, generation_id: str) -> None:
        """What the api's cancel does: a compare-and-set to failed (which clears the lease)."""
        canceled = await GenerationRepository(self.store).transition(
            await self.get(generation_id),
            Status.FAILED,
            now=self.clock.advance(TICK),
            fields={"error": CANCELED_BY_CLIENT.to_doc()},
        )
        assert canceled is not None


async def die(runner: Runner) -> None:
    """What a killed instance leaves: its work stopped where it was, no lease handed back, no slot given back
    (the runner's own tasks cancelled, and nothing more)."""
    runner._stopping = True  # a death, not a stop: no public way in
    tasks = [*runner._tasks.values(), *runner._background, *runner.successors.watches()]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


@pytest.fixture
async def held(store: Store, base_env: dict[str, str], tmp_path: Path) -> AsyncIterator[Held]:
    instances = Held(store, base_env, tmp_path / "media")
    try:
        yield instances
    finally:
        await instances.stop()


async def test_an_ending_task_hands_its_slot_straight_to_the_successor_on_standby(held: Held) -> None:
    runner = held.runner("orch-a")
    holder, first, second = await held.create(3)
    assert [await runner.start(gid) for gid in (holder, first, second)] == [True, False, False]

    await held.until_standby(runner, first)
    doc = await held.get(first)
    assert (doc["status"], doc["lease_owner"], doc.get("slot_wait")) == ("queued", "orch-a", None)
    # Read alone (GET one generation), it is the next of its account's to start, and the one in line second.
    positions = [(await held.view(gid))["queue_position"] for gid in (first, second)]
    assert positions == [1, 2]
    assert await held.account_slots() == sorted([holder, first])
    assert await held.holders() == [holder]
    assert (await held.get(second))["lease_owner"] is None  # the rest wait in line, unleased

    held.provider.finish(holder)
    assert await held.provider.until_submitted(2) == [holder, first]
    await held.until_standby(runner, second)  # the next one, while the provider is full again
    assert await held.holders() == [first]

    held.provider.finish(first)
    assert await held.provider.until_submitted(3) == [holder, first, second]
    held.provider.finish(second)
    await held.idle()
    assert [(await held.get(gid))["status"] for gid in (holder, first, second)] == ["completed"] * 3
    assert (await held.holders(), await held.account_slots()) == ([], [])
    assert runner.successors.on_standby == {}


async def test_a_higher_priority_joining_the_line_sends_the_successor_back_to_its_place(held: Held) -> None:
    runner = held.runner("orch-a")
    [holder] = await held.create(1)
    [low] = await held.create(1, priority="low")
    assert [await runner.start(gid) for gid in (holder, low)] == [True, False]
    await held.until_standby(runner, low)

    [high] = await held.create(1, priority="high")
    assert await runner.start(high) is False
    await held.until_standby(runner, None)

    async def back_in_line() -> bool:
        doc = await held.get(low)
        return doc["lease_owner"] is None and doc.get("slot_wait") is not None

    await eventually(back_in_line, what="the successor back in line, unleased")
    assert low not in await held.account_slots()

    for done in range(3):
        held.provider.finish(held.provider.submitted[done])
        await held.provider.until_submitted(min(3, done + 2))
    await held.idle()
    assert held.provider.submitted == [holder, high, low]


@pytest.mark.parametrize("arrives_at", ["the same instance", "another instance"])
async def test_another_accounts_work_joining_the_line_sends_the_successor_back(
    held: Held, arrives_at: str
) -> None:
    a = held.runner("orch-a", mock_max_concurrency=2)
    b = held.runner("orch-b", mock_max_concurrency=2, admission_standby=False)
    running = await held.create(2)
    assert [await a.start(gid) for gid in running] == [True, True]
    successor, behind = await held.create(2)
    assert [await a.start(gid) for gid in (successor, behind)] == [False, False]
    await held.until_standby(a, successor)

    [single] = await held.create(1, "other")
    assert await (a if arrives_at == "the same instance" else b).start(single) is False
    await held.until_standby(a, None)  # another instance's arrival is seen at the next recheck

    held.provider.finish(running[0])  # acme runs one, other none: other's turn
    assert await held.provider.until_submitted(3) == [*running, single]


async def test_a_slot_another_instance_frees_reaches_the_successor_on_standby(held: Held) -> None:
    a = held.runner("orch-a", mock_max_concurrency=2)
    b = held.runner("orch-b", mock_max_concurrency=2, admission_standby=False)
    [on_a], [on_b] = await held.create(1), await held.create(1)
    assert (await a.start(on_a), await b.start(on_b)) == (True, True)
    [waiting] = await held.create(1)
    assert await a.start(waiting) is False
    await held.until_standby(a, waiting)

    held.provider.finish(on_b)  # b frees a slot with nobody in line: a's successor takes it
    assert await held.provider.until_submitted(3) == [on_a, on_b, waiting]
    await held.until_standby(a, None)
    assert sorted(await held.holders()) == sorted([on_a, waiting])


async def test_stopping_puts_the_successor_back_in_line_without_its_account_slot(held: Held) -> None:
    a = held.runner("orch-a")
    holder, successor = await held.create(2)
    assert [await a.start(gid) for gid in (holder, successor)] == [True, False]
    await held.until_standby(a, successor)

    await a.stop()
    doc = await held.get(successor)
    assert (doc["status"], doc["lease_owner"], doc.get("submit_started_at")) == ("queued", None, None)
    assert successor not in await held.account_slots()

    b = held.runner("orch-b", admission_standby=False)
    for gid in (holder, successor):
        await b.start(gid)  # as the reconciler resumes what a stopped instance handed back
    assert (await held.get(successor))["queue_reason"] == "provider_capacity"
    held.provider.finish(holder)
    assert await held.provider.until_submitted(2) == [holder, successor]
    held.provider.finish(successor)
    await held.idle()
    assert (await held.get(successor))["status"] == "completed"
    assert (await held.holders(), await held.account_slots()) == ([], [])


async def test_a_successor_whose_instance_died_is_resumed_without_keeping_its_account_slot(
    held: Held,
) -> None:
    a = held.runner("orch-a")
    holder, successor, behind = await held.create(3)
    assert [await a.start(gid) for gid in (holder, successor, behind)] == [True, False, False]
    await held.until_standby(a, successor)
    assert successor in await held.account_slots()

    # The instance dies: what it ran stops mid-way, nothing is handed back, and its leases run out.
    held.runners.remove(a)
    await die(a)
    held.clock.advance(timedelta(minutes=5))

    b = held.runner("orch-b", admission_standby=False)
    await held.reconciler(b).run_once()
    doc = await held.get(successor)
    assert (doc["status"], doc["queue_reason"], doc["lease_owner"]) == ("queued", "provider_capacity", None)
    assert successor not in await held.account_slots()
    held.provider.finish(holder)
    assert await held.provider.until_submitted(2) == [holder, successor]
    held.provider.finish(successor)
    assert await held.provider.until_submitted(3) == [holder, successor, behind]
    held.provider.finish(behind)
    await held.idle()
    assert (await held.holders(), await held.account_slots()) == ([], [])


async def test_a_successor_canceled_on_standby_is_never_submitted_and_the_slot_moves_on(held: Held) -> None:
    runner = held.runner("orch-a")
    holder, doomed, after = await held.create(3)
    assert [await runner.start(gid) for gid in (holder, doomed, after)] == [True, False, False]
    await held.until_standby(runner, doomed)
    await held.cancel(doomed)

    held.provider.finish(holder)
    assert await held.provider.until_submitted(2) == [holder, after]
    held.provider.finish(after)
    await held.idle()
    assert [(await held.get(gid))["status"] for gid in (holder, doomed, after)] == [
        "completed",
        "failed",
        "completed",
    ]
    assert doomed not in held.provider.submitted
    assert (await held.holders(), await held.account_slots()) == ([], [])
