"""Admission: which generation starts next at a provider, and on which of its keys.

The scarce resource is the providers' capacity. Each provider key is a pool of slots shared by every
orchestrator instance (``repositories.provider_pools``); each account has its cap on generations in flight
(``slots``). A generation starts when it holds one of each; otherwise it waits, ``queued``, in its account's
line at the provider for its priority (``repositories.waiting``), and is started when a slot frees:

- **Fair share.** A freed slot goes to the waiting account with the fewest generations running at that
  provider (the one waiting longest among equals), so one account's burst cannot hold back another's one
  generation; within an account, ``high`` before ``normal`` before ``low``, each oldest first.
- **No jumping the line.** A new generation at a provider where others wait joins the line, and the line is
  served in fair turn; only where nobody who could start waits (accounts at their own cap do not count) does
  it start at once.
- **Adaptive limits.** A provider that refuses a submit for capacity (429) pauses its pool (Retry-After, or a
  backoff), halves the pool's effective limit, and the generation goes back to the front of its line; the
  limit climbs back by one after as many accepted tasks as it is high.

The cost of choosing never grows with the number of generations waiting: it reads the provider's pools, its
pending lanes (one per waiting account and priority) and those accounts' slot counts, then looks a few places
into one lane. What the runner asks: ``admit`` (a claimed generation: start it, or it waits), ``wait`` (make
it wait), ``next_waiting`` (the one to start next at a provider), ``release`` and ``refused``; for a successor
kept on standby while a provider is full (``successors``): ``successor``, ``still_first``, ``stand_by``,
``hand_over`` and ``room_for``. Moving a generation whose route has other candidates is ``rerouting``'s, with
each key's breaker (``health``): peers of admission, built beside it (``assembly``)."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from videogen_common.clock import Clock
from videogen_common.domain import TERMINAL, Priority
from videogen_common.generations import QueueReason
from videogen_common.records.admission import ProviderPool, WaitingLane, lane_id, pool_id, wait_key
from videogen_common.records.generation import GenerationRecord
from videogen_common.repositories.generations import GenerationRepository
from videogen_common.repositories.leases import LeaseRepository
from videogen_common.repositories.provider_pools import ProviderPoolRepository
from videogen_common.repositories.waiting import WaitingRepository
from videogen_common.store import Store
from videogen_orchestrator.settings import PoolConfig
from videogen_orchestrator.slots import AccountSlots

log = logging.getLogger(__name__)

FINISHED = {s.value for s in TERMINAL}
_NEVER = datetime.min.replace(tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Admitted:
    """The generation holds its slots: it runs on ``pool`` (as read when its slot was taken; None where the
    provider has no pool here, and the actor fails it as not configured)."""

    pool: ProviderPool | None


@dataclass(frozen=True, slots=True)
class Wait:
    """The generation must wait, for ``reason`` (a ``QueueReason``)."""

    reason: str


@dataclass(frozen=True, slots=True)
class Next:
    """The generation to start next at a provider, and the lane it waits in."""

    generation_id: str
    lane: str


# Told how long a generation waited (seconds) when it is admitted from its line, by provider.
WaitObserver = Callable[[str, float], None]
# Told of each capacity refusal, by pool (the pool as it now is).
RefusalObserver = Callable[[ProviderPool], None]


class Admission:
    def __init__(
        self,
        *,
        store: Store,
        clock: Clock,
        account_cap: int,
        pools: Iterable[PoolConfig] = (),
        on_waited: WaitObserver | None = None,
        on_refused: RefusalObserver | None = None,
    ) -> None:
        self._generations = GenerationRepository(store)
        self._leases = LeaseRepository(store)
        self._pools = ProviderPoolRepository(store)
        self._waiting = WaitingRepository(store)
        self._clock = clock
        self.accounts = AccountSlots(store, cap=account_cap)
        self._configured = [
            ProviderPool(
                pool_id(p.provider.value, p.name),
                p.provider.value,
                p.name,
                p.limit,
                p.limit,
                model=p.model,
                resolution=p.resolution,
            )
            for p in pools
        ]
        self._on_waited = on_waited
        self._on_refused = on_refused
        self._registered = False
        # Whether each provider's pools had no room when last read here (only the order of next_waiting's
        # two reads depends on it).
        self._full: dict[str, bool] = {}
        # Whether work waited for each provider's capacity when its lines were last looked at here.
        self._waited: dict[str, bool] = {}

    def contended(self, provider: str) -> bool:
        """Whether work waits for ``provider``'s capacity, as this instance last saw its lines (a generation
        told to wait, a look at the lines when a slot freed, the reconciler's pass): then a slot freed late is
        time lost for someone, and the tasks there are polled at the base interval."""
        return self._waited.get(provider, False)

    @property
    def providers(self) -> list[str]:
        """The providers whose pools this instance registered."""
        return sorted({pool.provider for pool in self._configured})

    async def register(self) -> None:
        """Make (or update to the configured limits) this deployment's pools; done at the first use (the
        reconciler's first pass at the latest), so start-up does not wait for the store."""
        for pool in self._configured:
            await self._pools.register(pool)
        self._registered = True

    async def _pools_of(self, provider: str) -> list[ProviderPool]:
        if not self._registered:
            await self.register()
        return await self._pools.of_provider(provider)

    # -- a claimed generation -------------------------------------------------------------------------------

    async def admit(
        self, record: GenerationRecord, *, from_line: bool, usable: Callable[[str], bool] | None = None
    ) -> Admitted | Wait:
        """The slots a claimed generation needs, if it can have them now. One already at its provider (or
        that took a slot before its instance died) keeps what it holds, whatever the counts. A new one joins
        the line where others wait at its provider (``from_line``: it is the one the line chose).
        ``usable``: whether it may take a slot on a key (``Rerouting.recheck``: not one whose breaker is
        open); None: any."""
        now = self._clock.now()
        pools = await self._pools_of(record.provider)
        if not pools:
            await self.accounts.keep(record.account_id, record.id)
            return Admitted(None)
        holding = next((pool for pool in pools if pool.holds(record.id)), None)
        if record.provider_task_id is not None or holding is not None:
            pool = holding or _pool_named(pools, record.provider_pool)
            if holding is None and pool.effective is None:
                await self.accounts.keep(record.account_id, record.id, key=pool.id)
            else:
                await self.accounts.keep(record.account_id, record.id)
                if holding is None:
                    await self._pools.keep(pool.id, record.id, record.account_id)
            return Admitted(pool)
        if not from_line and await self._line_ahead(record.provider, pools):
            self._waited[record.provider] = True
            if record.attempts > 1:  # resumed: it may have died on standby, holding its account's slot
                await self.accounts.release(record.account_id, record.id)
                await self.off_standby(record)
            return Wait(QueueReason.PROVIDER_CAPACITY)
        allowed = [pool for pool in pools if usable is None or usable(pool.id)]
        # A key without a limit takes no slot of its own: the account's slot names it (one write).
        unlimited = next((pool for pool in allowed if pool.effective is None and pool.room(now) > 0), None)
        key = unlimited.id if unlimited is not None else None
        if not await self.accounts.acquire(record.account_id, record.id, key=key):
            return Wait(QueueReason.ACCOUNT_CONCURRENCY)
        if unlimited is not None:
            self._admitted_from_line(record, now, from_line)
            return Admitted(unlimited)
        for pool in sorted(allowed, key=lambda p: p.room(now), reverse=True):
            if pool.room(now) > 0 and await self._pools.take(pool, record.id, record.account_id, now):
                self._admitted_from_line(record, now, from_line)
                return Admitted(pool)
        await self.accounts.release(record.account_id, record.id)
        self._waited[record.provider] = True
        return Wait(QueueReason.PROVIDER_CAPACITY)

    def _admitted_from_line(self, record: GenerationRecord, now: datetime, from_line: bool) -> None:
        if from_line and self._on_waited is not None and record.status_since is not None:
            self._on_waited(record.provider, max(0.0, (now - record.status_since).total_seconds()))

    async def wait(
        self, record: GenerationRecord, reason: str, *, refused: bool = False
    ) -> GenerationRecord | None:
        """Put a generation leased under ``record``'s token in its line, ``queued`` for ``reason``, and let go
        of its lease; it keeps the place it had (a refused one waits at the front again). Returns it as it
        now waits, or None if it moved meanwhile (canceled)."""
        rank = Priority(record.priority or Priority.NORMAL).rank
        lane = lane_id(record.provider, record.account_id, rank)
        place = record.queue_place
        if place is None:
            lane, place = await self._waiting.take_place(record.provider, record.account_id, rank)
        key = wait_key(lane, place, record.id)
        now = self._clock.now()
        waiting = await self._waiting.join_lane(record, key, place, reason, now=now, refused=refused)
        if waiting is None:
            return None
        await self._waiting.joined(lane, place, record.created_at)
        await self._pools.joined_line(record.provider)  # after its lane is pending (``_line_ahead``)
        if not await self._leases.leave_lease(waiting):
            return None
        log.info(
            "generation waits for admission",
            extra={"generation_id": record.id, "account_id": record.account_id, "reason": reason},
        )
        return waiting

    async def _line_ahead(self, provider: str, pools: list[ProviderPool]) -> bool:
        """Whether someone who could start now waits at ``provider`` (not only accounts at their own cap):
        then a newcomer joins the line rather than take a slot before them. Its lines are read only while its
        ``pools`` (read just before) say someone may wait; found empty, the mark is cleared (unless someone
        joined since the pools were read: a joiner marks them after its lane is pending, so whoever read
        them before that mark reads the lane after it)."""
        if not any(pool.lines_marked for pool in pools):
            return False
        pending = await self._waiting.pending_at(provider)
        if not pending:
            await self._pools.lines_empty(pools)
            return False
        lanes = [lane for lane in pending if lane.waiting > 0]
        if not lanes:
            return False
        held = await self.accounts.held_by(sorted({lane.account_id for lane in lanes}))
        return any(held[lane.account_id] < self.accounts.cap for lane in lanes)

    async def taken_from_line(self, lane: str, *, standby: str | None = None) -> None:
        """A generation ``next_waiting`` (or ``successor``: ``standby``, its id) chose was claimed: it left
        its lane (a successor still counted ahead of those in it, ``off_standby`` ending that)."""
        await self._waiting.left(lane, standby=standby)

    async def off_standby(self, record: GenerationRecord) -> None:
        """A successor taken from its lane is no longer kept ready (started, or back in line)."""
        rank = Priority(record.priority or Priority.NORMAL).rank
        await self._waiting.off_standby(lane_id(record.provider, record.account_id, rank), record.id)

    # -- choosing -------------------------------------------------------------------------------------------

    async def next_waiting(self, provider: str) -> Next | None:
        """The generation to start next at ``provider``, if one waits and a slot is free for it: the fairest
        account's first in line (``Next``), or None."""
        # Either "nobody waits" or "no room" ends the look after one read: ask first what was true the last
        # time at this provider (an idle provider's lanes are empty; a saturated one's pools are full).
        now = self._clock.now()
        pools: list[ProviderPool] | None = None
        if self._full.get(provider, False):
            pools = await self._room_at(provider, now)
            if not pools:
                return None
        lanes = await self._waiting.pending_at(provider)
        self._waited[provider] = any(lane.waiting > 0 for lane in lanes)
        if not lanes:
            return None
        if pools is None:
            pools = await self._room_at(provider, now)
            if not pools:
                return None
        return await self._fairest(lanes, pools)

    async def successor(self, provider: str) -> Next | None:
        """The generation to start at ``provider`` when a slot there frees, chosen while none is free: the
        one ``next_waiting`` would choose were one free — only while everything waiting there is one
        account's, so that no later turn could differ (None otherwise: each freed slot meets the line)."""
        lanes = await self._waiting.pending_at(provider)
        self._waited[provider] = any(lane.waiting > 0 for lane in lanes)
        if len({lane.account_id for lane in lanes if lane.waiting > 0}) != 1:
            return None
        return await self._fairest(lanes, await self._pools_of(provider))

    async def line_news(self, provider: str) -> tuple[int, bool]:
        """How many have joined a line at ``provider`` (ever: it changes when someone joins) and whether one
        of its pools has room now: one read."""
        now = self._clock.now()
        pools = await self._pools_of(provider)
        joins = sum(pool.joins or 0 for pool in pools)
        return joins, any(pool.effective is not None and pool.room(now) > 0 for pool in pools)

    async def still_first(self, record: GenerationRecord) -> bool:
        """Whether a generation on standby is still the one the fair turn would start next at its provider:
        nothing of another account waits there, nor anything of its own account's of a higher priority."""
        rank = Priority(record.priority or Priority.NORMAL).rank
        return all(
            lane.account_id == record.account_id and lane.rank >= rank
            for lane in await self._waiting.pending_at(record.provider)
            if lane.waiting > 0
        )

    async def _fairest(self, lanes: list[WaitingLane], pools: list[ProviderPool]) -> Next | None:
        """The first generation in the fairest account's lane (finished ones found there leave it)."""
        held = await self.accounts.held_by(sorted({lane.account_id for lane in lanes}))
        running: Counter[str] = Counter()
        for pool in pools:
            running.update(pool.running_by_account())
        for lane in _in_fair_turn(lanes, running, held, self.accounts.cap):
            while (found := await self._waiting.next_in(lane)) is not None:
                generation_id, status, key = found
                if status not in FINISHED:
                    return Next(generation_id, lane.id)
                await self._waiting.leave(generation_id, key)  # canceled while it waited
        return None

    async def _room_at(self, provider: str, now: datetime) -> list[ProviderPool]:
        """The provider's pools if one has room, else an empty list (and the provider is remembered full)."""
        pools = await self._pools_of(provider)
        full = not any(pool.room(now) > 0 for pool in pools)
        self._full[provider] = full
        return [] if full else pools

    async def providers_waiting_for(self, account_id: str) -> set[str]:
        """The providers where the account has generations waiting (its slot freed: they may start)."""
        return {lane.provider for lane in await self._waiting.pending_of(account_id)}

    # -- a successor on standby -----------------------------------------------------------------------------

    async def stand_by(self, record: GenerationRecord) -> bool:
        """A claimed generation taken from its line while its provider is full waits here, on standby, for a
        slot an ending task hands it: it takes its account's slot now; False if the account is at its cap
        (it waits in line again)."""
        return await self.accounts.acquire(record.account_id, record.id)

    async def hand_over(
        self, pool: ProviderPool, ended: GenerationRecord, successor: GenerationRecord
    ) -> bool:
        """``ended``'s task ended: its slot on ``pool`` goes straight to ``successor`` (on standby), if the
        pool still has room for it (one write). False: give the slot back as usual."""
        now = self._clock.now()
        if not await self._pools.hand_over(pool, ended.id, successor.id, successor.account_id, now):
            return False
        self._admitted_from_line(successor, now, True)
        return True

    async def room_for(self, record: GenerationRecord) -> Admitted | None:
        """A slot for a generation on standby, if one of its provider's pools has room now (freed by another
        instance, or by a task of this one that ended without handing it over); None: it stays on standby."""
        now = self._clock.now()
        pools = [pool for pool in await self._room_at(record.provider, now) if pool.effective is not None]
        for pool in sorted(pools, key=lambda p: p.room(now), reverse=True):
            if pool.room(now) > 0 and await self._pools.take(pool, record.id, record.account_id, now):
                self._admitted_from_line(record, now, True)
                return Admitted(pool)
        return None

    # -- after a run ----------------------------------------------------------------------------------------

    async def task_ended(self, record: GenerationRecord) -> bool:
        """The generation's task ended at the provider: its provider slot is given back now (its account slot
        stays until it is finished). True if it held one."""
        return await self._pools.release(record.provider, record.id)

    async def release(self, record: GenerationRecord, *, provider_slot: bool = True) -> bool:
        """Give back the finished generation's slots (its provider slot too unless ``provider_slot`` is False:
        it was given back when its task ended, or it held none); True if it held one of its account's while
        the account was at its cap (work of the account waiting somewhere may start now)."""
        if provider_slot:
            await self._pools.release(record.provider, record.id)
        return await self.accounts.give_back(record.account_id, record.id)

    async def refused(
        self,
        record: GenerationRecord,
        pool: ProviderPool | None,
        retry_after: float | None,
        *,
        wait: bool = True,
    ) -> datetime | None:
        """The provider refused the generation's submit for capacity (no task was made): the pool pauses and
        lowers its limit, the generation gives its slots back and waits at the front of its line again
        (unless ``wait`` is False: it moves on to another candidate). Returns when the pool takes work
        again."""
        now = self._clock.now()
        lowered = await self._pools.refused(pool.id, now, retry_after) if pool is not None else None
        if lowered is not None:
            log.warning(
                "provider refused a task for capacity; its limit is lowered",
                extra={
                    "generation_id": record.id,
                    "pool": lowered.id,
                    "effective_limit": lowered.effective,
                    "paused_until": lowered.paused_until.isoformat() if lowered.paused_until else None,
                },
            )
            if self._on_refused is not None:
                self._on_refused(lowered)
        await self.release(record)
        if wait:
            await self.wait(record, QueueReason.PROVIDER_CAPACITY, refused=True)
        return lowered.paused_until if lowered is not None else None

    async def accepted(self, pool: ProviderPool | None) -> None:
        """The provider accepted a task on ``pool``: a lowered limit may climb back."""
        if pool is not None:
            await self._pools.accepted(pool)

    # -- repairs (the reconciler) ---------------------------------------------------------------------------

    async def release_finished(self) -> set[str]:
        """Give back every slot held by a finished (or deleted) generation; returns the providers that got one
        back and those where an account that got one back has work waiting."""
        freed: set[str] = set()
        held = [(provider, gid) async for provider, gid in self._pools.all_holders()]
        alive = await self._generations.unfinished_among([gid for _, gid in held]) if held else set()
        for provider, generation_id in held:
            if generation_id not in alive and await self._pools.release(provider, generation_id):
                log.info("reclaimed the provider slot of a finished generation", extra={"pool": provider})
                freed.add(provider)
        for account_id in await self.accounts.release_finished():
            freed |= await self.providers_waiting_for(account_id)
        return freed

    async def past_deadline(self, limit: int = 100) -> list[str]:
        """Waiting generations whose client's deadline has passed."""
        return await self._waiting.past_deadline(self._clock.now(), limit)


def _pool_named(pools: list[ProviderPool], name: str | None) -> ProviderPool:
    """The pool a generation at its provider runs on: the one it saved, else the provider's first (a
    generation from before pools were kept)."""
    return next((pool for pool in pools if pool.id == name), pools[0])


def _in_fair_turn(
    lanes: list[WaitingLane], running: Counter[str], held: dict[str, int], account_cap: int
) -> list[WaitingLane]:
    """The lanes in the order their generations should be offered a slot: accounts with a free account slot,
    fewest running at the provider first, then the one waiting longest; each account's lanes by priority."""
    by_account: dict[str, list[WaitingLane]] = {}
    for lane in lanes:
        if held.get(lane.account_id, 0) < account_cap:
            by_account.setdefault(lane.account_id, []).append(lane)

    def turn(account_id: str) -> tuple[int, bool, datetime, str]:
        since = min((lane.since for lane in by_account[account_id] if lane.since is not None), default=None)
        return running[account_id], since is None, since or _NEVER, account_id

    ordered: list[WaitingLane] = []
    for account_id in sorted(by_account, key=turn):
        ordered.extend(sorted(by_account[account_id], key=lambda lane: lane.rank))
    return ordered


def with_pool(record: GenerationRecord, admitted: Admitted) -> GenerationRecord:
    """The record the actor runs: on the pool admission chose (saved with the actor's first write)."""
    if admitted.pool is None:
        return record
    return replace(record, provider_pool=admitted.pool.id)
