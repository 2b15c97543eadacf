"""An account's usage (GET /v1/usage): its generations counted and their seconds and cost summed per UTC
day, provider, status and API key, and what each provider charged for the tries made there; and what its
generations charged its budgets, by day (``charged_by_day``: where a budget's counter starts, the api's
``spend``).

A range is read in two parts, so a month costs the same whatever the history behind it:

- **Its settled days from rows** (``usage_days``, one document per account and UTC day): a day that ended
  ``SETTLED`` ago, and all of whose generations have ended, is summed once and kept. Nothing it counts can
  change after that: a generation's created time, provider, duration, key, cost and tries are fixed once it
  has ended (a deletion erases its prompt, media and metadata, not these), and a generation is created at
  its api's now, so none is added to a day an hour past its end. The days a read finds without a row are
  summed together (three aggregations over each run of them, grouped by day); a day with a generation still
  unfinished is summed again at each read until it has none, and a day without any keeps no row (what is
  written into it later, a test's seed or a load test's history, is counted).
- **The rest live**: the partial days at the range's ends and the days not settled yet, by aggregations over
  the account's range of the ``generations`` collection's ``by_account`` index
  (``repositories.generation_reads``).

Records out (``UsageGroup``, ``ProviderCharges``)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from pymongo import ASCENDING, IndexModel
from pymongo.asynchronous.collection import AsyncCollection

from videogen_common.budgets import Meter, from_api
from videogen_common.domain import TERMINAL, Status
from videogen_common.pricing import DIGITS
from videogen_common.store import DuplicateKeyError, Store

Doc = dict[str, Any]


@dataclass(frozen=True, slots=True)
class UsageGroup:
    """One group of ``UsageRepository.groups``: the generations of one UTC day (``YYYY-MM-DD``), provider,
    status and API key (None for those made without one), how many, and their seconds summed."""

    day: str
    provider: str
    status: str
    key: str | None
    generations: int
    seconds: int
    cost: float = 0.0

    @classmethod
    def from_group(cls, group: Doc) -> UsageGroup:
        """From the aggregation's ``{_id: {day, provider, status, key}, generations, seconds}`` (``key`` is
        left out of ``_id`` for generations without one)."""
        by = group["_id"]
        return cls(
            day=by["day"],
            provider=by["provider"],
            status=by["status"],
            key=by.get("key"),
            generations=int(group["generations"]),
            seconds=int(group["seconds"]),
            cost=round(float(group.get("cost") or 0.0), DIGITS),
        )


@dataclass(frozen=True, slots=True)
class ProviderCharges:
    """What one provider charged for the tries made there (``UsageRepository.by_provider``), or, with
    ``model``, for the tries of one of its models (``UsageRepository.by_model``; None: tries recorded
    before models were)."""

    provider: str
    attempts: int
    cost: float
    model: str | None = None


def totals_by_provider(charges: list[ProviderCharges]) -> list[ProviderCharges]:
    """Charges by (provider, model) summed per provider, by provider."""
    summed: dict[str, tuple[int, float]] = {}
    for c in charges:
        attempts, cost = summed.get(c.provider, (0, 0.0))
        summed[c.provider] = (attempts + c.attempts, cost + c.cost)
    return [ProviderCharges(p, a, round(cost, DIGITS)) for p, (a, cost) in sorted(summed.items())]


def of_range(account_id: str, start: datetime, end: datetime) -> Doc:
    """The account's generations created in [start, end): the range of ``by_account`` and nothing beside it,
    the one shape the embedded store serves by that index (any other condition in the same ``$match`` makes
    it look the account up by ``account_id`` alone: every generation of the account, the whole year)."""
    return {"account_id": account_id, "created_at": {"$gte": start, "$lt": end}}


# A day is summed into a row once it ended this long ago: later than any creation stamped within it is stored.
SETTLED = timedelta(hours=1)
DAY = timedelta(days=1)
_TERMINAL = frozenset(s.value for s in TERMINAL)
_DAY_OF: Doc = {"$dateToString": {"format": "%Y-%m-%d", "date": "$created_at"}}

# A generation charged nothing of its budgets: it failed before anything was submitted to a provider (a
# budget's give-back rule).
_UNCHARGED: Doc = {
    "$and": [
        {"$eq": ["$status", Status.FAILED.value]},
        {"$eq": [{"$ifNull": ["$submit_started_at", None]}, None]},
        {"$eq": [{"$ifNull": ["$provider_task_id", None]}, None]},
    ]
}
# Each groups by UTC day and key (``key`` is left out of ``_id`` for generations made without one).
_GROUPS: list[Doc] = [
    {
        "$group": {
            "_id": {"day": _DAY_OF, "provider": "$provider", "status": "$status", "key": "$api_key_id"},
            "generations": {"$sum": 1},
            "seconds": {"$sum": "$duration"},
            "cost": {"$sum": {"$ifNull": ["$cost", 0]}},
        }
    }
]
# $unwind leaves out a generation without attempts (no provider was tried).
_TRIES: list[Doc] = [
    {"$unwind": "$provider_attempts"},
    {
        "$group": {
            "_id": {
                "day": _DAY_OF,
                "provider": "$provider_attempts.provider",
                "model": {"$ifNull": ["$provider_attempts.model", None]},
                "key": "$api_key_id",
            },
            "attempts": {"$sum": 1},
            "cost": {"$sum": {"$ifNull": ["$provider_attempts.cost", 0]}},
        }
    },
]
_CHARGED: list[Doc] = [
    {
        "$group": {
            "_id": {"day": _DAY_OF, "key": "$api_key_id"},
            "seconds": {"$sum": {"$cond": [_UNCHARGED, 0, "$duration"]}},
            "cost": {"$sum": {"$cond": [_UNCHARGED, 0, {"$ifNull": ["$estimated_cost", 0]}]}},
        }
    }
]

INDEXES = [IndexModel([("account_id", ASCENDING), ("day", ASCENDING)], name="by_account_day", unique=True)]


def _midnight(moment: datetime) -> datetime:
    return moment.replace(hour=0, minute=0, second=0, microsecond=0)


def split(
    start: datetime, end: datetime, now: datetime
) -> tuple[list[datetime], list[tuple[datetime, datetime]]]:
    """[start, end) as the settled whole days read from rows (each day's midnight) and the ranges read live
    (what is left at either end)."""
    first = _midnight(start)
    if first < start:
        first += DAY
    last = min(_midnight(end), _midnight(now - SETTLED))
    days: list[datetime] = []
    day = first
    while day + DAY <= last:
        days.append(day)
        day += DAY
    if not days:
        return [], [(start, end)]
    live = [(a, b) for a, b in ((start, days[0]), (days[-1] + DAY, end)) if a < b]
    return days, live


def _runs(days: list[datetime]) -> list[tuple[datetime, datetime]]:
    """Days (midnights, in order) as the ranges of consecutive ones."""
    runs: list[tuple[datetime, datetime]] = []
    for day in days:
        if runs and runs[-1][1] == day:
            runs[-1] = (runs[-1][0], day + DAY)
        else:
            runs.append((day, day + DAY))
    return runs


@dataclass(frozen=True, slots=True)
class UsageDay:
    """An account's usage on one UTC day (``YYYY-MM-DD``), or on the part of it a range holds: its groups
    (as ``UsageGroup``), its tries by key, provider and model, and what it charged the budgets by key. A
    settled one is kept as a ``usage_days`` document."""

    day: str
    groups: list[UsageGroup] = field(default_factory=list)
    tries: list[tuple[str | None, ProviderCharges]] = field(default_factory=list)
    charged: dict[str | None, dict[Meter, int]] = field(default_factory=dict)

    def to_doc(self, account_id: str) -> Doc:
        return {
            "account_id": account_id,
            "day": self.day,
            "groups": [
                {
                    "provider": g.provider,
                    "status": g.status,
                    "key": g.key,
                    "generations": g.generations,
                    "seconds": g.seconds,
                    "cost": g.cost,
                }
                for g in self.groups
            ],
            "tries": [
                {"key": key, "provider": c.provider, "model": c.model, "attempts": c.attempts, "cost": c.cost}
                for key, c in self.tries
            ],
            "charged": [
                {"key": key, "seconds": used[Meter.VIDEO_SECONDS], "cost": used[Meter.COST]}
                for key, used in self.charged.items()
            ],
        }

    @classmethod
    def from_doc(cls, doc: Doc) -> UsageDay:
        day = doc["day"]
        return cls(
            day=day,
            groups=[
                UsageGroup(
                    day, g["provider"], g["status"], g["key"], g["generations"], g["seconds"], g["cost"]
                )
                for g in doc["groups"]
            ],
            tries=[
                (t["key"], ProviderCharges(t["provider"], t["attempts"], t["cost"], t["model"]))
                for t in doc["tries"]
            ],
            charged={
                c["key"]: {Meter.VIDEO_SECONDS: c["seconds"], Meter.COST: c["cost"]} for c in doc["charged"]
            },
        )

    @property
    def settled(self) -> bool:
        """Whether every generation of the day has ended (then it is kept)."""
        return all(g.status in _TERMINAL for g in self.groups)


def groups_in(days: list[UsageDay], api_key_id: str | None) -> list[UsageGroup]:
    """The days' groups (of one key, if given)."""
    return [g for day in days for g in day.groups if api_key_id is None or g.key == api_key_id]


def tries_in(days: list[UsageDay], api_key_id: str | None) -> list[ProviderCharges]:
    """The days' tries (of one key, if given) summed per (provider, model), by provider then model."""
    summed: dict[tuple[str, str | None], tuple[int, float]] = {}
    for day in days:
        for key, c in day.tries:
            if api_key_id is None or key == api_key_id:
                attempts, cost = summed.get((c.provider, c.model), (0, 0.0))
                summed[(c.provider, c.model)] = (attempts + c.attempts, cost + c.cost)
    return [
        ProviderCharges(provider, attempts, round(cost, DIGITS), model)
        for (provider, model), (attempts, cost) in sorted(
            summed.items(), key=lambda i: (i[0][0], i[0][1] or "")
        )
    ]


class UsageRepository:
    def __init__(self, store: Store) -> None:
        self._generations: AsyncCollection[Doc] = store.generations
        self._days: AsyncCollection[Doc] = store.usage_days

    async def groups(
        self, account_id: str, start: datetime, end: datetime, api_key_id: str | None, *, now: datetime
    ) -> list[UsageGroup]:
        """The account's generations created in [start, end) (of one key, if given), counted and their
        seconds summed per (day, provider, status, key)."""
        return groups_in(await self.days(account_id, start, end, now), api_key_id)

    async def by_provider(
        self, account_id: str, start: datetime, end: datetime, api_key_id: str | None, *, now: datetime
    ) -> list[ProviderCharges]:
        """The tries at each provider of the account's generations created in [start, end) that ended, and
        what they cost (``by_model`` summed per provider)."""
        return totals_by_provider(await self.by_model(account_id, start, end, api_key_id, now=now))

    async def by_model(
        self, account_id: str, start: datetime, end: datetime, api_key_id: str | None, *, now: datetime
    ) -> list[ProviderCharges]:
        """The tries at each (provider, model) of the account's generations created in [start, end) that
        ended, and what they cost (a generation tried at two providers counts at each)."""
        return tries_in(await self.days(account_id, start, end, now), api_key_id)

    async def charged_by_day(
        self, account_id: str, api_key_id: str | None, start: datetime, end: datetime, *, now: datetime
    ) -> dict[str, dict[Meter, int]]:
        """What the account's generations (of one key, if given) created in [start, end) have spent of their
        budgets, by UTC day of the month (``DD``) and meter: their seconds and estimated costs (in the
        meters' units, ``budgets.charge_of``), all but those that failed before anything was submitted to a
        provider (a budget's give-back rule)."""
        used: dict[str, dict[Meter, int]] = {}
        for day in await self.days(account_id, start, end, now):
            for key, charged in day.charged.items():
                if api_key_id is None or key == api_key_id:
                    total = used.setdefault(day.day[8:], {Meter.VIDEO_SECONDS: 0, Meter.COST: 0})
                    for meter, value in charged.items():
                        total[meter] += value
        return {day: charged for day, charged in used.items() if charged[Meter.VIDEO_SECONDS]}

    async def days(self, account_id: str, start: datetime, end: datetime, now: datetime) -> list[UsageDay]:
        """[start, end) day by day: the settled days from their rows (those without one summed now, and
        kept), the rest live. One read for all a caller asks of the range (``groups_in``, ``tries_in``)."""
        settled, live = split(start, end, now)
        days: list[UsageDay] = []
        if settled:
            names = [day.strftime("%Y-%m-%d") for day in settled]
            query = {"account_id": account_id, "day": {"$gte": names[0], "$lte": names[-1]}}
            kept = {doc["day"]: UsageDay.from_doc(doc) async for doc in self._days.find(query)}
            days.extend(kept.values())
            for a, b in _runs([day for day, name in zip(settled, names, strict=True) if name not in kept]):
                summed = await self._summed(account_id, a, b)
                days.extend(summed)
                for day in summed:
                    if day.settled:
                        await self._keep(account_id, day)
        for a, b in live:
            days.extend(await self._summed(account_id, a, b))
        return days

    async def _keep(self, account_id: str, day: UsageDay) -> None:
        # A concurrent first read of the day may write the same row first.
        with contextlib.suppress(DuplicateKeyError):
            await self._days.update_one(
                {"account_id": account_id, "day": day.day},
                {"$setOnInsert": day.to_doc(account_id)},
                upsert=True,
            )

    async def _summed(self, account_id: str, start: datetime, end: datetime) -> list[UsageDay]:
        """The days of [start, end) that have generations, summed from them (three aggregations over the
        range of ``by_account``, each grouped by day). A day without any has no row: nothing to keep."""
        match = [{"$match": of_range(account_id, start, end)}]
        days: dict[str, UsageDay] = {}

        def day_of(group: Doc) -> UsageDay:
            name = group["_id"]["day"]
            return days.setdefault(name, UsageDay(name))

        for group in await (await self._generations.aggregate([*match, *_GROUPS])).to_list(None):
            day_of(group).groups.append(UsageGroup.from_group(group))
        for group in await (await self._generations.aggregate([*match, *_TRIES])).to_list(None):
            by = group["_id"]
            charges = ProviderCharges(
                by["provider"], int(group["attempts"]), round(float(group["cost"]), DIGITS)
            )
            day_of(group).tries.append((by.get("key"), replace(charges, model=by.get("model"))))
        for group in await (await self._generations.aggregate([*match, *_CHARGED])).to_list(None):
            day_of(group).charged[group["_id"].get("key")] = {
                Meter.VIDEO_SECONDS: int(group["seconds"]),
                Meter.COST: from_api(Meter.COST, float(group["cost"] or 0)),
            }
        return sorted(days.values(), key=lambda day: day.day)
