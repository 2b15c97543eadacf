"""Budgets at creation: what POST /v1/generate reserves of the account's and the key's budgets before it
writes anything, and what it gives back when the generation is not written after all.

An account's limits are cached per replica for ``budget_cache_seconds`` (a change made here is seen here at
once); a key's ride with the key (``auth.KeyCache``). An account and key without limits cost nothing: no
store round trip.

With limits, reservations are grouped (``Reservations``), as inserts are (``batched_inserts``): the creations
of one account and key that arrive together reserve their charges (seconds, and estimated cost) summed, each
meter's, with one conditional update per owner's counter (``repositories.budgets``), which admits the whole
group only if the whole group fits. A group that does not fit is reserved again one creation at a time, so
exactly what fits is admitted and the rest refused. One group per account and key is in flight at a time per
replica: concurrent creations queue behind it and leave together, rather than racing each other for the same
counter document. After a group's reservation, one read per owner looks for a threshold reached
(``budget_alerts``)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from videogen_api.auth import Caller
from videogen_api.problems import Problem, budget_exceeded
from videogen_common.budget_alerts import announce_thresholds
from videogen_common.budgets import (
    ACCOUNT,
    Hold,
    Limits,
    Meter,
    Period,
    charge_of,
    day_key,
    month_key,
    period_end,
    period_start,
)
from videogen_common.clock import isoformat
from videogen_common.outbox import EventSink
from videogen_common.repositories.budgets import BudgetCounterRepository, BudgetRepository, Refusal
from videogen_common.repositories.usage import UsageRepository
from videogen_common.store import Store

log = logging.getLogger(__name__)

Owners = list[tuple[str, Limits]]
# What one creation spends of each meter (``budgets.charge_of``).
Charge = dict[Meter, int]


class AccountLimits:
    """Each account's limits, cached for ``ttl_seconds``."""

    def __init__(
        self, store: Store, ttl_seconds: float, monotonic: Callable[[], float] = time.monotonic
    ) -> None:
        self._budgets = BudgetRepository(store)
        self._ttl = ttl_seconds
        self._monotonic = monotonic
        self._cache: dict[str, tuple[Limits, float]] = {}

    async def of(self, account_id: str) -> Limits:
        hit = self._cache.get(account_id)
        if hit is not None and hit[1] > self._monotonic():
            return hit[0]
        limits = await self._budgets.limits_of(account_id)
        self._cache[account_id] = (limits, self._monotonic() + self._ttl)
        return limits

    def forget(self, account_id: str) -> None:
        self._cache.pop(account_id, None)


@dataclass(frozen=True)
class Spend:
    """The budgets a creation spends: the owners with limits (the account, the key)."""

    account_id: str
    owners: Owners

    def __bool__(self) -> bool:
        return bool(self.owners)


async def spend_of(account_limits: AccountLimits, caller: Caller) -> Spend:
    """The limited budgets a creation by ``caller`` spends (none: nothing to reserve)."""
    account = caller.account_id
    owners = [(ACCOUNT, await account_limits.of(account)), (caller.key_id, caller.budgets)]
    return Spend(account, [(owner, limits) for owner, limits in owners if limits])


@dataclass
class _Group:
    """Creations waiting to reserve on the same counters, on the same day."""

    spend: Spend
    now: datetime
    members: list[tuple[Charge, asyncio.Future[Hold | Refusal]]] = field(default_factory=list)


class Reservations:
    """Reserves creations' charges, grouped per account, key and day (see the module's docstring).
    ``percent``: the soft threshold announced once per period."""

    def __init__(self, store: Store, percent: int, sink: EventSink | None = None) -> None:
        self._store = store
        self._counters = BudgetCounterRepository(store)
        self._percent = percent
        # Where an account.budget_threshold event is published once its mark is written.
        self.sink = sink
        self._waiting: dict[tuple[object, ...], _Group] = {}
        self._in_flight: set[tuple[object, ...]] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    async def reserve(self, spend: Spend, duration: int, estimated_cost: float | None, now: datetime) -> Hold:
        """Reserve a generation of ``duration`` seconds and ``estimated_cost`` (None: unknown, counted 0) on
        every budget of ``spend``; 429 budget-exceeded, having reserved nothing, if one has no room."""
        owners = tuple((owner, tuple(sorted(limits.values.items()))) for owner, limits in spend.owners)
        key = (spend.account_id, owners, month_key(now), day_key(now))
        done: asyncio.Future[Hold | Refusal] = asyncio.get_running_loop().create_future()
        charge = charge_of(duration, estimated_cost)
        self._waiting.setdefault(key, _Group(spend, now)).members.append((charge, done))
        self._send(key)
        outcome = await done
        if isinstance(outcome, Refusal):
            raise _refused(outcome, now)
        return outcome

    def _send(self, key: tuple[object, ...]) -> None:
        if key in self._in_flight or key not in self._waiting:
            return
        group = self._waiting.pop(key)
        self._in_flight.add(key)
        task = asyncio.create_task(self._reserve(key, group), name="budget-reservation")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _reserve(self, key: tuple[object, ...], group: _Group) -> None:
        try:
            if await self._all_at_once(group):
                return
            # One at a time: exactly what fits. A creation asking at least as much of a budget as one refused
            # there is refused too, without asking again (nothing here frees room meanwhile).
            refused: dict[tuple[str, str], Refusal] = {}  # the smallest refused, by owner and budget
            for charge, done in group.members:
                known = next((r for r in refused.values() if _needs(charge, r) >= r.requested), None)
                if known is not None:
                    await self._settle(done, Refusal(known.left, _needs(charge, known)))
                    continue
                outcome = await self._counters.reserve(
                    group.spend.account_id, group.spend.owners, charge, group.now
                )
                if isinstance(outcome, Refusal):
                    where = (outcome.left.owner, outcome.left.budget.name)
                    if where not in refused or outcome.requested < refused[where].requested:
                        refused[where] = outcome
                await self._settle(done, outcome)
            await self._announce(group)
        except Exception as exc:
            for _, done in group.members:
                if not done.done():
                    done.set_exception(exc)
        finally:
            self._in_flight.discard(key)
            self._send(key)

    async def _all_at_once(self, group: _Group) -> bool:
        """Reserve the whole group's charges together; whether they fit."""
        total = {meter: sum(charge[meter] for charge, _ in group.members) for meter in Meter}
        outcome = await self._counters.reserve(group.spend.account_id, group.spend.owners, total, group.now)
        if isinstance(outcome, Refusal) and len(group.members) > 1:
            return False
        for charge, done in group.members:
            share = outcome
            if isinstance(outcome, Hold):
                share = Hold(outcome.counters, outcome.day, {m.value: n for m, n in charge.items()})
            await self._settle(done, share)
        await self._announce(group)
        return True

    async def _settle(self, done: asyncio.Future[Hold | Refusal], outcome: Hold | Refusal) -> None:
        if not done.cancelled():
            done.set_result(outcome)
        elif isinstance(outcome, Hold):  # its request went away: nothing will be written for it
            await self._counters.give_back(outcome)

    async def _announce(self, group: _Group) -> None:
        """Announce any threshold the group took a budget past. Never fails a creation: a threshold missed
        now is announced at the next creation in the period."""
        spend = group.spend
        try:
            await announce_thresholds(
                self._store,
                spend.account_id,
                spend.owners,
                self._percent,
                group.now,
                service="api",
                sink=self.sink,
            )
        except Exception:
            log.exception("could not look for budget thresholds reached")

    async def settled(self) -> None:
        """Wait for the reservations under way (at shutdown)."""
        await asyncio.gather(*self._tasks, return_exceptions=True)


def _needs(charge: Charge, refusal: Refusal) -> int:
    """What ``charge`` asks of the budget ``refusal`` refused."""
    return charge.get(refusal.left.budget.meter, 0)


def _refused(refusal: Refusal, now: datetime) -> Problem:
    left = refusal.left
    return budget_exceeded(
        budget=left.budget.name,
        api_key_id=None if left.owner == ACCOUNT else left.owner,
        **left.amounts(),
        requested=left.shown(refusal.requested),
        resets_at=isoformat(left.resets_at),
        retry_after=max(1, int((left.resets_at - now).total_seconds())),
    )


async def give_back(store: Store, hold: Hold) -> None:
    """The generation ``hold`` was reserved for was not written."""
    await BudgetCounterRepository(store).give_back(hold)


async def start_counting(
    store: Store,
    *,
    account_id: str,
    owner: str,
    api_key_id: str | None,
    now: datetime,
) -> None:
    """An owner that had no limits is about to have some: its counter starts from what its generations used
    this month (nothing was counted while it had none). Called before the limits are stored; it only ever
    raises the counter, so a reservation against limits a concurrent request set first is not overwritten."""
    month = (period_start(Period.MONTH, now), period_end(Period.MONTH, now))
    used = await UsageRepository(store).charged_by_day(account_id, api_key_id, *month, now=now)
    await BudgetCounterRepository(store).start_counting(account_id, owner, used, now)
