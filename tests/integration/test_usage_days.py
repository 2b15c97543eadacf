"""Usage read from settled days' rows, against the real store: a day an hour past its end whose generations
have all ended is summed once and kept, and read back from its row (a document written into it afterwards
changes nothing: the proof the row was read); a day with a generation still unfinished is summed at each read
until it has none; the range's partial days and the days not settled yet are read live; two replicas writing
a day's row at once keep one; and every answer (groups, tries by model, budgets' charges by day, for the
account and for one key) equals the one read live from the generations."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.support.held_writes import HeldWrites
from videogen_common.budgets import Meter
from videogen_common.domain import Provider, Status
from videogen_common.generations import new_record
from videogen_common.repositories.usage import UsageRepository, split
from videogen_common.store import Store

NOW = datetime(2026, 11, 21, 8, 47, tzinfo=UTC)
MONTH = (NOW - timedelta(days=30), NOW)


async def made(
    store: Store,
    name: str,
    at: datetime,
    *,
    status: Status = Status.COMPLETED,
    key: str | None = "key_a",
    provider: Provider = Provider.LUMA,
    duration: int = 5,
    **fields: Any,
) -> None:
    record = new_record(
        generation_id=f"gen_{name}",
        account_id="acme",
        prompt="p",
        provider=provider,
        duration=duration,
        now=at,
        api_key_id=key,
        estimated_cost=round(0.1 * duration, 4),
    )
    attempts = [{"provider": provider.value, "model": "ray-2", "started_at": at, "ended_at": at, "cost": 0.5}]
    await store.generations.insert_one(
        {**record.to_doc(), "status": status.value, "cost": 0.5, "provider_attempts": attempts, **fields}
    )


async def history(store: Store) -> None:
    """Generations on five days of the month and on the range's partial days, two keys, three statuses."""
    for offset in (29, 20, 12, 5, 1):
        day = NOW - timedelta(days=offset)
        await made(store, f"{offset}_a", day, duration=4)
        await made(store, f"{offset}_b", day + timedelta(minutes=3), key="key_b", provider=Provider.RUNWAY)
        await made(store, f"{offset}_f", day + timedelta(minutes=5), status=Status.FAILED, duration=8)
    await made(store, "edge_start", MONTH[0] + timedelta(hours=1))  # the range's first, partial, day
    await made(store, "today", NOW - timedelta(minutes=5), status=Status.PROCESSING)


async def answers(usage: UsageRepository, key: str | None, now: datetime) -> tuple[object, ...]:
    groups = await usage.groups("acme", *MONTH, key, now=now)
    return (
        sorted(groups, key=lambda g: (g.day, g.provider, g.status, g.key or "")),
        await usage.by_model("acme", *MONTH, key, now=now),
        await usage.by_provider("acme", *MONTH, key, now=now),
        await usage.charged_by_day("acme", key, *MONTH, now=now),
    )


def test_a_range_is_its_settled_whole_days_and_the_rest_live() -> None:
    days, live = split(*MONTH, NOW)
    assert days[0] == datetime(2026, 10, 23, tzinfo=UTC)  # the first midnight after the range's start
    assert days[-1] == datetime(2026, 11, 20, tzinfo=UTC)  # yesterday: ended more than SETTLED ago
    assert len(days) == 29
    assert live == [(MONTH[0], days[0]), (datetime(2026, 11, 21, tzinfo=UTC), NOW)]
    # Yesterday is not settled until an hour into today.
    early = datetime(2026, 11, 21, 0, 30, tzinfo=UTC)
    assert split(early - timedelta(days=30), early, early)[0][-1] == datetime(2026, 11, 19, tzinfo=UTC)
    # A range within one day is live alone.
    assert split(NOW - timedelta(hours=2), NOW, NOW) == ([], [(NOW - timedelta(hours=2), NOW)])


@pytest.mark.parametrize("key", [None, "key_a", "key_b"])
async def test_rows_answer_what_the_generations_answer(store: Store, key: str | None) -> None:
    await history(store)
    usage = UsageRepository(store)
    # Read with now at the range's start, no day is settled: every part is read live.
    live = await answers(usage, key, MONTH[0])
    assert await store.usage_days.count_documents({}) == 0
    first = await answers(usage, key, NOW)  # sums each settled day and keeps it
    again = await answers(usage, key, NOW)  # reads the rows
    assert first == live
    assert again == live
    assert await store.usage_days.count_documents({}) == 5  # the days with generations


async def test_a_kept_day_is_read_from_its_row(store: Store) -> None:
    await history(store)
    usage = UsageRepository(store)
    before = await answers(usage, None, NOW)
    # Written into a settled day after its row was kept (what the service never does): the row answers.
    await made(store, "late", NOW - timedelta(days=12, minutes=-30), duration=10)
    assert await answers(usage, None, NOW) == before
    # The same written into today's part, read live, is counted.
    seconds_before = sum(g.seconds for g in await usage.groups("acme", *MONTH, None, now=NOW))
    await made(store, "now", NOW - timedelta(minutes=1), duration=10)
    assert sum(g.seconds for g in await usage.groups("acme", *MONTH, None, now=NOW)) == seconds_before + 10


async def test_a_day_with_an_unfinished_generation_is_summed_again_until_it_has_none(store: Store) -> None:
    await history(store)
    day = NOW - timedelta(days=5)
    await made(store, "stuck", day + timedelta(hours=2), status=Status.QUEUED)
    usage = UsageRepository(store)
    groups = await usage.groups("acme", *MONTH, None, now=NOW)
    assert any(g.status == Status.QUEUED.value for g in groups)
    name = day.strftime("%Y-%m-%d")
    assert await store.usage_days.find_one({"account_id": "acme", "day": name}) is None
    assert await store.usage_days.count_documents({}) == 4
    # It ends; the next read counts it as it ended, and keeps the day.
    await store.generations.update_one({"_id": "gen_stuck"}, {"$set": {"status": Status.FAILED.value}})
    groups = await usage.groups("acme", *MONTH, None, now=NOW)
    assert not any(g.status == Status.QUEUED.value for g in groups)
    row = await store.usage_days.find_one({"account_id": "acme", "day": name})
    assert row is not None
    assert sum(g["generations"] for g in row["groups"]) == 4


async def test_a_failure_before_any_submit_charges_no_budget_on_a_kept_day(store: Store) -> None:
    day = NOW - timedelta(days=3)
    await made(store, "charged", day, duration=6)
    await made(store, "given_back", day, status=Status.FAILED, duration=9)
    await made(store, "failed_late", day, status=Status.FAILED, duration=7, submit_started_at=day)
    usage = UsageRepository(store)
    charged = await usage.charged_by_day("acme", None, *MONTH, now=NOW)
    assert (
        await store.usage_days.find_one({"day": day.strftime("%Y-%m-%d")}) is not None
    )  # kept (empty days too)
    assert charged == await usage.charged_by_day("acme", None, *MONTH, now=NOW)
    assert charged == {day.strftime("%d"): {Meter.VIDEO_SECONDS: 13, Meter.COST: 1_300_000}}


async def test_two_first_reads_of_a_day_writing_its_row_at_once_keep_one_row_and_answer_alike(
    store: Store,
) -> None:
    await history(store)
    day = (NOW - timedelta(days=5)).strftime("%Y-%m-%d")
    readers = [UsageRepository(store) for _ in range(2)]  # as two of the api's replicas
    picks = HeldWrites(lambda name, filter, _: name == "usage_days" and filter["day"] == day)
    with picks.installed() as held:
        reads = [asyncio.ensure_future(answers(usage, None, NOW)) for usage in readers]
        await held.until_held(2)  # both summed the day and are about to write its row
        held.release()
        answered = await asyncio.gather(*reads)
    assert answered[0] == answered[1] == await answers(UsageRepository(store), None, MONTH[0])
    assert await store.usage_days.count_documents({"day": day}) == 1
    assert await store.usage_days.count_documents({}) == 5  # the days with generations


async def test_a_day_read_while_it_had_no_generation_keeps_no_row(store: Store) -> None:
    usage = UsageRepository(store)
    assert await usage.groups("acme", *MONTH, None, now=NOW) == []
    assert await store.usage_days.count_documents({}) == 0
    # Written there afterwards (a test's seed, a load test's history): counted at the next read.
    await made(store, "seeded", NOW - timedelta(days=7))
    assert [g.generations for g in await usage.groups("acme", *MONTH, None, now=NOW)] == [1]
    assert await store.usage_days.count_documents({}) == 1
