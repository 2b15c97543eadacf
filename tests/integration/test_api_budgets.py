"""Budgets through the real api and store: GET/PUT /v1/budgets and a key's own; a creation that would pass
one is a 429 budget-exceeded saying which, what is left and when it resets, with nothing written; concurrent
creations on two api instances admit exactly the budget; a generation that fails before anything was
submitted gives its seconds back, once; a repeated request reserves nothing; days and months reset; a budget
set mid-period counts what the period already used; a threshold is announced once per period, however many
replicas see it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import pytest
from aiohttp import ClientResponse, web
from aiohttp.test_utils import TestClient

from tests.support.api import api_client, bearer
from tests.support.env import settings_for
from tests.support.fakes import ManualClock
from tests.support.waiting import eventually
from videogen_api import state
from videogen_api.schemas.budgets import BudgetProblem, Budgets
from videogen_api.settings import ApiSettings
from videogen_api.spend import Reservations, Spend
from videogen_common.budgets import ACCOUNT, Limits
from videogen_common.endings import end_generation
from videogen_common.failures import CANCELED_BY_CLIENT, ErrorCode, GenerationError
from videogen_common.pricing import PriceTable
from videogen_common.repositories.generations import GenerationRepository
from videogen_common.store import Store

Client = TestClient[web.Request, web.Application]
Doc = dict[str, Any]
# 21:00 UTC on the last day of a month: three hours to the next day and month.
NOW = datetime(2026, 11, 30, 21, 0, 0, tzinfo=UTC)
# What the tries at a provider cost, for an ending (videogen_common.endings).
PRICES = PriceTable.with_overrides()


def video(duration: int = 5, prompt: str = "a kite", provider: str = "mock") -> Doc:
    return {"prompt": prompt, "provider": provider, "duration": duration}


# Runway's default model at the price table's $0.12 a second (the mock is free): a 5-second one costs $0.60.
RUNWAY_5S = 0.6


def priced(duration: int = 5) -> Doc:
    return video(duration, provider="runway")


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(NOW)


@pytest.fixture
def settings(base_env: dict[str, str]) -> ApiSettings:
    env = {**base_env, "VIDEOGEN_PROVIDERS": "mock,runway"}
    return settings_for(ApiSettings, env, api_port=0, rate_limit_enabled=False)


@pytest.fixture
async def client(settings: ApiSettings, store: Store, clock: ManualClock) -> AsyncIterator[Client]:
    async with api_client(settings, clock) as client:
        yield client


async def put_budgets(client: Client, key: str, **budgets: float | None) -> Doc:
    response = await client.put("/v1/budgets", json=budgets, headers=bearer(key))
    text = await response.text()
    assert response.status == 200, text
    Budgets.model_validate_json(text, strict=True)
    answer: Doc = orjson.loads(text)
    return answer


async def create(client: Client, key: str, body: Doc | None = None, **headers: str) -> ClientResponse:
    response = await client.post("/v1/generate", json=body or video(), headers={**bearer(key), **headers})
    await response.read()
    return response


async def left(client: Client, key: str) -> dict[str, float]:
    answer = await (await client.get("/v1/budgets", headers=bearer(key))).json()
    return {r["budget"]: r["remaining"] for r in answer["remaining"]}


async def test_budgets_are_read_set_and_replaced_and_each_change_is_audited(
    client: Client, key: str, clock: ManualClock
) -> None:
    empty = await (await client.get("/v1/budgets", headers=bearer(key))).json()
    assert empty == {
        "daily_video_seconds": None,
        "monthly_video_seconds": None,
        "daily_cost": None,
        "monthly_cost": None,
        "threshold_percent": 80,
        "remaining": [],
    }
    answer = await put_budgets(client, key, daily_video_seconds=600, monthly_video_seconds=10000)
    assert answer["remaining"] == [
        {
            "api_key_id": None,
            "budget": "daily_video_seconds",
            "limit": 600,
            "used": 0,
            "remaining": 600,
            "period_start": "2026-11-30T00:00:00.000Z",
            "resets_at": "2026-12-01T00:00:00.000Z",
        },
        {
            "api_key_id": None,
            "budget": "monthly_video_seconds",
            "limit": 10000,
            "used": 0,
            "remaining": 10000,
            "period_start": "2026-11-01T00:00:00.000Z",
            "resets_at": "2026-12-01T00:00:00.000Z",
        },
    ]
    assert await (await client.get("/v1/budgets", headers=bearer(key))).json() == answer
    clock.advance(timedelta(seconds=1))
    cleared = await put_budgets(client, key, monthly_video_seconds=None)  # absent and null: no limit
    assert (cleared["daily_video_seconds"], cleared["monthly_video_seconds"], cleared["remaining"]) == (
        None,
        None,
        [],
    )
    trail = await (await client.get("/v1/audit-events?type=budget.updated", headers=bearer(key))).json()
    assert [e["data"]["changes"] for e in reversed(trail["data"])] == [
        {
            "daily_video_seconds": {"from": None, "to": 600},
            "monthly_video_seconds": {"from": None, "to": 10000},
        },
        {
            "daily_video_seconds": {"from": 600, "to": None},
            "monthly_video_seconds": {"from": 10000, "to": None},
        },
    ]
    for bad in (
        {"daily_video_seconds": -1},
        {"daily_video_seconds": 1.5},
        {"weekly_video_seconds": 5},
        {"daily_cost": -0.01},
        {"monthly_cost": "12.50"},
        {"monthly_cost": True},
        {"daily_cost": 1e12},
    ):
        refusal = await client.put("/v1/budgets", json=bad, headers=bearer(key))
        assert refusal.status == 422, bad
        assert [e["field"] for e in (await refusal.json())["errors"]] == list(bad), bad
    assert await (await client.get("/v1/budgets", headers=bearer(key))).json() == empty  # nothing stored


async def test_a_creation_past_a_budget_is_429_saying_which_and_writes_nothing(
    client: Client, key: str, store: Store
) -> None:
    await put_budgets(client, key, daily_video_seconds=13)
    assert (await create(client, key, video(5))).status == 202
    assert (await create(client, key, video(5))).status == 202
    generations = await store.generations.count_documents({})
    counters = await store.budget_counters.find().to_list(None)
    refused = await client.post("/v1/generate", json=video(5), headers=bearer(key))
    text = await refused.text()
    assert refused.status == 429
    assert refused.content_type == "application/problem+json"
    BudgetProblem.model_validate_json(text, strict=True)
    problem = orjson.loads(text)
    assert {k: problem[k] for k in ("budget", "api_key_id", "limit", "used", "remaining", "requested")} == {
        "budget": "daily_video_seconds",
        "api_key_id": None,
        "limit": 13,
        "used": 10,
        "remaining": 3,
        "requested": 5,
    }
    assert problem["resets_at"] == "2026-12-01T00:00:00.000Z"
    assert refused.headers["Retry-After"] == str(3 * 3600)
    assert "3 left" in problem["detail"] and "2026-12-01T00:00:00.000Z" in problem["detail"]
    assert await store.generations.count_documents({}) == generations
    assert await store.budget_counters.find().to_list(None) == counters
    assert (await create(client, key, video(3))).status == 202  # what is left still fits


async def test_a_keys_own_budget_caps_it_and_the_refusal_names_the_key(
    client: Client, key: str, store: Store
) -> None:
    made = await (
        await client.post(
            "/v1/api-keys",
            json={"name": "batch", "scopes": ["generations:write"], "budgets": {"monthly_video_seconds": 8}},
            headers=bearer(key),
        )
    ).json()
    assert (await create(client, made["secret"], video(5))).status == 202
    refused = await create(client, made["secret"], video(5))
    problem = await refused.json()
    assert refused.status == 429
    assert (problem["budget"], problem["api_key_id"], problem["remaining"]) == (
        "monthly_video_seconds",
        made["id"],
        3,
    )
    assert (await create(client, key, video(5))).status == 202  # the account's other keys are not capped
    usage = await (await client.get(f"/v1/usage?api_key_id={made['id']}", headers=bearer(key))).json()
    assert [(b["api_key_id"], b["budget"], b["used"], b["remaining"]) for b in usage["budgets"]] == [
        (made["id"], "monthly_video_seconds", 5, 3)
    ]


async def test_fifty_parallel_creations_on_two_instances_admit_exactly_the_budget(
    settings: ApiSettings, store: Store, key: str, clock: ManualClock
) -> None:
    async with api_client(settings, clock) as first, api_client(settings, clock) as second:
        await put_budgets(first, key, daily_video_seconds=50)  # ten generations of 5 s
        answers = await asyncio.gather(
            *(create(c, key, video(5)) for _ in range(25) for c in (first, second))
        )
    statuses = [a.status for a in answers]
    assert statuses.count(202) == 10 and statuses.count(429) == 40
    assert await store.generations.count_documents({}) == 10
    [counter] = await store.budget_counters.find().to_list(None)
    assert counter["video_seconds"] == 50 and counter["days"]["30"]["video_seconds"] == 50


async def test_a_generation_failing_before_it_was_submitted_gives_its_seconds_back_once(
    client: Client, key: str, store: Store, clock: ManualClock
) -> None:
    await put_budgets(client, key, daily_video_seconds=20)
    ids = [(await (await create(client, key, video(5))).json())["id"] for _ in range(3)]
    assert await left(client, key) == {"daily_video_seconds": 5}
    # Canceled before the orchestrator submitted it: nothing was spent.
    canceled = await client.post(f"/v1/generations/{ids[0]}/cancel", headers=bearer(key))
    assert canceled.status == 200
    assert await left(client, key) == {"daily_video_seconds": 10}
    # Failed by its actor before submitting (an unusable image, a deadline): given back, once.
    generations = GenerationRepository(store)
    record = await generations.get(ids[1])
    assert record is not None
    error = GenerationError(ErrorCode.IMAGE_UNUSABLE, "x")
    assert await end_generation(store, record, error, prices=PRICES, now=clock.now()) is not None
    # Moved already: nothing again.
    assert await end_generation(store, record, error, prices=PRICES, now=clock.now()) is None
    assert await left(client, key) == {"daily_video_seconds": 15}
    # Failed after a submit began: a provider may bill for it, so it stays spent.
    submitted = await generations.get(ids[2])
    assert submitted is not None
    await store.generations.update_one({"_id": ids[2]}, {"$set": {"submit_started_at": clock.now()}})
    submitted = await generations.get(ids[2])
    assert submitted is not None and submitted.charged
    assert await end_generation(store, submitted, CANCELED_BY_CLIENT, prices=PRICES, now=clock.now())
    assert await left(client, key) == {"daily_video_seconds": 15}


async def test_a_repeated_request_reserves_nothing_and_replays_even_when_the_budget_is_spent(
    client: Client, key: str
) -> None:
    await put_budgets(client, key, daily_video_seconds=5)
    first = await create(client, key, video(5), **{"Idempotency-Key": "order-7"})
    again = await create(client, key, video(5), **{"Idempotency-Key": "order-7"})
    assert (first.status, again.status) == (202, 202)
    assert again.headers["Idempotent-Replayed"] == "true"
    assert await left(client, key) == {"daily_video_seconds": 0}
    assert (await create(client, key, video(5), **{"Idempotency-Key": "order-8"})).status == 429


async def test_the_day_and_the_month_reset(client: Client, key: str, clock: ManualClock) -> None:
    await put_budgets(client, key, daily_video_seconds=5, monthly_video_seconds=8)
    assert (await create(client, key, video(5))).status == 202
    assert (await create(client, key, video(3))).status == 429  # the day's budget
    clock.set(datetime(2026, 11, 30, 23, 59, 59, 999000, tzinfo=UTC))
    assert (await create(client, key, video(3))).status == 429
    clock.set(datetime(2026, 12, 1, 0, 0, tzinfo=UTC))  # a new day, and a new month
    assert await left(client, key) == {"daily_video_seconds": 5, "monthly_video_seconds": 8}
    assert (await create(client, key, video(5))).status == 202
    clock.set(datetime(2026, 12, 2, 9, 0, tzinfo=UTC))  # a new day, the same month
    refused = await create(client, key, video(4))
    assert refused.status == 429
    assert (await refused.json())["budget"] == "monthly_video_seconds"
    assert (await create(client, key, video(3))).status == 202


async def test_a_budget_set_mid_period_counts_what_the_period_already_used(
    client: Client, key: str, store: Store, clock: ManualClock
) -> None:
    ids = [(await (await create(client, key, video(4))).json())["id"] for _ in range(3)]
    clock.advance(timedelta(hours=1))
    await client.post(f"/v1/generations/{ids[0]}/cancel", headers=bearer(key))  # never submitted: not spent
    answer = await put_budgets(client, key, daily_video_seconds=11, monthly_video_seconds=100)
    assert [(r["budget"], r["used"]) for r in answer["remaining"]] == [
        ("daily_video_seconds", 8),
        ("monthly_video_seconds", 8),
    ]
    assert (await create(client, key, video(4))).status == 429
    assert (await create(client, key, video(3))).status == 202


async def announced(store: Store, count: int) -> bool:
    return await store.audit_events.count_documents({"type": "budget.threshold_reached"}) >= count


async def test_a_threshold_is_announced_once_per_period_however_many_instances_see_it(
    settings: ApiSettings, store: Store, key: str, clock: ManualClock
) -> None:
    async with api_client(settings, clock) as first, api_client(settings, clock) as second:
        await put_budgets(first, key, daily_video_seconds=100)
        assert (await create(first, key, video(10))).status == 202
        for _ in range(6):
            assert (await create(second, key, video(10))).status == 202
        assert await store.audit_events.count_documents({"type": "budget.threshold_reached"}) == 0  # 70%
        # Both instances take it to 80% and past it at once.
        answers = await asyncio.gather(*(create(c, key, video(5)) for c in (first, second, first, second)))
        assert [a.status for a in answers] == [202] * 4
        await eventually(lambda: announced(store, 1), what="the threshold announced")  # after the answers
        for instance in (first, second):  # every announcement either would make is made by now
            await instance.app[state.RESERVATIONS].settled()
        events = await store.audit_events.find({"type": "budget.threshold_reached"}).to_list(None)
        assert len(events) == 1
        [event] = events
        assert event["actor"] == {"type": "system", "id": "api"}
        assert event["target"] == {"type": "budget", "id": "account"}
        assert event["data"]["budget"] == "daily_video_seconds" and event["data"]["limit"] == 100
        assert 80 <= event["data"]["used"] <= 100 and event["data"]["threshold_percent"] == 80
        assert event["data"]["resets_at"] == "2026-12-01T00:00:00.000Z"
        clock.set(datetime(2026, 12, 1, 1, 0, tzinfo=UTC))  # the next day: announced again when reached
        for _ in range(8):
            assert (await create(second, key, video(10))).status == 202
        await eventually(lambda: announced(store, 2), what="the next day's threshold announced")


async def test_a_reservation_whose_request_went_away_is_given_back(store: Store) -> None:
    reservations = Reservations(store, 80)
    spend = Spend("acme", [(ACCOUNT, Limits({"daily_video_seconds": 20}))])
    waiting = asyncio.create_task(reservations.reserve(spend, 5, None, NOW))
    await asyncio.sleep(0)  # it has joined its group, whose update is under way
    waiting.cancel()
    await reservations.settled()
    assert waiting.cancelled()
    [counter] = await store.budget_counters.find().to_list(None)
    assert counter["video_seconds"] == 0
    kept = await reservations.reserve(spend, 5, None, NOW)  # and the next one is counted as usual
    assert kept.charge == {"video_seconds": 5, "cost": 0}
    assert (await store.budget_counters.find_one({}) or {})["video_seconds"] == 5


# --- cost budgets: the estimated_cost, counted in micro-dollars, shown in dollars ---------------------------


async def test_a_cost_budget_refuses_the_creation_that_would_pass_it_and_writes_nothing(
    client: Client, key: str, store: Store
) -> None:
    # (2 x $0.60 of $1.55 is under the 80% threshold, whose announcement would write to the counter.)
    answer = await put_budgets(client, key, daily_cost=1.55, monthly_cost=100)
    assert (answer["daily_cost"], answer["monthly_cost"]) == (1.55, 100)
    first = await (await create(client, key, priced(5))).json()
    assert first["estimated_cost"] == RUNWAY_5S
    assert (await create(client, key, priced(5))).status == 202
    generations = await store.generations.count_documents({})
    counters = await store.budget_counters.find().to_list(None)
    assert counters[0]["cost"] == 1_200_000  # integer micro-dollars
    refused = await client.post("/v1/generate", json=priced(5), headers=bearer(key))
    text = await refused.text()
    assert refused.status == 429
    BudgetProblem.model_validate_json(text, strict=True)
    problem = orjson.loads(text)
    assert {k: problem[k] for k in ("budget", "api_key_id", "limit", "used", "remaining", "requested")} == {
        "budget": "daily_cost",
        "api_key_id": None,
        "limit": 1.55,
        "used": 1.2,
        "remaining": 0.35,
        "requested": RUNWAY_5S,
    }
    assert problem["resets_at"] == "2026-12-01T00:00:00.000Z"
    assert "0.35 left" in problem["detail"]
    assert await store.generations.count_documents({}) == generations
    assert await store.budget_counters.find().to_list(None) == counters
    # The free mock still fits (it costs nothing), and spends seconds only.
    assert (await create(client, key, video(5))).status == 202
    assert await left(client, key) == {"daily_cost": 0.35, "monthly_cost": 98.8}


async def test_twenty_parallel_creations_on_two_instances_admit_exactly_what_the_cost_budget_buys(
    settings: ApiSettings, store: Store, key: str, clock: ManualClock
) -> None:
    async with api_client(settings, clock) as first, api_client(settings, clock) as second:
        await put_budgets(first, key, daily_cost=3 * RUNWAY_5S + 0.5)  # three, not four
        answers = await asyncio.gather(
            *(create(c, key, priced(5)) for _ in range(10) for c in (first, second))
        )
    statuses = [a.status for a in answers]
    assert statuses.count(202) == 3 and statuses.count(429) == 17
    assert await store.generations.count_documents({}) == 3
    [counter] = await store.budget_counters.find().to_list(None)
    assert counter["cost"] == counter["days"]["30"]["cost"] == 1_800_000
    assert counter["video_seconds"] == 15  # the seconds are counted beside


async def test_a_failed_generation_gives_its_cost_back_with_its_seconds(
    client: Client, key: str, store: Store, clock: ManualClock
) -> None:
    await put_budgets(client, key, daily_cost=2, daily_video_seconds=100)
    made = await (await create(client, key, priced(5))).json()
    assert await left(client, key) == {"daily_video_seconds": 95, "daily_cost": 1.4}
    generations = GenerationRepository(store)
    record = await generations.get(made["id"])
    assert record is not None
    error = GenerationError(ErrorCode.IMAGE_UNUSABLE, "x")
    assert await end_generation(store, record, error, prices=PRICES, now=clock.now())
    assert await left(client, key) == {"daily_video_seconds": 100, "daily_cost": 2}


async def test_a_task_the_provider_failed_and_refunded_gives_its_reservation_back(
    client: Client, key: str, store: Store, clock: ManualClock
) -> None:
    await put_budgets(client, key, daily_cost=5, daily_video_seconds=100)
    generations = GenerationRepository(store)
    prices = PriceTable.with_overrides()

    async def failed_at_runway(error: GenerationError, task_id: str | None) -> None:
        made = await (await create(client, key, priced(5))).json()
        # As the actor leaves it once Runway was asked: the submit begun, and the task it made if it answered.
        fields = {"submit_started_at": clock.now(), "provider_task_id": task_id, "status": "processing"}
        await store.generations.update_one({"_id": made["id"]}, {"$set": fields})
        record = await generations.get(made["id"])
        assert record is not None
        assert await end_generation(store, record, error, prices=prices, now=clock.now())

    # Runway refunds a task that failed on its side: nothing was charged, so nothing stays reserved.
    await failed_at_runway(
        GenerationError(ErrorCode.PROVIDER_ERROR, "internal", "INTERNAL.BAD_OUTPUT"), "t-1"
    )
    assert await left(client, key) == {"daily_video_seconds": 100, "daily_cost": 5}
    # Input moderation it charges for; and a submit that never answered may have made a task: both kept.
    await failed_at_runway(GenerationError(ErrorCode.CONTENT_POLICY, "refused", "SAFETY.INPUT.TEXT"), "t-2")
    await failed_at_runway(GenerationError(ErrorCode.PROVIDER_UNAVAILABLE, "no answer"), None)
    assert await left(client, key) == {"daily_video_seconds": 90, "daily_cost": round(5 - 2 * RUNWAY_5S, 6)}


async def test_the_cost_budgets_day_and_month_reset(client: Client, key: str, clock: ManualClock) -> None:
    await put_budgets(client, key, daily_cost=RUNWAY_5S, monthly_cost=2 * RUNWAY_5S + 0.1)
    assert (await create(client, key, priced(5))).status == 202
    refused = await create(client, key, priced(5))
    assert (refused.status, (await refused.json())["budget"]) == (429, "daily_cost")
    clock.set(datetime(2026, 12, 1, 0, 0, tzinfo=UTC))  # a new day, and a new month
    assert await left(client, key) == {"daily_cost": RUNWAY_5S, "monthly_cost": 1.3}
    assert (await create(client, key, priced(5))).status == 202
    clock.set(datetime(2026, 12, 2, 9, 0, tzinfo=UTC))  # a new day, the same month
    assert (await create(client, key, priced(5))).status == 202
    clock.set(datetime(2026, 12, 3, 9, 0, tzinfo=UTC))
    refused = await create(client, key, priced(5))
    assert (refused.status, (await refused.json())["budget"]) == (429, "monthly_cost")


async def test_a_cost_budget_set_mid_period_counts_the_periods_estimated_costs(
    client: Client, key: str, clock: ManualClock
) -> None:
    for body in (priced(5), priced(10), video(5)):  # $0.60, $1.20 and the free mock
        assert (await create(client, key, body)).status == 202
    clock.advance(timedelta(hours=1))
    answer = await put_budgets(client, key, daily_cost=2)
    assert [(r["budget"], r["used"], r["remaining"]) for r in answer["remaining"]] == [
        ("daily_cost", 1.8, 0.2)
    ]
    assert (await create(client, key, priced(5))).status == 429


async def test_a_cost_threshold_is_announced_naming_the_cost_budget(
    client: Client, key: str, store: Store
) -> None:
    await put_budgets(client, key, daily_video_seconds=1000, monthly_cost=10 * RUNWAY_5S)
    for _ in range(7):
        assert (await create(client, key, priced(5))).status == 202
    assert await store.audit_events.count_documents({"type": "budget.threshold_reached"}) == 0  # 70%
    assert (await create(client, key, priced(5))).status == 202  # 80%
    await eventually(lambda: announced(store, 1), what="the cost threshold announced")
    [event] = await store.audit_events.find({"type": "budget.threshold_reached"}).to_list(None)
    assert {k: event["data"][k] for k in ("budget", "limit", "used", "remaining")} == {
        "budget": "monthly_cost",
        "limit": 6.0,
        "used": 4.8,
        "remaining": 1.2,
    }

    # The audit event is written first, then the counter marked announced with the event it owes.
    async def owes() -> bool:
        return any(c.get("outbox") for c in await store.budget_counters.find().to_list(None))

    await eventually(owes, what="the counter owes the threshold's webhook event")
    [counter] = await store.budget_counters.find().to_list(None)
    [owed] = counter["outbox"]
    assert owed["type"] == "account.budget_threshold" and owed["data"]["budget"] == "monthly_cost"


async def test_remaining_cost_in_usage_matches_the_price_table_and_a_keys_cost_budget_caps_it(
    client: Client, key: str, settings: ApiSettings
) -> None:
    made = await (
        await client.post(
            "/v1/api-keys",
            json={"name": "batch", "scopes": ["generations:write"], "budgets": {"daily_cost": 1.0}},
            headers=bearer(key),
        )
    ).json()
    assert made["budgets"]["daily_cost"] == 1.0
    price = settings.price_table.estimate("runway", None, None, 5)
    assert price == RUNWAY_5S
    assert (await create(client, made["secret"], priced(5))).status == 202
    refused = await create(client, made["secret"], priced(5))
    problem = await refused.json()
    assert (refused.status, problem["budget"], problem["api_key_id"]) == (429, "daily_cost", made["id"])
    assert (await create(client, key, priced(5))).status == 202  # the account's other keys are not capped
    usage = await (await client.get(f"/v1/usage?api_key_id={made['id']}", headers=bearer(key))).json()
    assert [(b["api_key_id"], b["budget"], b["used"], b["remaining"]) for b in usage["budgets"]] == [
        (made["id"], "daily_cost", price, round(1.0 - price, 6))
    ]
    # Changed on the key (PATCH): a limit below what the day used leaves nothing.
    patched = await client.patch(
        f"/v1/api-keys/{made['id']}", json={"budgets": {"daily_cost": 0.5}}, headers=bearer(key)
    )
    assert patched.status == 200 and (await patched.json())["budgets"]["daily_cost"] == 0.5
    usage = await (await client.get(f"/v1/usage?api_key_id={made['id']}", headers=bearer(key))).json()
    assert [(b["budget"], b["remaining"]) for b in usage["budgets"]] == [("daily_cost", 0)]


async def test_a_cost_budget_added_to_seconds_budgets_counts_the_months_cost_already_spent(
    client: Client, key: str, store: Store
) -> None:
    await put_budgets(client, key, daily_video_seconds=100)
    assert (await create(client, key, priced(5))).status == 202
    # The counter as an earlier version kept it for seconds budgets: no cost in it.
    await store.budget_counters.update_many({}, {"$unset": {"cost": "", "days.30.cost": ""}})

    await put_budgets(client, key, daily_video_seconds=100, daily_cost=2)

    assert await left(client, key) == {"daily_video_seconds": 95, "daily_cost": 2 - RUNWAY_5S}
    [counter] = await store.budget_counters.find().to_list(None)
    assert (counter["video_seconds"], counter["cost"]) == (
        5,
        600_000,
    )  # the seconds neither lowered nor doubled
