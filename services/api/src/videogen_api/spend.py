"""Budgets at creation: what POST /v1/generate reserves of the account's and the key's budgets before it
writes anything, and what it gives back when the generation is not written after all.

An account's limits are cached per replica for ``budget_cache_seconds`` (a change made here is seen here at
once); a key's ride with the key (``auth.KeyCache``). An account and key without limits cost nothing: no
store round trip. With limits, the reservation is one conditional update per owner's counter
(``repositories.budgets``), and once the generation is written, one read per owner looks for a threshold
reached (``budget_alerts``)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from videogen_api.auth import Caller
from videogen_api.problems import Problem, budget_exceeded
from videogen_common.budget_alerts import announce_thresholds
from videogen_common.budgets import ACCOUNT, Hold, Limits, Period, charge_of, period_end, period_start
from videogen_common.clock import isoformat
from videogen_common.repositories.budgets import BudgetCounterRepository, BudgetRepository, Refusal
from videogen_common.repositories.generations import GenerationRepository
from videogen_common.store import Store

log = logging.getLogger(__name__)

Owners = list[tuple[str, Limits]]


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


async def reserve(store: Store, spend: Spend, duration: int, now: datetime) -> Hold:
    """Reserve a generation of ``duration`` seconds on every budget of ``spend``; 429 budget-exceeded,
    having reserved nothing, if one has no room."""
    outcome = await BudgetCounterRepository(store).reserve(
        spend.account_id, spend.owners, charge_of(duration), now
    )
    if isinstance(outcome, Refusal):
        raise _refused(outcome, now)
    return outcome


def _refused(refusal: Refusal, now: datetime) -> Problem:
    left = refusal.left
    return budget_exceeded(
        budget=left.budget.name,
        api_key_id=None if left.owner == ACCOUNT else left.owner,
        limit=left.limit,
        used=left.used,
        requested=refusal.requested,
        resets_at=isoformat(left.resets_at),
        retry_after=max(1, int((left.resets_at - now).total_seconds())),
    )


async def give_back(store: Store, hold: Hold) -> None:
    """The generation ``hold`` was reserved for was not written."""
    await BudgetCounterRepository(store).give_back(hold)


async def announce(store: Store, spend: Spend, percent: int, now: datetime) -> None:
    """After a creation: announce any threshold it took a budget past. Never fails the creation (the
    generation is written): a threshold missed now is announced at the next creation in the period."""
    try:
        await announce_thresholds(store, spend.account_id, spend.owners, percent, now, service="api")
    except Exception:
        log.exception("could not look for budget thresholds reached")


async def start_counting(
    store: Store,
    generations: GenerationRepository,
    *,
    account_id: str,
    owner: str,
    api_key_id: str | None,
    now: datetime,
) -> None:
    """An owner that had no limits is about to have some: its counter starts from what its generations used
    this month (nothing was counted while it had none). Called before the limits are stored, so no
    reservation against them can be overwritten."""
    month = (period_start(Period.MONTH, now), period_end(Period.MONTH, now))
    used = await generations.charged_seconds_by_day(account_id, api_key_id, *month)
    await BudgetCounterRepository(store).start_counting(account_id, owner, used, now)
