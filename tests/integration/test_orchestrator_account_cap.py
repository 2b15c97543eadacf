"""The per-account cap on generations in flight, against the real MongoDB: beyond the cap new generations wait
as ``queued`` (not rejected), in line at their provider, nothing beyond it ever reaches the provider — also
with two instances racing — and waiting generations start oldest first as slots free, after a restart, a
cancel, or an instance that died holding a slot.

The provider double holds each task until the test lets it finish, so "at once" is exact rather than timed."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.support.generations import insert_generation
from tests.support.held_provider import HeldOrchestration
from videogen_common.domain import Status
from videogen_common.failures import CANCELED_BY_CLIENT
from videogen_common.ids import new_id
from videogen_common.records.generation import GenerationRecord
from videogen_common.repositories.generations import GenerationRepository
from videogen_common.store import Store

TICK = timedelta(milliseconds=1)
CAP = 2


class Instances(HeldOrchestration):
    """Orchestrator instances (runner + reconciler, as runtime.py wires them: tests.support.orchestration) on
    one store and provider, each runner with room for 64 generations and the account cap at ``CAP`` unless
    told otherwise (``account_max_in_flight``)."""

    def __init__(self, store: Store, base_env: dict[str, str], media_root: Path) -> None:
        super().__init__(store, base_env, media_root, {"account_max_in_flight": CAP})

    async def create(
        self, count: int, account: str = "acme", *, waiting: bool = False, **fields: Any
    ) -> list[str]:
        """Generations as the api creates them, each a millisecond after the previous (oldest first); with
        ``waiting``, already put in line by an instance since gone."""
        ids = []
        for i in range(count):
            now = self.clock.advance(TICK)
            generation_id = new_id("gen", now)
            lease: dict[str, Any] = {}
            if waiting:
                until = now + timedelta(hours=1)
                lease = {"lease_owner": "gone", "lease_token": "t", "lease_expires_at": until}
            doc = await insert_generation(
                self.store,
                now,
                account_id=account,
                prompt=f"shot {i}",
                generation_id=generation_id,
                **lease,
                **fields,
            )
            if waiting:
                admission = self.admission(self.settings())
                assert await admission.wait(GenerationRecord.from_doc(doc), "account_concurrency")
            ids.append(generation_id)
        return ids

    async def cancel(self, generation_id: str) -> None:
        """What the api's cancel does: a compare-and-set to failed (which clears the lease), tried again while
        the generation keeps moving."""
        for _ in range(5):
            canceled = await GenerationRepository(self.store).transition(
                await self.get(generation_id),
                Status.FAILED,
                now=self.clock.advance(TICK),
                fields={"error": CANCELED_BY_CLIENT.to_doc()},
            )
            if canceled is not None:
                return
        raise AssertionError(f"could not cancel {generation_id}")

    async def statuses(self, ids: list[str]) -> list[str]:
        return [(await self.get(gid))["status"] for gid in ids]


@pytest.fixture
async def orch(store: Store, base_env: dict[str, str], tmp_path: Path) -> AsyncIterator[Instances]:
    instances = Instances(store, base_env, tmp_path / "media")
    try:
        yield instances
    finally:
        await instances.stop()


async def assert_waiting(orch: Instances, generation_id: str) -> None:
    doc = await orch.get(generation_id)
    assert doc["status"] == "queued"
    # In acme's line at the mock provider, at normal priority.
    assert doc["slot_wait"].startswith("mock\nacme\n1\n") and doc["slot_wait"].endswith(generation_id)
    assert doc["lease_owner"] is None and doc["lease_expires_at"] is None
    assert doc["provider_task_id"] is None


async def test_beyond_the_cap_generations_wait_queued_and_start_oldest_first_as_slots_free(
    orch: Instances,
) -> None:
    runner = orch.runner("orch-a")
    ids = await orch.create(5)

    started = [await runner.start(gid) for gid in ids]

    assert started == [True, True, False, False, False]
    assert await orch.provider.until_submitted(2) == ids[:2]
    for gid in ids[2:]:
        await assert_waiting(orch, gid)
    assert await orch.admission_of(runner).accounts.holders("acme") == ids[:2]

    # Each finish frees one slot, and the oldest waiting generation takes it.
    for done, (finishing, following) in enumerate(zip(ids, ids[2:], strict=False), start=1):
        orch.provider.finish(finishing)
        assert await orch.provider.until_submitted(2 + done) == ids[: 2 + done]
        assert (await orch.get(following))["lease_owner"] == "orch-a"
    for gid in ids[3:]:
        orch.provider.finish(gid)
    await orch.idle()

    assert await orch.statuses(ids) == ["completed"] * 5
    assert orch.provider.submitted == ids
    assert orch.provider.peak == CAP
    assert await orch.admission_of(runner).accounts.holders("acme") == []
    for gid in ids:
        assert "slot_wait" not in await orch.get(gid)
        assert len(orch.sink.for_generation(gid)) == 1


async def test_the_cap_is_per_account(orch: Instances) -> None:
    runner = orch.runner("orch-a")
    acme = await orch.create(3, account="acme")
    globex = await orch.create(2, account="globex")

    assert [await runner.start(gid) for gid in acme + globex] == [True, True, False, True, True]
    assert sorted(await orch.provider.until_submitted(4)) == sorted(acme[:2] + globex)
    await assert_waiting(orch, acme[2])


async def test_two_instances_racing_never_put_more_than_the_cap_at_the_provider(orch: Instances) -> None:
    instances = [orch.runner("orch-a"), orch.runner("orch-b")]
    ids = await orch.create(10)

    # Every request arrives at both instances at once (a redelivery), all at the same moment.
    started = await asyncio.gather(*(r.start(gid) for gid in ids for r in instances))

    assert sum(started) == CAP
    submitted = await orch.provider.until_submitted(CAP)
    await asyncio.sleep(0)  # let any wrongly started actor reach the provider
    assert len(orch.provider.submitted) == CAP
    assert sorted(await orch.admission_of(instances[0]).accounts.holders("acme")) == sorted(submitted)
    waiting = [gid for gid in ids if gid not in submitted]
    for gid in waiting:
        await assert_waiting(orch, gid)

    # Finishing on either instance starts the waiting ones, wherever they run, never more than CAP at once.
    finished = 0
    while finished < len(ids):
        at_provider = sorted(orch.provider.at_provider)
        for gid in at_provider:
            orch.provider.finish(gid)
        finished += len(at_provider)
        await orch.provider.until_submitted(min(len(ids), finished + CAP))
    await orch.idle()

    assert await orch.statuses(ids) == ["completed"] * 10
    assert sorted(orch.provider.submitted) == sorted(ids)  # each once
    assert orch.provider.peak == CAP


async def test_waiting_generations_survive_a_restart_and_the_next_instance_starts_them(
    orch: Instances,
) -> None:
    first = orch.runner("orch-a", account_max_in_flight=1)
    running, waiting = await orch.create(2)
    assert await first.start(running) is True
    assert await first.start(waiting) is False
    await orch.provider.until_submitted(1)

    await first.stop()  # hands the running one back; the waiting one needs no lease
    await assert_waiting(orch, waiting)

    second = orch.runner("orch-b", account_max_in_flight=1)
    reconciler = orch.reconciler(second)
    assert await reconciler.run_once() == (1, 0)  # resumed at once, not after the dispatch grace
    assert second.owns(running) and not second.owns(waiting)
    await assert_waiting(orch, waiting)  # the slot is still the running one's

    orch.provider.finish(running)
    await orch.provider.until_submitted(2)
    orch.provider.finish(waiting)
    await orch.idle()

    assert await orch.statuses([running, waiting]) == ["completed", "completed"]
    assert orch.provider.submitted == [running, waiting]  # the running one was not submitted again


async def test_the_reconciler_reclaims_a_slot_a_dead_instance_left_on_a_finished_generation(
    orch: Instances,
) -> None:
    runner = orch.runner("orch-a", account_max_in_flight=1)
    [finished] = await orch.create(1, status="completed", lease_owner=None)
    # Its instance wrote the terminal state and died before giving the slot back.
    assert await orch.admission_of(runner).accounts.acquire("acme", finished)
    [waiting] = await orch.create(1)
    assert await runner.start(waiting) is False
    await runner.wait_idle()  # its own look for a free slot found none
    await assert_waiting(orch, waiting)

    assert await orch.reconciler(runner).run_once() == (1, 0)

    assert await orch.admission_of(runner).accounts.holders("acme") == [waiting]
    assert await orch.provider.until_submitted(1) == [waiting]
    orch.provider.finish(waiting)
    await orch.idle()
    assert (await orch.get(waiting))["status"] == "completed"


async def test_generations_left_waiting_beside_free_slots_are_started_by_the_reconciler(
    orch: Instances,
) -> None:
    # The instances that freed the slots died before their wake-ups: nothing but the reconciler starts these.
    waiting = [
        gid
        for account in ("acme", "globex", "initech")
        for gid in await orch.create(2, account, waiting=True, status="queued")
    ]
    runner = orch.runner("orch-a", account_max_in_flight=1)

    assert await orch.reconciler(runner).run_once() == (3, 0)  # the oldest of each account's queue

    assert sorted(await orch.provider.until_submitted(3)) == sorted(waiting[0::2])
    for gid in waiting:
        orch.provider.finish(gid)
    await orch.idle()
    assert await orch.statuses(waiting) == ["completed"] * 6


async def test_canceling_an_in_flight_generation_frees_its_slot_for_the_next(orch: Instances) -> None:
    runner = orch.runner("orch-a", account_max_in_flight=1)
    [first, second] = await orch.create(2)
    assert await runner.start(first) is True
    assert await runner.start(second) is False
    await orch.provider.until_submitted(1)

    await orch.cancel(first)
    orch.provider.finish(first)  # the actor's next look sees the cancel and stops

    assert await orch.provider.until_submitted(2) == [first, second]
    orch.provider.finish(second)
    await orch.idle()
    assert await orch.statuses([first, second]) == ["failed", "completed"]
    assert (await orch.get(first))["error"]["code"] == "canceled"


async def test_a_generation_canceled_while_waiting_is_never_submitted(orch: Instances) -> None:
    runner = orch.runner("orch-a", account_max_in_flight=1)
    [holder, doomed, after] = await orch.create(3)
    assert [await runner.start(gid) for gid in (holder, doomed, after)] == [True, False, False]
    await orch.cancel(doomed)

    orch.provider.finish(holder)
    assert await orch.provider.until_submitted(2) == [holder, after]
    orch.provider.finish(after)
    await orch.idle()
    assert await orch.statuses([holder, doomed, after]) == ["completed", "failed", "completed"]
    assert doomed not in orch.provider.submitted
