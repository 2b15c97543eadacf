"""An account's usage (GET /v1/usage): its generations counted and their seconds and cost summed per UTC
day, provider, status and API key, and what each provider charged for the tries made there; and what its
generations charged its budgets, by day (``charged_by_day``: where a budget's counter starts, the api's
``spend``). All aggregations over the account's range of the ``generations`` collection's ``by_account``
index (``repositories.generation_reads``); records out (``UsageGroup``, ``ProviderCharges``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pymongo.asynchronous.collection import AsyncCollection

from videogen_common.budgets import Meter, from_api
from videogen_common.domain import Status
from videogen_common.pricing import DIGITS
from videogen_common.store import Store

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


def _of_range(account_id: str, start: datetime, end: datetime, api_key_id: str | None) -> list[Doc]:
    """The leading stages of a usage aggregation: the range (``of_range``), then, in a stage of its own,
    one key's generations if asked (MongoDB merges the two stages; the embedded store lifts only the first
    into its index lookup)."""
    stages: list[Doc] = [{"$match": of_range(account_id, start, end)}]
    if api_key_id is not None:
        stages.append({"$match": {"api_key_id": api_key_id}})
    return stages


class UsageRepository:
    def __init__(self, store: Store) -> None:
        self._generations: AsyncCollection[Doc] = store.generations

    async def groups(
        self, account_id: str, start: datetime, end: datetime, api_key_id: str | None
    ) -> list[UsageGroup]:
        """The account's generations created in [start, end) (of one key, if given), counted and their
        seconds summed per (day, provider, status, key)."""
        pipeline: list[Doc] = [
            *_of_range(account_id, start, end, api_key_id),
            {
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
            },
        ]
        groups = await (await self._generations.aggregate(pipeline)).to_list(None)
        return [UsageGroup.from_group(group) for group in groups]

    async def by_provider(
        self, account_id: str, start: datetime, end: datetime, api_key_id: str | None
    ) -> list[ProviderCharges]:
        """The tries at each provider of the account's generations created in [start, end) that ended, and
        what they cost (``by_model`` summed per provider)."""
        return totals_by_provider(await self.by_model(account_id, start, end, api_key_id))

    async def by_model(
        self, account_id: str, start: datetime, end: datetime, api_key_id: str | None
    ) -> list[ProviderCharges]:
        """The tries at each (provider, model) of the account's generations created in [start, end) that
        ended, and what they cost: one aggregation over the same range, each generation's
        ``provider_attempts`` unwound (a generation tried at two providers counts at each)."""
        pipeline: list[Doc] = [
            *_of_range(account_id, start, end, api_key_id),
            # $unwind leaves out a generation without attempts (no provider was tried).
            {"$unwind": "$provider_attempts"},
            {
                "$group": {
                    "_id": {
                        "provider": "$provider_attempts.provider",
                        "model": {"$ifNull": ["$provider_attempts.model", None]},
                    },
                    "attempts": {"$sum": 1},
                    "cost": {"$sum": {"$ifNull": ["$provider_attempts.cost", 0]}},
                }
            },
        ]
        groups = await (await self._generations.aggregate(pipeline)).to_list(None)
        return sorted(
            (
                ProviderCharges(
                    g["_id"]["provider"],
                    int(g["attempts"]),
                    round(float(g["cost"]), DIGITS),
                    g["_id"].get("model"),
                )
                for g in groups
            ),
            key=lambda charges: (charges.provider, charges.model or ""),
        )

    async def charged_by_day(
        self, account_id: str, api_key_id: str | None, start: datetime, end: datetime
    ) -> dict[str, dict[Meter, int]]:
        """What the account's generations (of one key, if given) created in [start, end) have spent of their
        budgets, by UTC day of the month (``DD``) and meter: their seconds and estimated costs (in the
        meters' units, ``budgets.charge_of``), all but those that failed before anything was submitted to a
        provider (a budget's give-back rule)."""
        # The range of by_account alone in the first stage, the key in a second: the embedded store serves
        # only that shape by the index (as in ``groups``).
        in_range: Doc = {"account_id": account_id, "created_at": {"$gte": start, "$lt": end}}
        stages: list[Doc] = [{"$match": in_range}]
        if api_key_id is not None:
            stages.append({"$match": {"api_key_id": api_key_id}})
        uncharged: Doc = {
            "$and": [
                {"$eq": ["$status", Status.FAILED.value]},
                {"$eq": [{"$ifNull": ["$submit_started_at", None]}, None]},
                {"$eq": [{"$ifNull": ["$provider_task_id", None]}, None]},
            ]
        }
        pipeline: list[Doc] = [
            *stages,
            {
                "$group": {
                    "_id": {"$dateToString": {"format": "%d", "date": "$created_at"}},
                    "seconds": {"$sum": {"$cond": [uncharged, 0, "$duration"]}},
                    "cost": {"$sum": {"$cond": [uncharged, 0, {"$ifNull": ["$estimated_cost", 0]}]}},
                }
            },
        ]
        groups = await (await self._generations.aggregate(pipeline)).to_list(None)
        return {
            group["_id"]: {
                Meter.VIDEO_SECONDS: int(group["seconds"]),
                Meter.COST: from_api(Meter.COST, float(group["cost"] or 0)),
            }
            for group in groups
            if group["seconds"]
        }
