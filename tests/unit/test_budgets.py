"""Budgets' pure parts: the table of budgets and the API's fields that follow it, UTC days and calendar months
and when they reset, where a counter keeps each budget's use, thresholds, holds."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import get_args

import pytest

from videogen_api.schemas.budgets import ApiKeyBudgets, BudgetLimits, Budgets
from videogen_api.schemas.common import BudgetName
from videogen_common.budgets import (
    BUDGET_NAMES,
    BUDGETS,
    UNITS,
    Hold,
    Limits,
    Meter,
    Period,
    charge_of,
    day_key,
    from_api,
    month_key,
    notified_path,
    period_end,
    period_start,
    remaining,
    threshold_amount,
    to_api,
    used_path,
)


def test_the_api_offers_exactly_the_budgets_of_the_table() -> None:
    """A budget added to the table fails here until the API's models carry it too."""
    assert BUDGET_NAMES == ("daily_video_seconds", "monthly_video_seconds", "daily_cost", "monthly_cost")
    assert tuple(get_args(BudgetName)) == BUDGET_NAMES
    for model in (BudgetLimits, ApiKeyBudgets):
        assert tuple(model.model_fields) == BUDGET_NAMES
    assert set(BUDGET_NAMES) < set(Budgets.model_fields)
    assert {b.meter for b in BUDGETS} == set(Meter) == set(charge_of(5, 0.6)) == set(UNITS)


def test_cost_is_counted_in_micro_dollars_and_shown_in_dollars() -> None:
    assert charge_of(5, 0.6) == {Meter.VIDEO_SECONDS: 5, Meter.COST: 600_000}
    assert charge_of(5, None) == {Meter.VIDEO_SECONDS: 5, Meter.COST: 0}  # no price: counted 0
    # Ten of $0.1 make $1 exactly, which floats summed do not.
    assert sum(charge_of(5, 0.1)[Meter.COST] for _ in range(10)) == 1_000_000 != sum([0.1] * 10) * 1e6
    assert (to_api(Meter.COST, 1_234_567), to_api(Meter.VIDEO_SECONDS, 7)) == (1.234567, 7)
    assert from_api(Meter.COST, 0.0000004) == 0 and from_api(Meter.COST, 2.5) == 2_500_000
    limits = Limits.from_view({"daily_cost": 2.5, "monthly_cost": None, "daily_video_seconds": 60})
    assert limits.to_doc() == {"daily_video_seconds": 60, "daily_cost": 2_500_000}  # stored in units
    assert Limits.from_doc(limits.to_doc()) == limits
    assert limits.view() == {
        "daily_video_seconds": 60,
        "monthly_video_seconds": None,
        "daily_cost": 2.5,
        "monthly_cost": None,
    }
    now = datetime(2026, 11, 7, 10, tzinfo=UTC)
    counter = {"cost": 2_100_000, "days": {"07": {"cost": 1_900_000}}}
    [state] = remaining("account", Limits({"daily_cost": 2_500_000}), counter, now)
    assert state.amounts() == {"limit": 2.5, "used": 1.9, "remaining": 0.6}


@pytest.mark.parametrize(
    ("now", "day", "month", "day_end", "month_end"),
    [
        (datetime(2026, 11, 30, 21, 0, tzinfo=UTC), "30", "2026-11", datetime(2026, 12, 1, tzinfo=UTC), None),
        (
            datetime(2026, 12, 31, 23, 59, 59, tzinfo=UTC),
            "31",
            "2026-12",
            datetime(2027, 1, 1, tzinfo=UTC),
            None,
        ),
        (datetime(2028, 2, 29, 12, 0, tzinfo=UTC), "29", "2028-02", datetime(2028, 3, 1, tzinfo=UTC), None),
    ],
)
def test_days_and_months_are_utc_and_reset_at_their_end(
    now: datetime, day: str, month: str, day_end: datetime, month_end: None
) -> None:
    assert (day_key(now), month_key(now)) == (day, month)
    assert period_start(Period.DAY, now) == now.replace(hour=0, minute=0, second=0)
    assert period_end(Period.DAY, now) == day_end
    assert period_start(Period.MONTH, now) == now.replace(day=1, hour=0, minute=0, second=0)
    assert period_end(Period.MONTH, now).day == 1 and period_end(Period.MONTH, now) > now


def test_a_moment_with_another_offset_counts_in_its_utc_day() -> None:
    evening_in_new_york = datetime(2026, 11, 30, 20, 0, tzinfo=timezone(timedelta(hours=-5)))  # 01:00 UTC
    assert (day_key(evening_in_new_york), month_key(evening_in_new_york)) == ("01", "2026-12")


def test_a_counter_keeps_the_month_at_its_top_and_each_day_inside() -> None:
    daily, monthly, daily_cost, _ = BUDGETS
    assert used_path(daily_cost, "07") == "days.07.cost"
    assert (used_path(daily, "07"), used_path(monthly, "07")) == ("days.07.video_seconds", "video_seconds")
    assert notified_path(daily, "07") == "days.07.notified.daily_video_seconds"
    assert notified_path(monthly, "07") == "notified.monthly_video_seconds"
    now = datetime(2026, 11, 7, 10, tzinfo=UTC)
    counter = {"video_seconds": 40, "days": {"07": {"video_seconds": 15}, "06": {"video_seconds": 25}}}
    states = remaining(
        "account", Limits({"daily_video_seconds": 20, "monthly_video_seconds": 30}), counter, now
    )
    assert [(s.budget.name, s.used, s.remaining) for s in states] == [
        ("daily_video_seconds", 15, 5),
        ("monthly_video_seconds", 40, 0),  # over, after a limit was lowered: nothing left, never negative
    ]
    assert remaining("k", Limits({"daily_video_seconds": 9}), None, now)[0].used == 0


def test_limits_keep_only_known_budgets_with_a_value() -> None:
    limits = Limits.from_doc({"daily_video_seconds": 5, "monthly_video_seconds": None, "weekly": 3})
    assert limits.to_doc() == {"daily_video_seconds": 5}
    assert limits.view() == {
        "daily_video_seconds": 5,
        "monthly_video_seconds": None,
        "daily_cost": None,
        "monthly_cost": None,
    }
    assert limits and not Limits()
    assert Limits({"daily_video_seconds": 0})  # a budget of nothing is a budget


def test_thresholds_round_up_and_are_never_zero() -> None:
    assert threshold_amount(100, 80) == 80
    assert threshold_amount(11, 80) == 9
    assert threshold_amount(1, 1) == 1


def test_a_hold_round_trips() -> None:
    hold = Hold(("a\naccount\n2026-11",), "30", {"video_seconds": 5})
    assert Hold.from_doc(hold.to_doc()) == hold
