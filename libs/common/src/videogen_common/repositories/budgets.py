"""The ``budgets`` collection (each account's limits, ``{_id: account_id, limits, updated_at}``; a key's are
on the key) and ``budget_counters``: one document per owner (the account, or one of its keys) and calendar
month, ``{_id: "{account}\\n{owner}\\n{YYYY-MM}", video_seconds, cost, days: {"DD": {video_seconds, cost,
notified}}, notified}`` (cost in micro-dollars), what the owner's generations have reserved (see
``videogen_common.budgets``).

A reservation is one conditional ``$inc`` per counter document, which matches only while each of the owner's
limited budgets in it has room for the charge: MongoDB applies it atomically, so however many replicas race,
a limit is never passed (never read-then-write). A missing document is created by the same update (an
upsert); when the document exists but has no room, the upsert's insert fails on the ``_id`` and the charge is
refused."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from pymongo import ASCENDING, IndexModel
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.errors import DuplicateKeyError

from videogen_common.budgets import (
    Hold,
    Limits,
    Meter,
    Period,
    Remaining,
    day_key,
    month_key,
    notified_path,
    period_end,
    remaining,
    threshold_amount,
    used_path,
    value_at,
)
from videogen_common.outbox import OUTBOX_INDEX, owing
from videogen_common.records.event import Event
from videogen_common.store import Store

Doc = dict[str, Any]

# A month's counters are kept two months after it ends (what GET /v1/usage's remaining amounts read is the
# current month's; the older ones only explain a past refusal).
KEPT_AFTER_MONTH = timedelta(days=62)

COUNTER_INDEXES: list[IndexModel] = [
    IndexModel([("expires_at", ASCENDING)], name="expire", expireAfterSeconds=0),
    # A counter carries its account.budget_threshold events until the notifier has taken them in.
    OUTBOX_INDEX,
]


def counter_id(account_id: str, owner: str, month: str) -> str:
    """Account ids and key ids never contain a newline."""
    return f"{account_id}\n{owner}\n{month}"


@dataclass(frozen=True, slots=True)
class Refusal:
    """A charge that does not fit: the first budget it would pass, as it stands, and what was asked."""

    left: Remaining
    requested: int


class BudgetRepository:
    """Each account's own limits (``budgets``)."""

    def __init__(self, store: Store) -> None:
        self._store = store

    @property
    def _budgets(self) -> AsyncCollection[Doc]:
        return self._store.budgets

    async def limits_of(self, account_id: str) -> Limits:
        doc = await self._budgets.find_one({"_id": account_id})
        return Limits.from_doc(doc["limits"] if doc else None)

    async def set_limits(self, account_id: str, limits: Limits, now: datetime) -> None:
        await self._budgets.replace_one(
            {"_id": account_id}, {"limits": limits.to_doc(), "updated_at": now}, upsert=True
        )


class BudgetCounterRepository:
    """What each owner's generations have reserved, per month and day (``budget_counters``)."""

    def __init__(self, store: Store) -> None:
        self._store = store

    @property
    def _counters(self) -> AsyncCollection[Doc]:
        return self._store.budget_counters

    async def reserve(
        self,
        account_id: str,
        owners: Sequence[tuple[str, Limits]],
        charge: Mapping[Meter, int],
        now: datetime,
    ) -> Hold | Refusal:
        """Reserve ``charge`` on the counter of each owner with limits, or on none: all of them at once (one
        conditional update each, concurrently), and if any refuses, the others are given back."""
        month, day = month_key(now), day_key(now)
        limited = [(owner, limits) for owner, limits in owners if limits]
        ids = [counter_id(account_id, owner, month) for owner, _ in limited]
        taken = await asyncio.gather(
            *(
                self._take(cid, account_id=account_id, owner=owner, limits=limits, charge=charge, now=now)
                for cid, (owner, limits) in zip(ids, limited, strict=True)
            ),
            return_exceptions=True,
        )
        hold = Hold(tuple(ids), day, {meter.value: amount for meter, amount in charge.items()})
        if all(t is True for t in taken):
            return hold
        await self.give_back(
            Hold(tuple(cid for cid, t in zip(ids, taken, strict=True) if t is True), day, hold.charge)
        )
        for outcome in taken:
            if isinstance(outcome, BaseException):
                raise outcome
        refused = next(i for i, t in enumerate(taken) if t is False)
        owner, limits = limited[refused]
        return await self._refusal(ids[refused], owner, limits, charge, now)

    async def _take(
        self,
        cid: str,
        *,
        account_id: str,
        owner: str,
        limits: Limits,
        charge: Mapping[Meter, int],
        now: datetime,
    ) -> bool:
        day = day_key(now)
        condition: Doc = {"_id": cid}
        for budget, limit in limits.limited():
            room = limit - charge.get(budget.meter, 0)
            if room < 0:
                return False
            # "not more than room" also matches a counter not made yet (nothing used).
            condition[used_path(budget, day)] = {"$not": {"$gt": room}}
        update: Doc = {
            "$inc": _increments(charge, day, 1),
            "$setOnInsert": {
                "account_id": account_id,
                "owner": owner,
                "month": month_key(now),
                "expires_at": period_end(Period.MONTH, now) + KEPT_AFTER_MONTH,
            },
        }
        try:
            await self._counters.update_one(condition, update, upsert=True)
            return True
        except DuplicateKeyError:
            # The document exists: either it has no room, or another replica has just made it. Applied again
            # without the insert, the update tells which.
            done = await self._counters.update_one(condition, update)
            return done.modified_count == 1

    async def _refusal(
        self, cid: str, owner: str, limits: Limits, charge: Mapping[Meter, int], now: datetime
    ) -> Refusal:
        counter = await self._counters.find_one({"_id": cid})
        states = remaining(owner, limits, counter, now)
        for state in states:
            asked = charge.get(state.budget.meter, 0)
            if state.used + asked > state.limit:
                return Refusal(state, asked)
        # It had room by the time we looked: someone's reservation was given back meanwhile.
        return Refusal(states[0], charge.get(states[0].budget.meter, 0))

    async def give_back(self, hold: Hold) -> None:
        """Take the charge of ``hold`` off each of its counters."""
        charge = {Meter(meter): amount for meter, amount in hold.charge.items()}
        await asyncio.gather(
            *(
                self._counters.update_one({"_id": cid}, {"$inc": _increments(charge, hold.day, -1)})
                for cid in hold.counters
            )
        )

    async def thresholds_unannounced(
        self, account_id: str, owner: str, limits: Limits, percent: int, now: datetime
    ) -> list[Remaining]:
        """The owner's budgets whose use in this period has reached ``percent`` of their limit and that were
        not marked announced yet (``mark_announced``)."""
        counter = await self._counters.find_one({"_id": counter_id(account_id, owner, month_key(now))})
        if counter is None:
            return []
        day = day_key(now)
        return [
            state
            for state in remaining(owner, limits, counter, now)
            if state.limit > 0
            and state.used >= threshold_amount(state.limit, percent)
            and value_at(counter, notified_path(state.budget, day)) is None
        ]

    async def mark_announced(
        self, account_id: str, state: Remaining, now: datetime, *, owes: Event | None = None
    ) -> bool:
        """``state``'s threshold was announced in its period: not again in that period. ``owes``: the
        ``account.budget_threshold`` event, carried by this very write (``outbox.owing``). False if it was
        marked already (by another replica: its write carries the event)."""
        path = notified_path(state.budget, day_key(now))
        update: Doc = {"$set": {path: now}}
        marked = await self._counters.update_one(
            {"_id": counter_id(account_id, state.owner, month_key(now)), path: {"$exists": False}},
            owing(update, owes) if owes is not None else update,
        )
        return marked.modified_count == 1

    async def remaining(
        self, account_id: str, owners: Sequence[tuple[str, Limits]], now: datetime
    ) -> list[Remaining]:
        """Each limited budget of these owners as it stands now."""
        month = month_key(now)
        found: list[Remaining] = []
        for owner, limits in owners:
            if limits:
                counter = await self._counters.find_one({"_id": counter_id(account_id, owner, month)})
                found += remaining(owner, limits, counter, now)
        return found

    async def start_counting(
        self, account_id: str, owner: str, used_by_day: Mapping[str, Mapping[Meter, int]], now: datetime
    ) -> None:
        """An owner that had no limits has some now: its counter for this month counts at least what its
        generations already used this month (``used_by_day``, each meter's use by ``DD``), since nothing was
        counted while it had none.

        Each counted field is raised to that use, never lowered (``$max``): a reservation made meanwhile
        against limits another request just set (two first budgets at once) is never erased, and what an
        earlier time with limits counted is part of the month's use already. An ``outbox`` of events still
        owed stays."""
        month = month_key(now)
        raised: Doc = {m.value: sum(used.get(m, 0) for used in used_by_day.values()) for m in Meter}
        for day, used in used_by_day.items():
            raised.update({f"days.{day}.{m.value}": used.get(m, 0) for m in Meter})
        await self._counters.update_one(
            {"_id": counter_id(account_id, owner, month)},
            {
                "$set": {
                    "account_id": account_id,
                    "owner": owner,
                    "month": month,
                    "expires_at": period_end(Period.MONTH, now) + KEPT_AFTER_MONTH,
                },
                "$max": raised,
            },
            upsert=True,
        )


def _increments(charge: Mapping[Meter, int], day: str, sign: int) -> Doc:
    increments: Doc = {}
    for meter, amount in charge.items():
        increments[meter.value] = sign * amount
        increments[f"days.{day}.{meter.value}"] = sign * amount
    return increments
