"""Spend budgets: what an account, and each of its API keys, may spend per UTC day and per calendar month.

A budget is a *meter* (what is counted) over a *period*; its name is the field tenants set, e.g.
``daily_video_seconds``. Two meters: seconds of video asked for, and cost (the generation's
``estimated_cost``, its first candidate's price for it, at admission: a fallback to a dearer provider does not
change what the budget counted, and a generation whose price is unknown counts 0 there). Everything below —
limits, counters, reservations, thresholds, the API's fields — follows the table ``BUDGETS``.

Amounts are integers in each meter's *unit* (``UNITS``): seconds, and micro-dollars for cost (``$inc`` on
floats would drift); the API shows cost in US dollars (``to_api``/``from_api``), to 6 decimals.

Counting: each owner (the account, or one key) has one counter document per calendar month
(``repositories.budgets``) holding the month's total of each meter and each day's. A generation's charge is
reserved at creation on every counter whose owner has a limit, with one conditional increment per document
that matches only while every limited budget in it has room, so replicas racing for the last seconds cannot
together pass a limit. It is given back when the generation fails before anything was submitted to a provider
(``videogen_common.endings.end_generation``)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any

Doc = dict[str, Any]


class Period(StrEnum):
    DAY = "day"
    MONTH = "month"


class Meter(StrEnum):
    VIDEO_SECONDS = "video_seconds"
    COST = "cost"


# What one unit of a meter's counts is in the API's terms: a second; a millionth of a US dollar.
MICROS_PER_USD = 1_000_000
UNITS: Mapping[Meter, int] = {Meter.VIDEO_SECONDS: 1, Meter.COST: MICROS_PER_USD}


def to_api(meter: Meter, amount: int) -> int | float:
    """An amount counted in ``meter``'s unit as the API shows it (seconds; US dollars, to 6 decimals)."""
    per = UNITS[meter]
    return amount if per == 1 else round(amount / per, 6)


def from_api(meter: Meter, value: float) -> int:
    """An amount the API was given (seconds; US dollars) in ``meter``'s unit, to the nearest unit."""
    return round(value * UNITS[meter])


_ADJECTIVE = {Period.DAY: "daily", Period.MONTH: "monthly"}


@dataclass(frozen=True, slots=True)
class Budget:
    period: Period
    meter: Meter

    @property
    def name(self) -> str:
        """The field tenants set: ``daily_video_seconds``, ``monthly_video_seconds``."""
        return f"{_ADJECTIVE[self.period]}_{self.meter.value}"


BUDGETS: tuple[Budget, ...] = (
    Budget(Period.DAY, Meter.VIDEO_SECONDS),
    Budget(Period.MONTH, Meter.VIDEO_SECONDS),
    Budget(Period.DAY, Meter.COST),
    Budget(Period.MONTH, Meter.COST),
)
BUDGET_NAMES: tuple[str, ...] = tuple(b.name for b in BUDGETS)
BY_NAME: Mapping[str, Budget] = {b.name: b for b in BUDGETS}

# The owner of the account's own counters; a key's are owned by the key's id.
ACCOUNT = "account"


@dataclass(frozen=True, slots=True)
class Limits:
    """An owner's hard limits, by budget name, in each meter's unit; a budget left out has no limit."""

    values: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any] | None) -> Limits:
        """As stored (``to_doc``): in the meters' units."""
        return cls({n: int(v) for n, v in (doc or {}).items() if n in BY_NAME and v is not None})

    @classmethod
    def from_view(cls, view: Mapping[str, Any]) -> Limits:
        """As the API takes them (``view``): seconds, US dollars."""
        return cls(
            {n: from_api(BY_NAME[n].meter, v) for n, v in view.items() if n in BY_NAME and v is not None}
        )

    def to_doc(self) -> Doc:
        return {name: self.values[name] for name in BUDGET_NAMES if name in self.values}

    def view(self) -> Doc:
        """Every budget's field, null where there is no limit (what the API shows and takes)."""
        return {
            b.name: None if b.name not in self.values else to_api(b.meter, self.values[b.name])
            for b in BUDGETS
        }

    def __bool__(self) -> bool:
        return bool(self.values)

    def limited(self) -> list[tuple[Budget, int]]:
        return [(b, self.values[b.name]) for b in BUDGETS if b.name in self.values]

    def meters(self) -> set[Meter]:
        """What some budget of these limits counts."""
        return {b.meter for b, _ in self.limited()}


def charge_of(duration: int, estimated_cost: float | None) -> dict[Meter, int]:
    """What one generation spends of each meter: its seconds, and its estimated cost (0 where unknown)."""
    return {Meter.VIDEO_SECONDS: duration, Meter.COST: from_api(Meter.COST, estimated_cost or 0.0)}


# --- Periods: UTC days and calendar months ------------------------------------------------------------------


def month_key(now: datetime) -> str:
    """``YYYY-MM`` of ``now``'s UTC month: a counter document's month."""
    return now.astimezone(UTC).strftime("%Y-%m")


def day_key(now: datetime) -> str:
    """``DD`` of ``now``'s UTC day: its counts' place inside the month's document."""
    return now.astimezone(UTC).strftime("%d")


def period_start(period: Period, now: datetime) -> datetime:
    moment = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return moment.replace(day=1) if period is Period.MONTH else moment


def period_end(period: Period, now: datetime) -> datetime:
    """When the period holding ``now`` ends, and its budget resets."""
    start = period_start(period, now)
    if period is Period.DAY:
        return start + timedelta(days=1)
    return (start + timedelta(days=32)).replace(day=1)


def used_path(budget: Budget, day: str) -> str:
    """Where a counter document keeps what ``budget`` has used: the month's total, or ``day``'s."""
    if budget.period is Period.MONTH:
        return budget.meter.value
    return f"days.{day}.{budget.meter.value}"


def notified_path(budget: Budget, day: str) -> str:
    """Where a counter document marks that ``budget``'s soft threshold was reached (once per period)."""
    if budget.period is Period.MONTH:
        return f"notified.{budget.name}"
    return f"days.{day}.notified.{budget.name}"


def threshold_amount(limit: int, percent: int) -> int:
    """The use at which a budget of ``limit`` has reached ``percent`` of it (at least 1)."""
    return max(1, math.ceil(limit * percent / 100))


@dataclass(frozen=True, slots=True)
class Remaining:
    """One limited budget of one owner, now: the limit, what is used and left, and when it resets."""

    owner: str
    budget: Budget
    limit: int
    used: int
    period_start: datetime
    resets_at: datetime

    @property
    def remaining(self) -> int:
        return max(0, self.limit - self.used)

    def shown(self, amount: int) -> int | float:
        """An amount of this budget's meter as the API shows it."""
        return to_api(self.budget.meter, amount)

    def amounts(self) -> dict[str, int | float]:
        """Its limit, use and what is left, as the API shows them."""
        return {
            "limit": self.shown(self.limit),
            "used": self.shown(self.used),
            "remaining": self.shown(self.remaining),
        }


def remaining(
    owner: str, limits: Limits, counter: Mapping[str, Any] | None, now: datetime
) -> list[Remaining]:
    """Each of ``owner``'s limited budgets as it stands, from its counter document for ``now``'s month."""
    day = day_key(now)
    return [
        Remaining(
            owner=owner,
            budget=budget,
            limit=limit,
            used=used_in(counter, budget, day),
            period_start=period_start(budget.period, now),
            resets_at=period_end(budget.period, now),
        )
        for budget, limit in limits.limited()
    ]


def used_in(counter: Mapping[str, Any] | None, budget: Budget, day: str) -> int:
    return int(value_at(counter or {}, used_path(budget, day)) or 0)


def value_at(doc: Mapping[str, Any], path: str) -> Any:
    """The value at a dotted ``path`` of a document, None where there is none."""
    node: Any = doc
    for part in path.split("."):
        node = node.get(part) if isinstance(node, Mapping) else None
    return node


@dataclass(frozen=True, slots=True)
class Hold:
    """What a generation reserved (stored on it as ``budget_hold``): its charge, on which counters, on which
    day of their month. Given back once if it fails before a paid submit."""

    counters: tuple[str, ...]
    day: str
    charge: Mapping[str, int]

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any]) -> Hold:
        return cls(tuple(doc["counters"]), doc["day"], dict(doc["charge"]))

    def to_doc(self) -> Doc:
        return {"counters": list(self.counters), "day": self.day, "charge": dict(self.charge)}
