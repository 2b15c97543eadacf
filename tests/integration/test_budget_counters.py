"""Budget counters against the real store, below the api: reservations by many concurrent callers (each its
own repository, as replicas are) never pass a limit; a refusal by one owner's budget takes back what another's
took; the give-back; the threshold detection, once per period however many look at once and whatever dies
in between; and what a budget set mid-period starts from (the generations' own charged seconds)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from videogen_common import budget_alerts
from videogen_common.budgets import (
    ACCOUNT,
    BY_NAME,
    Hold,
    Limits,
    Meter,
    Period,
    Remaining,
    period_end,
    period_start,
)
from videogen_common.domain import Provider, Status
from videogen_common.generations import new_record
from videogen_common.repositories.budgets import BudgetCounterRepository, Refusal, counter_id
from videogen_common.repositories.usage import UsageRepository
from videogen_common.store import Store

NOW = datetime(2026, 11, 30, 21, 0, tzinfo=UTC)
DAILY = Limits({"daily_video_seconds": 30})


async def test_concurrent_reservations_never_pass_a_limit(store: Store) -> None:
    async def one() -> Hold | Refusal:
        return await BudgetCounterRepository(store).reserve(
            "acme", [(ACCOUNT, DAILY)], {Meter.VIDEO_SECONDS: 1}, NOW
        )

    outcomes = await asyncio.gather(*(one() for _ in range(100)))
    assert sum(isinstance(o, Hold) for o in outcomes) == 30
    refusal = next(o for o in outcomes if isinstance(o, Refusal))
    assert (refusal.left.used, refusal.left.remaining, refusal.requested) == (30, 0, 1)
    counter = await store.budget_counters.find_one({"_id": counter_id("acme", ACCOUNT, "2026-11")})
    assert counter is not None
    assert (counter["video_seconds"], counter["days"]["30"]["video_seconds"]) == (30, 30)
    assert counter["expires_at"] > period_end(Period.MONTH, NOW)


async def test_a_refusal_by_one_owner_takes_back_what_the_others_took(store: Store) -> None:
    counters = BudgetCounterRepository(store)
    owners = [
        (ACCOUNT, Limits({"monthly_video_seconds": 100})),
        ("key_1", Limits({"daily_video_seconds": 7})),
    ]
    held = await counters.reserve("acme", owners, {Meter.VIDEO_SECONDS: 5}, NOW)
    assert isinstance(held, Hold) and len(held.counters) == 2
    refused = await counters.reserve("acme", owners, {Meter.VIDEO_SECONDS: 5}, NOW)
    assert isinstance(refused, Refusal) and refused.left.owner == "key_1"
    states = await counters.remaining("acme", owners, NOW)
    assert [(s.owner, s.used) for s in states] == [(ACCOUNT, 5), ("key_1", 5)]
    await counters.give_back(held)
    assert [s.used for s in await counters.remaining("acme", owners, NOW)] == [0, 0]
    # A charge larger than the limit itself is refused without touching anything.
    too_big = await counters.reserve("acme", owners, {Meter.VIDEO_SECONDS: 8}, NOW)
    assert isinstance(too_big, Refusal) and too_big.left.budget == BY_NAME["daily_video_seconds"]


async def test_a_threshold_is_detected_once_however_many_look_at_once(store: Store) -> None:
    counters = BudgetCounterRepository(store)
    owners = [(ACCOUNT, DAILY)]
    for _ in range(23):  # 23 of 30: below 80%
        await counters.reserve("acme", owners, {Meter.VIDEO_SECONDS: 1}, NOW)
    assert await budget_alerts.announce_thresholds(store, "acme", owners, 80, NOW, service="test") == []
    await counters.reserve("acme", owners, {Meter.VIDEO_SECONDS: 1}, NOW)  # 24 of 30: 80%
    announced = await asyncio.gather(
        *(budget_alerts.announce_thresholds(store, "acme", owners, 80, NOW, service="test") for _ in range(8))
    )
    assert sum(len(a) for a in announced) >= 1  # each who saw it first announced it...
    events = await store.audit_events.find({"type": "budget.threshold_reached"}).to_list(None)
    assert len(events) == 1  # ...as one record
    assert events[0]["data"] == {
        "budget": "daily_video_seconds",
        "api_key_id": None,
        "threshold_percent": 80,
        "limit": 30,
        "used": 24,
        "remaining": 6,
        "period_start": "2026-11-30T00:00:00.000Z",
        "resets_at": "2026-12-01T00:00:00.000Z",
    }
    assert await budget_alerts.announce_thresholds(store, "acme", owners, 80, NOW, service="test") == []
    # The next day, the same budget is announced again when reached.
    tomorrow = NOW + timedelta(hours=4)
    for _ in range(24):
        await counters.reserve("acme", owners, {Meter.VIDEO_SECONDS: 1}, tomorrow)
    [again] = await budget_alerts.announce_thresholds(store, "acme", owners, 80, tomorrow, service="test")
    assert again.period_start == period_start(Period.DAY, tomorrow)
    assert await store.audit_events.count_documents({"type": "budget.threshold_reached"}) == 2


async def test_an_announcement_interrupted_before_its_mark_is_made_again_as_the_same_record(
    store: Store,
) -> None:
    counters = BudgetCounterRepository(store)
    owners = [("key_9", Limits({"monthly_video_seconds": 10}))]
    await counters.reserve("acme", owners, {Meter.VIDEO_SECONDS: 9}, NOW)
    [state] = await counters.thresholds_unannounced("acme", "key_9", owners[0][1], 80, NOW)
    # A process announced it and died before marking it.
    await budget_alerts.budget_threshold_reached(store, "acme", state, 80, NOW, service="test")
    [repeated] = await budget_alerts.announce_thresholds(store, "acme", owners, 80, NOW, service="test")
    assert isinstance(repeated, Remaining) and repeated.owner == "key_9"
    [event] = await store.audit_events.find({"type": "budget.threshold_reached"}).to_list(None)
    assert event["target"] == {"type": "budget", "id": "key_9"} and event["data"]["api_key_id"] == "key_9"
    assert await counters.thresholds_unannounced("acme", "key_9", owners[0][1], 80, NOW) == []


async def test_a_budget_set_mid_month_starts_from_the_generations_charged_seconds(store: Store) -> None:

    async def made(day: int, duration: int, key: str, **fields: object) -> None:
        # Each at $0.10 a second, but the mock's ones, whose price the table did not know.
        record = new_record(
            generation_id=f"gen_{day}_{duration}_{key}",
            account_id="acme",
            prompt="p",
            provider=Provider.MOCK,
            duration=duration,
            now=datetime(2026, 11, day, 12, tzinfo=UTC),
            api_key_id=key,
            estimated_cost=None if key == "key_b" else round(0.1 * duration, 4),
        )
        await store.generations.insert_one({**record.to_doc(), **fields})

    await made(3, 5, "key_a")
    await made(3, 7, "key_b", status=Status.COMPLETED.value)
    await made(30, 4, "key_a", status=Status.FAILED.value)  # failed before a submit: not charged
    await made(30, 6, "key_a", status=Status.FAILED.value, submit_started_at=NOW)  # after one: charged
    await made(30, 8, "key_a", status=Status.FAILED.value, provider_task_id="t1")
    await made(1, 9, "key_a")
    month = (period_start(Period.MONTH, NOW), period_end(Period.MONTH, NOW))
    seconds, cost = Meter.VIDEO_SECONDS, Meter.COST
    assert await UsageRepository(store).charged_by_day("acme", None, *month, now=NOW) == {
        "01": {seconds: 9, cost: 900_000},
        "03": {seconds: 12, cost: 500_000},  # key_b's 7 s had no price: counted 0
        "30": {seconds: 14, cost: 1_400_000},
    }
    counters = BudgetCounterRepository(store)
    used = await UsageRepository(store).charged_by_day("acme", "key_a", *month, now=NOW)
    assert {day: u[seconds] for day, u in used.items()} == {"01": 9, "03": 5, "30": 14}
    await counters.start_counting("acme", "key_a", used, NOW)
    limits = Limits(
        {"daily_video_seconds": 20, "monthly_video_seconds": 100, "daily_cost": 9_000_000, "monthly_cost": 1}
    )
    states = await counters.remaining("acme", [("key_a", limits)], NOW)
    assert [(s.budget.name, s.used) for s in states] == [
        ("daily_video_seconds", 14),
        ("monthly_video_seconds", 28),
        ("daily_cost", 1_400_000),
        ("monthly_cost", 2_800_000),
    ]


async def test_counting_started_twice_at_once_never_erases_a_reservation(store: Store) -> None:
    # Two first budgets set at once: both start counting from the month's use, and a generation reserved
    # against the first one's limits between the two starts stays counted.
    counters = BudgetCounterRepository(store)
    used = {"29": {Meter.VIDEO_SECONDS: 6, Meter.COST: 0}, "30": {Meter.VIDEO_SECONDS: 4, Meter.COST: 0}}
    await counters.start_counting("acme", ACCOUNT, used, NOW)
    held = await counters.reserve("acme", [(ACCOUNT, DAILY)], {Meter.VIDEO_SECONDS: 5}, NOW)
    assert isinstance(held, Hold)
    await counters.start_counting("acme", ACCOUNT, used, NOW)

    counter = await store.budget_counters.find_one({"_id": counter_id("acme", ACCOUNT, "2026-11")})
    assert counter is not None
    assert counter["video_seconds"] == 6 + 4 + 5
    assert counter["days"]["30"]["video_seconds"] == 4 + 5 and counter["days"]["29"]["video_seconds"] == 6
    [left] = await counters.remaining("acme", [(ACCOUNT, DAILY)], NOW)
    assert left.used == 9
