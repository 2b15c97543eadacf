"""An account's usage (GET /v1/usage): its generations counted and their seconds and cost summed per UTC
day, provider, status and API key, and what each provider charged for the tries made there; and what its
generations charged its budgets, by day (``charged_by_day``: where a budget's counter starts, the api's
``spend``).

A range is read in two parts, so a month costs the same whatever the history behind it:

- **Its settled days from rows** (``usage_days``, one document per account and UTC day): a day that ended
  ``SETTLED`` ago, and all of whose generations have ended, is summed once and kept. Nothing it counts can
  change after that: a generation's created time, provider, duration, key, cost and tries are fixed once it
  has ended (a deletion erases its prompt, media and metadata, not these), and a generation is created at
  its api's now, so none is added to a day an hour past its end. The first read of a day sums it (one
  aggregation over the day's range); a day with a generation still unfinished is summed again at each read
  until it has none.
- **The rest live**: the partial days at the range's ends and the days not settled yet, by aggregations over
  the account's range of the ``generations`` collection's ``by_account`` index
  (``repositories.generation_reads``).

Records out (``UsageGroup``, ``ProviderCharges``)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
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


def _of_range(account_id: str, start: datetime, end: datetime) -> list[Doc]:
    """The leading stage of a usage aggregation: the range (``of_range``) alone, the one shape the embedded
    store lifts into its index lookup; what is asked of one key is kept from the groups (each has its key)."""
    return [{"$match": of_range(account_id, start, end)}]


# A day is summed into a row once it ended this long ago: later than any creation stamped within it is stored.
SETTLED = timedelta(hours=1)
DAY = timedelta(days=1)
_TERMINAL = frozenset(s.value for s in TERMINAL)

# A generation charged nothing of its budgets: it failed before anything was submitted to a provider (a
# budget's give-back rule).
_UNCHARGED: Doc = {
    "$and": [
        {"$eq": ["$status", Status.FAILED.value]},
        {"$eq": [{"$ifNull": ["$submit_started_at", None]}, None]},
        {"$eq": [{"$ifNull": ["$provider_task_id", None]}, None]},
    ]
}
_GROUPS: Doc = {
    "$group": {
        "_id": {
            "day": {"$dateToString": {"format": "%Y-%m-%d", "date": "$created_at"}},
            "provider": "$provider",
            "status": "$status",
            "key": "$api_key_id",
        },
        "generations": {"$sum": 1},
        "seconds": {"$sum": "$duration"},
        "cost": {"$sum": {"$ifNull": ["$cost", 0]}},
    }
}
# $unwind leaves out a generation without attempts (no provider was tried).
_TRIES: list[Doc] = [
    {"$unwind": "$provider_attempts"},
    {
        "$group": {
            "_id": {
                "provider": "$provider_attempts.provider",
                "model": {"$ifNull": ["$provider_attempts.model", None]},
                "key": "$api_key_id",
            },
            "attempts": {"$sum": 1},
            "cost": {"$sum": {"$ifNull": ["$provider_attempts.cost", 0]}},
        }
    },
]
_CHARGED: Doc = {
    "$group": {
        "_id": {"day": {"$dateToString": {"format": "%d", "date": "$created_at"}}, "key": "$api_key_id"},
        "seconds": {"$sum": {"$cond": [_UNCHARGED, 0, "$duration"]}},
        "cost": {"$sum": {"$cond": [_UNCHARGED, 0, {"$ifNull": ["$estimated_cost", 0]}]}},
    }
}

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


@dataclass(frozen=True, slots=True)
class UsageDay:
    """A settled day of an account's usage (a ``usage_days`` document): its groups (as ``UsageGroup``), its
    tries by provider, model and key, and what it charged the budgets by key."""

    day: str
    groups: list[UsageGroup]
    tries: list[tuple[str | None, ProviderCharges]]
    charged: dict[str | None, dict[Meter, int]]

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


class UsageRepository:
    def __init__(self, store: Store) -> None:
        self._generations: AsyncCollection[Doc] = store.generations
        self._days: AsyncCollection[Doc] = store.usage_days

    async def groups(
        self, account_id: str, start: datetime, end: datetime, api_key_id: str | None, *, now: datetime
    ) -> list[UsageGroup]:
        """The account's generations created in [start, end) (of one key, if given), counted and their
        seconds summed per (day, provider, status, key)."""
        days, live = split(start, end, now)
        found = [g for day in await self._settled(account_id, days) for g in day.groups]
        for a, b in live:
            found.extend(await self._groups(account_id, a, b))
        return [g for g in found if api_key_id is None or g.key == api_key_id]

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
        days, live = split(start, end, now)
        tries = [t for day in await self._settled(account_id, days) for t in day.tries]
        for a, b in live:
            tries.extend(await self._tries(account_id, a, b))
        summed: dict[tuple[str, str | None], tuple[int, float]] = {}
        for key, c in tries:
            if api_key_id is None or key == api_key_id:
                attempts, cost = summed.get((c.provider, c.model), (0, 0.0))
                summed[(c.provider, c.model)] = (attempts + c.attempts, cost + c.cost)
        return [
            ProviderCharges(provider, attempts, round(cost, DIGITS), model)
            for (provider, model), (attempts, cost) in sorted(
                summed.items(), key=lambda i: (i[0][0], i[0][1] or "")
            )
        ]

    async def charged_by_day(
        self, account_id: str, api_key_id: str | None, start: datetime, end: datetime, *, now: datetime
    ) -> dict[str, dict[Meter, int]]:
        """What the account's generations (of one key, if given) created in [start, end) have spent of their
        budgets, by UTC day of the month (``DD``) and meter: their seconds and estimated costs (in the
        meters' units, ``budgets.charge_of``), all but those that failed before anything was submitted to a
        provider (a budget's give-back rule)."""
        days, live = split(start, end, now)
        by_day: list[tuple[str, dict[str | None, dict[Meter, int]]]] = [
            (day.day[8:], day.charged) for day in await self._settled(account_id, days)
        ]
        for a, b in live:
            by_day.extend((await self._charged(account_id, a, b)).items())
        used: dict[str, dict[Meter, int]] = {}
        for day, by_key in by_day:
            for key, charged in by_key.items():
                if api_key_id is not None and key != api_key_id:
                    continue
                total = used.setdefault(day, {Meter.VIDEO_SECONDS: 0, Meter.COST: 0})
                for meter, value in charged.items():
                    total[meter] += value
        return {day: charged for day, charged in used.items() if charged[Meter.VIDEO_SECONDS]}

    # -- settled days ----------------------------------------------------------------------------------------

    async def _settled(self, account_id: str, days: list[datetime]) -> list[UsageDay]:
        """The rows of ``days`` (midnights, in order): those kept, and the others summed now (and kept if
        every generation of the day has ended)."""
        if not days:
            return []
        names = [day.strftime("%Y-%m-%d") for day in days]
        cursor = self._days.find({"account_id": account_id, "day": {"$gte": names[0], "$lte": names[-1]}})
        kept = {doc["day"]: UsageDay.from_doc(doc) async for doc in cursor}
        found: list[UsageDay] = []
        for day, name in zip(days, names, strict=True):
            row = kept.get(name)
            if row is None:
                row = await self._sum_day(account_id, day, name)
                if row.settled:
                    # A concurrent first read of the day may write the same row first.
                    with contextlib.suppress(DuplicateKeyError):
                        await self._days.update_one(
                            {"account_id": account_id, "day": name},
                            {"$setOnInsert": row.to_doc(account_id)},
                            upsert=True,
                        )
            found.append(row)
        return found

    async def _sum_day(self, account_id: str, day: datetime, name: str) -> UsageDay:
        end = day + DAY
        charged = await self._charged(account_id, day, end)
        return UsageDay(
            name,
            await self._groups(account_id, day, end),
            await self._tries(account_id, day, end),
            charged.get(name[8:], {}),
        )

    # -- live ranges -----------------------------------------------------------------------------------------

    async def _groups(self, account_id: str, start: datetime, end: datetime) -> list[UsageGroup]:
        pipeline = [*_of_range(account_id, start, end), _GROUPS]
        groups = await (await self._generations.aggregate(pipeline)).to_list(None)
        return [UsageGroup.from_group(group) for group in groups]

    async def _tries(
        self, account_id: str, start: datetime, end: datetime
    ) -> list[tuple[str | None, ProviderCharges]]:
        pipeline = [*_of_range(account_id, start, end), *_TRIES]
        groups = await (await self._generations.aggregate(pipeline)).to_list(None)
        return [
            (
                g["_id"].get("key"),
                ProviderCharges(
                    g["_id"]["provider"],
                    int(g["attempts"]),
                    round(float(g["cost"]), DIGITS),
                    g["_id"].get("model"),
                ),
            )
            for g in groups
        ]

    async def _charged(
        self, account_id: str, start: datetime, end: datetime
    ) -> dict[str, dict[str | None, dict[Meter, int]]]:
        """By day of the month (``DD``), then by key."""
        pipeline = [*_of_range(account_id, start, end), _CHARGED]
        groups = await (await self._generations.aggregate(pipeline)).to_list(None)
        charged: dict[str, dict[str | None, dict[Meter, int]]] = {}
        for group in groups:
            charged.setdefault(group["_id"]["day"], {})[group["_id"].get("key")] = {
                Meter.VIDEO_SECONDS: int(group["seconds"]),
                Meter.COST: from_api(Meter.COST, float(group["cost"] or 0)),
            }
        return charged
