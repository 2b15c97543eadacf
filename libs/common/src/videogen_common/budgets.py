"""Spend budgets: what an account, and each of its API keys, may spend per UTC day and per calendar month.

A budget is a *meter* (what is counted) over a *period*; its name is the field tenants set, e.g.
``daily_video_seconds``. Today the one meter is seconds of video asked for; once providers carry prices a cost
meter joins it (``Meter.COST`` and its two budgets, ``daily_cost``/``monthly_cost``, added to ``BUDGETS``),
and everything below — limits, counters, reservations, thresholds, the API's fields — follows the table.

Counting: each owner (the account, or one key) has one counter document per calendar month
(``repositories.budgets``) holding the month's total of each meter and each day's. A generation's charge is
reserved at creation on every counter whose owner has a limit, with one conditional increment per document
that matches only while every limited budget in it has room, so replicas racing for the last seconds cannot
together pass a limit. It is given back when the generation fails before anything was submitted to a provider
(``GenerationRepository.fail``)."""

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
    # COST = "cost" once providers carry prices: a generation's charge then holds its price beside its
    # seconds.


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
)
BUDGET_NAMES: tuple[str, ...] = tuple(b.name for b in BUDGETS)
BY_NAME: Mapping[str, Budget] = {b.name: b for b in BUDGETS}

# The owner of the account's own counters; a key's are owned by the key's id.
ACCOUNT = "account"


@dataclass(frozen=True, slots=True)
class Limits:
    """An owner's hard limits, by budget name; a budget left out has no limit."""

    values: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any] | None) -> Limits:
        return cls({n: int(v) for n, v in (doc or {}).items() if n in BY_NAME and v is not None})

    def to_doc(self) -> Doc:
        return {name: self.values[name] for name in BUDGET_NAMES if name in self.values}

    def view(self) -> Doc:
        """Every budget's field, null where there is no limit (what the API shows and takes)."""
        return {name: self.values.get(name) for name in BUDGET_NAMES}

    def __bool__(self) -> bool:
        return bool(self.values)

    def limited(self) -> list[tuple[Budget, int]]:
        return [(b, self.values[b.name]) for b in BUDGETS if b.name in self.values]


def charge_of(duration: int) -> dict[Meter, int]:
    """What one generation spends of each meter."""
    return {Meter.VIDEO_SECONDS: duration}


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
