"""Admission to a provider, against the real MongoDB: a provider's limit is the whole deployment's (two
instances racing never put more at the provider), generations beyond it wait ``queued`` for
``provider_capacity`` and start as slots free, a freed slot goes to the account with the fewest running,
priorities order one account's own line, several keys are pools whose limits add up (and a task is polled with
the key that made it), a refusal for capacity sends a generation back in line instead of failing it, and a
waiting generation's client deadline fails it where it waits.

The mock provider is held by the test (``HeldProvider``) so "at once" is exact; the refusal tests use the fake
of Luma's API with its own concurrency (429 beyond it), over HTTP. The line's order is tested as each freed
slot meets it (``admission_standby`` off); a successor on standby, chosen a task earlier, has its own tests
(``test_admission_standby.py``)."""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import generate_latest

from tests.support.fake_providers.luma import FakeLuma
from tests.support.fakes import ManualClock
from tests.support.generations import insert_generation
from tests.support.held_provider import HeldOrchestration
from tests.support.orchestration import ProviderRun, provider_run
from tests.support.prometheus import sample
from tests.support.waiting import eventually
from videogen_common.domain import Status
from videogen_common.ids import new_id
from videogen_common.records.admission import Holder, ProviderPool
from videogen_common.repositories.provider_pools import ProviderPoolRepository
from videogen_common.store import Store
from videogen_orchestrator.runner import Runner

TICK = timedelta(milliseconds=1)


def TICKING() -> ManualClock:
    """A clock that moves with real time: a refusal's pause (its backoff) must end for the test to."""
    return ManualClock(ticking=True)


LIMIT = 2


class Held(HeldOrchestration):
    """Instances on one store whose mock provider is held by the test, its limit ``LIMIT`` for the whole
    deployment, accounts' own caps out of the way."""

    def __init__(self, store: Store, base_env: dict[str, str], media_root: Path) -> None:
        super().__init__(
            store,
            base_env,
            media_root,
            {"account_max_in_flight": 64, "mock_max_concurrency": LIMIT, "admission_standby": False},
        )

    async def create(self, count: int, account: str = "acme", **fields: Any) -> list[str]:
        """Generations as the api creates them, each a millisecond after the previous (oldest first)."""
        ids = []
        for i in range(count):
            now = self.clock.advance(TICK)
            gid = new_id("gen", now)
            doc = await insert_generation(
                self.store, now, account_id=account, prompt=f"{account} {i}", generation_id=gid, **fields
            )
            ids.append(doc["_id"])
        return ids

    async def start_all(self, runner: Runner, ids: list[str]) -> list[bool]:
        return [await runner.start(gid) for gid in ids]

    async def finish_in_turn(self, ids: list[str]) -> None:
        """Let the generations at the provider finish one by one, each time waiting for the next start."""
        for done in range(len(ids)):
            gid = self.provider.submitted[done]
            self.provider.finish(gid)
            await self.provider.until_submitted(min(len(ids), done + 1 + LIMIT))
        await self.idle()


@pytest.fixture
async def held(store: Store, base_env: dict[str, str], tmp_path: Path) -> AsyncIterator[Held]:
    instances = Held(store, base_env, tmp_path / "media")
    try:
        yield instances
    finally:
        await instances.stop()


async def test_a_providers_limit_holds_across_instances_and_the_rest_wait_for_capacity(held: Held) -> None:
    instances = [held.runner("orch-a"), held.runner("orch-b")]
    ids = await held.create(8)

    # Every request arrives at both instances at once (a redelivery), all at the same moment.
    started = await asyncio.gather(*(r.start(gid) for gid in ids for r in instances))

    assert sum(started) == LIMIT
    submitted = await held.provider.until_submitted(LIMIT)
    await asyncio.sleep(0)  # let any wrongly started actor reach the provider
    assert len(held.provider.submitted) == LIMIT
    [pool] = await ProviderPoolRepository(held.store).of_provider("mock")
    assert (pool.limit, pool.effective, sorted(h.generation_id for h in pool.holders)) == (
        LIMIT,
        LIMIT,
        sorted(submitted),
    )
    for gid in ids:
        if gid not in submitted:
            doc = await held.get(gid)
            assert (doc["status"], doc["queue_reason"], doc["lease_owner"]) == (
                "queued",
                "provider_capacity",
                None,
            )

    await held.finish_in_turn(ids)

    assert [(await held.get(gid))["status"] for gid in ids] == ["completed"] * len(ids)
    assert sorted(held.provider.submitted) == sorted(ids)  # each once
    assert held.provider.peak == LIMIT
    [pool] = await ProviderPoolRepository(held.store).of_provider("mock")
    assert pool.holders == ()


async def test_a_freed_slot_goes_to_the_account_with_the_fewest_running(held: Held) -> None:
    runner = held.runner("orch-a")
    big = await held.create(5, "big")
    first_small, second_small = await held.create(1, "small-1") + await held.create(1, "small-2")

    assert await held.start_all(runner, [*big, first_small, second_small]) == [True, True] + [False] * 5
    await held.finish_in_turn([*big, first_small, second_small])

    # The big account's burst came first, but each freed slot went to the account with the fewest running
    # (the one waiting longest among equals): small-1 (0 running) before big (1); then big (0, waiting since
    # before small-2) before small-2 (0); then small-2 (0) before big (1).
    assert held.provider.submitted == [big[0], big[1], first_small, big[2], second_small, big[3], big[4]]


async def test_a_provider_is_contended_while_work_waits_for_it(held: Held) -> None:
    # Then its tasks are polled at the base interval (deadlines.poll_pause): a slot freed late is someone's
    # loss.
    runner = held.runner("orch-a")
    admission = held.admission_of(runner)
    ids = await held.create(LIMIT + 1)
    assert not admission.contended("mock")

    assert await held.start_all(runner, ids) == [True] * LIMIT + [False]
    assert admission.contended("mock")
    await held.finish_in_turn(ids)

    assert await admission.next_waiting("mock") is None  # a look at the lines: nobody waits now
    assert not admission.contended("mock")


async def test_priorities_order_one_accounts_own_line(held: Held) -> None:
    runner = held.runner("orch-a", mock_max_concurrency=1)
    [holder] = await held.create(1)
    low = await held.create(1, priority="low")
    normal = await held.create(2)
    high = await held.create(2, priority="high")
    ids = [holder, *low, *normal, *high]
    assert await held.start_all(runner, ids) == [True] + [False] * 5

    for done in range(len(ids)):
        held.provider.finish(held.provider.submitted[done])
        await held.provider.until_submitted(min(len(ids), done + 2))
    await held.idle()

    assert held.provider.submitted == [holder, *high, *normal, *low]


async def test_several_keys_are_pools_whose_limits_add_up_and_each_task_is_polled_with_its_key(
    store: Store, base_env: dict[str, str], tmp_path: Path
) -> None:
    async with FakeLuma(task_seconds=math.inf) as fake:
        second = fake.add_key()
        keys = [
            {"name": "a", "key": fake.api_key, "max_concurrency": 1},
            {"name": "b", "key": second, "max_concurrency": 2},
        ]
        async with provider_run(
            store, base_env, tmp_path / "media", fake, luma_api_key=None, luma_api_keys=keys, max_in_flight=16
        ) as run:
            assert sorted(run.providers) == ["luma/a", "luma/b"]
            ids = [await run.start() for _ in range(3)] + [(await run.insert())["_id"] for _ in range(2)]
            assert [await run.runner.start(gid) for gid in ids[3:]] == [False, False]

            async def three_tasks() -> bool:
                return len(fake.tasks) == 3

            await eventually(three_tasks)
            assert fake.peak_by_key == {fake.api_key: 1, second: 2}
            pools = {
                pool.id: pool.running for pool in await ProviderPoolRepository(store).of_provider("luma")
            }
            assert pools == {"luma/a": 1, "luma/b": 2}
            for gid in ids[3:]:
                assert (await run.get(gid))["queue_reason"] == "provider_capacity"

            for task in fake.tasks.values():
                task.run_seconds = 0
            fake.task_seconds = 0
            await run.runner.wait_idle()

            docs = [await run.get(gid) for gid in ids]
            assert [doc["status"] for doc in docs] == ["completed"] * 5, [doc["error"] for doc in docs]
            assert sorted(doc["provider_pool"] for doc in docs).count("luma/a") >= 1
            # Each task was read with the key that made it (the provider answers 404 to any other key).
            assert len(fake.submissions) == 5


async def test_a_refusal_for_capacity_sends_the_generation_back_in_line_and_lowers_the_limit(
    store: Store, base_env: dict[str, str], tmp_path: Path
) -> None:
    # The first tasks run until a submit has been refused: two run while four are admitted, so the third and
    # fourth submits are refused whatever the machine's speed (a task ending first would make room for them).
    async with FakeLuma(task_seconds=math.inf) as fake:
        fake.max_running = 2  # the provider's real limit, lower than the one we were told
        async with provider_run(
            store, base_env, tmp_path / "media", fake, TICKING(), luma_max_concurrency=4, max_in_flight=16
        ) as run:
            ids = [(await run.insert())["_id"] for _ in range(8)]
            for gid in ids:
                await run.runner.start(gid)

            async def refused() -> bool:
                return fake.capacity_refusals >= 1

            await eventually(refused, timeout=30, what="a submit refused for capacity")
            fake.task_seconds = 0.2  # from now on tasks end by themselves, the first two too
            for task in fake.tasks.values():
                task.run_seconds = min(task.run_seconds, 0.2)
            await _until_all_finished(run, ids)

            docs = [await run.get(gid) for gid in ids]
            assert [doc["status"] for doc in docs] == ["completed"] * 8, [doc["error"] for doc in docs]
            assert fake.peak_running <= 2
            assert len(fake.submissions) == 8  # one task each
            assert 1 <= fake.capacity_refusals <= 4  # the limit fell after the first refusals
            [pool] = await ProviderPoolRepository(store).of_provider("luma")
            # Lowered: halved at a refusal, which remembers the level it was refused at (the ceiling it climbs
            # back to quickly; whether it is back there by the end depends on the run's timing).
            assert pool.limit == 4 and pool.ceiling is not None and pool.ceiling <= 4
            assert pool.effective is not None
            # Seen by SREs: every refusal counted for the key, and every wait in line observed.
            exposition = generate_latest(run.wiring.metrics.registry).decode()
            labels = {"provider": "luma", "pool": pool.id}
            assert (
                sample(exposition, "videogen_provider_capacity_refusals_total", **labels)
                == fake.capacity_refusals
            )
            waited = sample(exposition, "videogen_admission_wait_seconds_count", provider="luma")
            assert waited is not None and waited >= fake.capacity_refusals  # each refused one waited again


async def test_a_provider_lowering_its_limit_mid_run_fails_nothing(
    store: Store, base_env: dict[str, str], tmp_path: Path
) -> None:
    # The first four tasks run until the test ends one: the provider then still runs three, over its new
    # limit of two, so the submit that the freed slot lets through is refused, whatever the machine's speed.
    async with FakeLuma(task_seconds=math.inf) as fake:
        fake.max_running = 4
        async with provider_run(
            store, base_env, tmp_path / "media", fake, TICKING(), luma_max_concurrency=4, max_in_flight=32
        ) as run:
            ids = [(await run.insert())["_id"] for _ in range(16)]
            for gid in ids:
                await run.runner.start(gid)

            async def four_running() -> bool:
                return fake.running_now() == 4

            await eventually(four_running)
            fake.max_running = 2  # another user of the key, or a lower tier
            next(iter(fake.tasks.values())).run_seconds = 0  # one ends; three still run

            async def refused() -> bool:
                return fake.capacity_refusals >= 1

            await eventually(refused, timeout=30, what="a submit refused for capacity")
            assert len(fake.submissions) == 4  # the refused one made no task
            fake.task_seconds = 0.2  # from now on tasks end by themselves, the first three too
            for task in fake.tasks.values():
                task.run_seconds = min(task.run_seconds, 0.2)
            await _until_all_finished(run, ids)

            docs = [await run.get(gid) for gid in ids]
            assert [doc["status"] for doc in docs] == ["completed"] * 16, [doc["error"] for doc in docs]
            assert len(fake.submissions) == 16
            # The drop was felt (refused while three ran) and learned; about one refusal a generation at most.
            assert 1 <= fake.capacity_refusals <= len(ids)
            [pool] = await ProviderPoolRepository(store).of_provider("luma")
            assert pool.ceiling is not None and pool.ceiling <= 4


async def test_a_client_deadline_passing_while_it_waits_fails_it_without_a_submit(held: Held) -> None:
    runner = held.runner("orch-a", mock_max_concurrency=1)
    [holder] = await held.create(1)
    [waiting] = await held.create(1, deadline_at=held.clock.now() + timedelta(seconds=10))
    assert await held.start_all(runner, [holder, waiting]) == [True, False]
    assert (await held.get(waiting))["wait_deadline"] is not None

    held.clock.advance(timedelta(seconds=11))
    await held.reconciler(runner).run_once()

    doc = await held.get(waiting)
    assert (doc["status"], doc["error"]["code"]) == ("failed", "deadline_exceeded")
    assert "wait_deadline" not in doc
    assert waiting not in held.provider.submitted
    held.provider.finish(holder)
    await held.idle()


async def test_time_waiting_in_line_does_not_count_toward_the_deployments_deadline(held: Held) -> None:
    runner = held.runner("orch-a", mock_max_concurrency=1, generation_deadline_seconds=60)
    [holder, waiting] = await held.create(2)
    assert await held.start_all(runner, [holder, waiting]) == [True, False]
    held.clock.advance(timedelta(minutes=5))  # far past 60 s since it was created

    held.provider.finish(holder)
    await held.provider.until_submitted(2)
    held.provider.finish(waiting)
    await held.idle()

    doc = await held.get(waiting)
    assert doc["status"] == "completed", doc["error"]
    assert doc["admitted_at"] == held.clock.now()


async def test_the_reconciler_gives_back_the_provider_slot_a_dead_instance_left_on_a_finished_generation(
    held: Held,
) -> None:
    runner = held.runner("orch-a", mock_max_concurrency=1)
    [finished] = await held.create(1, status=Status.COMPLETED.value)
    await held.admission_of(runner).register()
    pools = ProviderPoolRepository(held.store)
    [pool] = await pools.of_provider("mock")
    # Its instance wrote the terminal state and died before giving the slot back.
    assert await pools.take(pool, finished, "acme", held.clock.now())
    [waiting] = await held.create(1)
    assert await runner.start(waiting) is False
    await runner.wait_idle()

    await held.reconciler(runner).run_once()

    [pool] = await pools.of_provider("mock")
    assert pool.holders == (Holder(waiting, "acme"),)
    assert await held.provider.until_submitted(1) == [waiting]


async def _until_all_finished(run: ProviderRun, ids: list[str]) -> None:
    async def finished() -> bool:
        return all([Status((await run.get(gid))["status"]).terminal for gid in ids])

    await eventually(finished, timeout=30)
    await run.runner.wait_idle()


async def test_a_refused_keys_limit_halves_once_a_burst_then_climbs_quickly_to_below_where_it_was_refused(
    store: Store,
) -> None:
    pools = ProviderPoolRepository(store)
    now = datetime(2026, 11, 26, 9, 0, tzinfo=UTC)
    await pools.register(ProviderPool("luma", "luma", None, 8, 8))

    async def effective() -> int | None:
        [pool] = await pools.of_provider("luma")
        return pool.effective

    # A burst of refusals halves it once (and pauses the key for the provider's Retry-After).
    for _ in range(3):
        await pools.refused("luma", now, retry_after=2.0)
    [pool] = await pools.of_provider("luma")
    assert (pool.effective, pool.ceiling, pool.refusals_in_row) == (4, 8, 3)
    assert pool.paused(now + timedelta(seconds=1)) and not pool.paused(now + timedelta(seconds=3))

    # One acceptance a step back to just below the level it was refused at ...
    climbed = []
    for _ in range(3):
        [pool] = await pools.of_provider("luma")
        await pools.accepted(pool)
        climbed.append(await effective())
    assert climbed == [5, 6, 7]
    # ... then as many acceptances in a row as it is high for each step past it.
    for _ in range(6):
        [pool] = await pools.of_provider("luma")
        await pools.accepted(pool)
    assert await effective() == 7
    [pool] = await pools.of_provider("luma")
    await pools.accepted(pool)
    assert await effective() == 8
