"""What admission and the providers' health write per generation, against the real store, and why it stays
exact with fewer writes (issue 29):

- a provider key without a limit keeps no slots of its own: the account's slot names the key, so what it runs
  is still shown, and a key given a limit (configured, or learned from a refusal) adopts what it runs;
- an account's slot given back below its cap says nobody of the account can be waiting for it;
- a provider's lines are read at admission only while its pools are marked (someone joined a line since they
  were last found empty), and a mark is never cleared over a join made after the pools were read;
- successes are written per key a few at a time, failures at once after them; a success written late closes
  no breaker a later failure opened, a probe's closes its key at once, and a graceful stop writes them all."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.support.fakes import ManualClock
from tests.support.generations import insert_generation
from tests.support.held_provider import HeldOrchestration
from tests.support.waiting import eventually
from videogen_common.failures import ErrorCode, GenerationError
from videogen_common.ids import new_id
from videogen_common.records.admission import ProviderPool
from videogen_common.records.generation import GenerationRecord
from videogen_common.repositories.provider_health import ProviderHealthRepository
from videogen_common.repositories.provider_pools import ProviderPoolRepository
from videogen_common.repositories.slots import SlotRepository
from videogen_common.routing import Breaker
from videogen_common.store import Store
from videogen_orchestrator.health import Breakers
from videogen_orchestrator.slots import AccountSlots

T0 = datetime(2026, 11, 26, 9, 0, tzinfo=UTC)
FAULT = GenerationError(ErrorCode.PROVIDER_UNAVAILABLE, "the provider is down", retriable=True)


async def _insert(store: Store, clock: ManualClock, account: str = "acme") -> str:
    """A generation as the api creates it, a millisecond after the previous one."""
    now = clock.advance(timedelta(milliseconds=1))
    doc = await insert_generation(store, now, account_id=account, generation_id=new_id("gen", now))
    return str(doc["_id"])


@pytest.fixture
async def unlimited(
    store: Store, base_env: dict[str, str], tmp_path: Path
) -> AsyncIterator[HeldOrchestration]:
    """Instances whose mock provider (held by the test) has no limit of ours."""
    instances = HeldOrchestration(store, base_env, tmp_path / "media", {"account_max_in_flight": 64})
    try:
        yield instances
    finally:
        await instances.stop()


async def test_a_key_without_a_limit_keeps_no_slots_and_shows_what_runs_from_its_accounts_slots(
    unlimited: HeldOrchestration, store: Store
) -> None:
    runner = unlimited.runner("orch-a")
    ids = [await _insert(store, unlimited.clock, account) for account in ("acme", "acme", "globex")]
    assert [await runner.start(gid) for gid in ids] == [True] * 3
    await unlimited.provider.until_submitted(3)

    pools = ProviderPoolRepository(store)
    [stored] = await pools.of_provider("mock")
    assert (stored.effective, stored.holders) == (None, ())  # nothing counted against the key
    acme = await store.account_slots.find_one({"_id": "acme"})
    assert acme is not None and sorted(acme["holders"]) == sorted(ids[:2])
    assert sorted((k["g"], k["p"]) for k in acme["keys"]) == sorted((gid, "mock") for gid in ids[:2])
    [shown] = [pool for pool in await pools.everything() if pool.id == "mock"]
    assert shown.running == 3 and shown.running_by_account() == {"acme": 2, "globex": 1}

    for gid in ids:
        unlimited.provider.finish(gid)
    await unlimited.idle()
    [shown] = [pool for pool in await pools.everything() if pool.id == "mock"]
    assert shown.running == 0
    assert await store.account_slots.count_documents({"keys.0": {"$exists": True}}) == 0


async def test_a_key_given_a_limit_adopts_the_generations_it_runs(store: Store) -> None:
    pools, slots = ProviderPoolRepository(store), SlotRepository(store)
    await pools.register(ProviderPool("mock", "mock", None, None, None))
    for gid, account in (("gen_a", "acme"), ("gen_b", "globex")):
        assert await slots.take(account, gid, 16, key="mock")

    limited = await pools.register(ProviderPool("mock", "mock", None, 2, 2))  # configured: a limit of 2

    [pool] = await pools.of_provider("mock")
    assert (limited.effective, pool.effective) == (2, 2)
    assert sorted((h.generation_id, h.account_id) for h in pool.holders) == [
        ("gen_a", "acme"),
        ("gen_b", "globex"),
    ]
    assert not await pools.take(pool, "gen_c", "acme", T0)  # what it ran counts against the new limit


async def test_a_refusal_on_a_key_without_a_limit_learns_half_of_what_it_runs(store: Store) -> None:
    pools, slots = ProviderPoolRepository(store), SlotRepository(store)
    await pools.register(ProviderPool("luma", "luma", None, None, None))
    for i in range(4):
        assert await slots.take("acme", f"gen_{i}", 16, key="luma")

    refused = await pools.refused("luma", T0, retry_after=2.0)

    assert refused is not None and (refused.effective, refused.running) == (2, 4)
    [pool] = await pools.of_provider("luma")
    assert (pool.effective, pool.running, pool.room(T0 + timedelta(seconds=3))) == (2, 4, 0)


async def test_a_slot_given_back_below_the_cap_says_nobody_of_the_account_waits_for_it(store: Store) -> None:
    accounts = AccountSlots(store, cap=2)
    assert await accounts.acquire("acme", "gen_a") and await accounts.acquire("acme", "gen_b")
    assert not await accounts.acquire("acme", "gen_c")  # at its cap: gen_c would wait for the account

    assert await accounts.give_back("acme", "gen_a") is True  # it was at its cap: look for its waiting work
    assert await accounts.give_back("acme", "gen_b") is False  # below it: nothing waits for this slot
    assert await accounts.give_back("acme", "gen_b") is False  # held none
    assert await accounts.holders("acme") == []


async def test_a_providers_lines_are_marked_by_joins_and_a_mark_is_never_cleared_over_a_later_join(
    store: Store,
) -> None:
    pools = ProviderPoolRepository(store)
    await pools.register(ProviderPool("luma", "luma", None, 2, 2))
    [new] = await pools.of_provider("luma")
    assert new.lines_marked  # a pool from before the marks were kept: its lines are looked at

    await pools.lines_empty([new])
    [cleared] = await pools.of_provider("luma")
    assert not cleared.lines_marked

    await pools.joined_line("luma")
    [read] = await pools.of_provider("luma")
    assert read.lines_marked
    await pools.joined_line("luma")  # another joins after the pools were read ...
    await pools.lines_empty([read])  # ... so lines found empty before that join clear nothing
    [still] = await pools.of_provider("luma")
    assert still.lines_marked and (still.joins, still.cleared) == (2, 0)


async def test_a_waiting_generation_marks_its_providers_pools_and_a_look_at_empty_lines_clears_them(
    store: Store, base_env: dict[str, str], tmp_path: Path
) -> None:
    held = HeldOrchestration(
        store, base_env, tmp_path / "media", {"account_max_in_flight": 64, "mock_max_concurrency": 1}
    )
    try:
        runner = held.runner("orch-a")
        pools = ProviderPoolRepository(store)

        async def marked() -> bool:
            [pool] = await pools.of_provider("mock")
            return pool.lines_marked

        first, second, third = [await _insert(store, held.clock) for _ in range(3)]
        assert await runner.start(first)
        assert not await marked()  # its admission found nobody in line and cleared the new pool's mark
        assert not await runner.start(second)  # no room: it waits in line
        assert await marked()

        held.provider.finish(first)
        await held.provider.until_submitted(2)
        held.provider.finish(second)
        await held.idle()
        assert await held.admission_of(runner).next_waiting("mock") is None  # the lines are found empty
        assert await runner.start(third)  # a newcomer looks at the lines once more, and clears the mark
        assert not await marked()
        held.provider.finish(third)
        await held.idle()
    finally:
        await held.stop()


def _record(generation_id: str, pool: str = "runway") -> GenerationRecord:
    return GenerationRecord.from_doc(
        {
            "_id": generation_id,
            "account_id": "acme",
            "prompt": "a fox",
            "provider": "runway",
            "provider_pool": pool,
            "duration": 5,
            "status": "processing",
            "created_at": T0,
            "updated_at": T0,
            "version": 1,
        }
    )


async def test_successes_are_written_together_and_a_failure_at_once_after_them(store: Store) -> None:
    health, stored = (
        Breakers(store, ManualClock(T0), failures=3, flush_seconds=600),
        ProviderHealthRepository(store),
    )
    for i in range(3):
        await health.record(_record(f"gen_{i}"), None, 10.0 + i)
    assert await stored.get("runway") is None  # gathered, not written yet

    await health.record(_record("gen_3"), FAULT)

    written = await stored.get("runway")
    assert written is not None
    assert (written.outcomes, written.seconds, written.failures) == (
        (True, True, True, False),
        (10, 11, 12),
        1,
    )


async def test_gathered_successes_are_written_within_the_interval_and_by_a_graceful_stop(
    store: Store,
) -> None:
    stored = ProviderHealthRepository(store)
    timed = Breakers(store, ManualClock(T0), flush_seconds=0.05)
    await timed.record(_record("gen_a"), None, 5.0)

    async def written() -> bool:
        return (health := await stored.get("runway")) is not None and health.outcomes == (True,)

    await eventually(written, what="the gathered success written")

    stopping = Breakers(store, ManualClock(T0), flush_seconds=600)
    await stopping.record(_record("gen_b", pool="luma"), None, 7.0)
    await stopping.close()
    luma = await stored.get("luma")
    assert luma is not None and (luma.outcomes, luma.seconds) == ((True,), (7.0,))


async def test_a_success_written_late_does_not_close_a_breaker_a_later_failure_opened(store: Store) -> None:
    clock = ManualClock(T0)
    one, other = (Breakers(store, clock, failures=2, flush_seconds=600) for _ in range(2))
    await one.record(_record("gen_ok"), None, 3.0)  # gathered by one replica ...
    clock.advance(timedelta(seconds=1))
    for gid in ("gen_x", "gen_y"):  # ... while the other sees the key fail twice after it: open
        await other.record(_record(gid), FAULT)

    await one.flush()

    health = await ProviderHealthRepository(store).get("runway")
    assert health is not None and health.breaker(clock.now()) is Breaker.OPEN and health.failures == 2
    assert health.outcomes == (False, False, True)  # the success still counts toward the success rate


async def test_a_probes_success_closes_its_key_at_once(store: Store) -> None:
    clock = ManualClock(T0)
    health = Breakers(store, clock, failures=1, cooldown_seconds=30, flush_seconds=600)
    await health.record(_record("gen_x"), FAULT)
    clock.advance(timedelta(seconds=31))  # half-open
    assert await health.take_probe("runway", "runway", "gen_probe")

    await health.record(_record("gen_probe"), None, 4.0)

    stored = await ProviderHealthRepository(store).get("runway")
    assert stored is not None and stored.breaker(clock.now()) is Breaker.CLOSED and stored.probe is None
