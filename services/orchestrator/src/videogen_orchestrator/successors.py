"""A successor on standby: the next generation to start at a full provider, claimed by an instance ahead of
the slot one of its own tasks there will free, so that a freed slot is refilled in one write.

Refilling a slot from the line is ten store commands in order (choose, claim, leave the lane, take the
slot...), during which the provider's slot stands empty. So while one account's work waits at a full
provider, an instance running tasks there claims the generation admission would start next
(``Admission.successor``) when one of its tasks there is submitted, and keeps it on standby (one per
provider): leased, out of its lane, holding its account's slot and one of this instance's. When one of its
tasks there ends, the ended task's slot goes to the successor (``Admission.hand_over``, one write) and its
actor starts at once.

It never changes whose turn it is. It is kept only while everything waiting there is of its account and of no
higher priority (``Admission.still_first``): work the fair turn would start first joining the line sends it
back to its place at once where it arrives (``arrived``), and within ``RECHECK_SECONDS`` when it arrives at
another instance. The same recheck offers it a slot another instance freed (which that instance cannot hand
it, and with nobody in line would leave empty). It goes back too when no task of its instance holds a slot
there any more, and on a graceful stop; an instance that dies leaves its lease to run out, and the
generation, resumed like any other, gives back the account slot it may hold before it joins the line."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Coroutine
from dataclasses import replace
from datetime import timedelta
from typing import Any, Protocol

from videogen_common.clock import Clock
from videogen_common.domain import Priority
from videogen_common.generations import QueueReason
from videogen_common.records.generation import GenerationRecord
from videogen_common.repositories.leases import LeaseRepository
from videogen_orchestrator.admission import Admission, Admitted, with_pool
from videogen_orchestrator.rerouting import routed

log = logging.getLogger(__name__)

# How often a successor on standby looks for a slot another instance freed and for someone joining the line
# behind it (one read of the provider's pools; the lines are read only when someone joined).
RECHECK_SECONDS = 1.0
# The longest an ended task's slot waits for a successor being chosen (the rest of its choosing: a few store
# commands) before it goes back to the pool for a start from the line (ten).
CHOOSING_WAIT_SECONDS = 0.05


class Host(Protocol):
    """What the successors ask of the runner whose instance they belong to."""

    @property
    def stopping(self) -> bool: ...

    def holding_at(self, provider: str) -> bool:
        """Whether a task of this instance's holds a slot at ``provider``."""
        ...

    def launch(self, record: GenerationRecord, decision: Admitted) -> None:
        """Start the actor of a generation that holds its slots (and this instance's slot taken for it)."""
        ...

    async def place(
        self, record: GenerationRecord, *, from_line: bool
    ) -> tuple[GenerationRecord, Admitted] | None: ...

    async def wait_in_line(self, record: GenerationRecord, reason: str) -> None: ...

    async def back_in_line(self, record: GenerationRecord) -> None:
        """Put a successor back at its place in line (its account slot given back)."""
        ...

    def wake(self, provider: str) -> None: ...

    def spawn(self, work: Coroutine[Any, Any, None], name: str) -> None:
        """Run ``work`` in the background, awaited by the runner's stop."""
        ...


class Successors:
    def __init__(
        self,
        host: Host,
        *,
        admission: Admission,
        leases: LeaseRepository,
        clock: Clock,
        owner: str,
        lease: timedelta,
        slots: asyncio.Semaphore,
        enabled: bool,
    ) -> None:
        """``slots``: this instance's room for generations (a successor holds one); ``enabled``: the
        deployment's ``VIDEOGEN_ADMISSION_STANDBY``."""
        self._host = host
        self._admission = admission
        self._leases = leases
        self._clock = clock
        self._owner = owner
        self._lease = lease
        self._slots = slots
        self._enabled = enabled
        # Per provider: the successor on standby; those whose successor is in use (a hand-over, a slot
        # offered), being chosen, or not to be chosen until a task here ends (the line changed under it).
        self._standby: dict[str, GenerationRecord] = {}
        self._using: set[str] = set()
        self._choosing: dict[str, asyncio.Event] = {}
        self._paused: set[str] = set()
        self._watches: dict[str, asyncio.Task[None]] = {}

    @property
    def on_standby(self) -> dict[str, str]:
        """The generation on standby for each provider."""
        return {provider: record.id for provider, record in self._standby.items()}

    def leased(self) -> list[str]:
        """The successors' ids: their leases are renewed with the running generations'."""
        return [record.id for record in self._standby.values()]

    def blocks(self, provider: str) -> bool:
        """Whether a successor waits at ``provider`` (then nothing behind it may start before it)."""
        return provider in self._standby or provider in self._using

    # -- choosing one ---------------------------------------------------------------------------------------

    def choose(self, provider: str) -> None:
        """Claim, in the background, a successor for the next slot this instance frees at ``provider``, unless
        one is there already (or being chosen), none is to be chosen now, or this instance is full."""
        busy = any(provider in held for held in (self._standby, self._using, self._choosing, self._paused))
        if not self._enabled or self._host.stopping or busy or self._slots.locked():
            return
        if not self._host.holding_at(provider):
            return  # no slot of this instance's there to hand on
        self._choosing[provider] = asyncio.Event()
        self._host.spawn(self._stand_by(provider), f"standby:{provider}")

    async def _stand_by(self, provider: str) -> None:
        kept = False  # whether the one chosen holds this instance's slot taken for it (on standby or started)
        try:
            if self._host.stopping or self._slots.locked():
                return
            await self._slots.acquire()
            try:
                kept = await self._claim(provider)
            finally:
                if not kept:
                    self._slots.release()
        finally:
            self._choosing.pop(provider).set()
        if provider in self._standby:
            self._host.wake(provider)  # a slot may have freed while it was chosen: it is offered one first
            watch = self._watches.get(provider)
            if watch is None or watch.done():
                self._watches[provider] = asyncio.create_task(
                    self._watch(provider), name=f"standby-watch:{provider}"
                )

    async def _claim(self, provider: str) -> bool:
        """The successor chosen, claimed and on standby (True: it holds this instance's slot), started at once
        (True), or none, or back in line (False)."""
        chosen = await self._admission.successor(provider)
        if chosen is None:
            return False
        now = self._clock.now()
        record = await self._leases.claim_lease(
            chosen.generation_id,
            self._owner,
            now,
            now + self._lease,
            secrets.token_hex(8),
            waiting=True,
            admitted=True,
        )
        if record is None:
            return False
        await self._admission.taken_from_line(chosen.lane, standby=record.id)
        if self._host.stopping:
            return False  # stop hands its lease back
        if routed(record):
            # Its route may move it on before it is submitted: it is placed as any generation chosen from
            # its line (without room, back to its place; none chosen again until a task here ends).
            self._paused.add(provider)
            await self._admission.off_standby(record)
            placed = await self._host.place(record, from_line=True)
            if placed is None:
                return False
            self._host.launch(*placed)
            return True
        if not await self._admission.stand_by(record):
            await self._admission.off_standby(record)
            await self._host.wait_in_line(record, QueueReason.ACCOUNT_CONCURRENCY)
            return False
        self._standby[provider] = record
        return True

    # -- using one ------------------------------------------------------------------------------------------

    async def handed_over(self, ended: GenerationRecord, admitted: Admitted | None) -> bool:
        """``ended``'s task ended (it ran on ``admitted``'s pool): its slot goes to the successor on standby
        at its provider, whose actor starts now. False if none is on standby, or the pool has no room for it
        now: the slot is to be given back as usual."""
        provider = ended.provider
        self._paused.discard(provider)
        if (choosing := self._choosing.get(provider)) is not None:
            # One is being chosen: it is nearer than a start from the line (a few commands from being ready).
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(CHOOSING_WAIT_SECONDS):
                    await choosing.wait()
        pool = admitted.pool if admitted is not None else None
        if admitted is None or pool is None or (successor := self._taken(provider)) is None:
            return False
        handed = False
        try:
            handed = await self._admission.hand_over(pool, ended, successor)
        finally:
            self._untaken(provider, successor, started=handed)
        if handed:
            self._host.launch(
                replace(successor, provider_pool=pool.id, admitted_at=self._clock.now()), admitted
            )
            self._off_standby_soon(successor)
        return handed

    async def offer(self, provider: str) -> bool:
        """Offer the successor on standby at ``provider`` a slot freed there by other means; True if it
        started. One this instance will not free (none of its tasks holds a slot there) goes back in line."""
        if (successor := self._taken(provider)) is None:
            return False
        admitted: Admitted | None = None
        try:
            admitted = await self._admission.room_for(successor)
        finally:
            self._untaken(provider, successor, started=admitted is not None)
        if admitted is None:
            if not self._host.holding_at(provider):
                await self._send_back(provider)
            return False
        self._host.launch(replace(with_pool(successor, admitted), admitted_at=self._clock.now()), admitted)
        self._off_standby_soon(successor)
        return True

    def _off_standby_soon(self, successor: GenerationRecord) -> None:
        """Its lane stops counting it ahead (after its start, not before it: that waits for nothing)."""
        self._host.spawn(self._admission.off_standby(successor), f"off-standby:{successor.id}")

    def arrived(self, record: GenerationRecord) -> None:
        """``record`` joined the line at its provider here: if the fair turn would start it before the
        successor on standby there, that one goes back to its place; then a successor is chosen if none is."""
        standby = self._standby.get(record.provider)
        if standby is not None and not _behind(record, standby):
            self._host.spawn(self._send_back(record.provider), f"standby-back:{record.provider}")
        self.choose(record.provider)

    async def _watch(self, provider: str) -> None:
        """While a successor is on standby at ``provider``, every ``RECHECK_SECONDS``: back in line if work it
        should not go before has joined the line since (it may have come to another instance), and any slot
        freed there offered to it."""
        seen: int | None = None  # the provider's joins when the line was last found fine
        while not self._host.stopping and self.blocks(provider):
            await self._clock.sleep(RECHECK_SECONDS)
            successor = self._standby.get(provider)
            if successor is None:
                continue
            try:
                joins, room = await self._admission.line_news(provider)
                if joins != seen:
                    if not await self._admission.still_first(successor):
                        await self._send_back(provider)
                        continue
                    seen = joins
            except Exception:
                log.exception("could not look at the line behind a successor", extra={"provider": provider})
                continue
            if room:
                self._host.wake(provider)

    async def _send_back(self, provider: str) -> None:
        """The successor on standby at ``provider`` goes back to its place in line, giving back its account
        slot and this instance's; none is chosen again there until a task here ends."""
        if (successor := self._taken(provider)) is None:
            return
        try:
            await self._admission.off_standby(successor)
            await self._host.back_in_line(successor)
        except Exception:
            log.exception("a successor could not go back in line", extra={"generation_id": successor.id})
        finally:
            self._untaken(provider, successor, started=True)
            self._slots.release()
        self._paused.add(provider)
        self._host.wake(provider)  # a slot freed meanwhile was kept for it: it meets the line now

    def _taken(self, provider: str) -> GenerationRecord | None:
        """The successor on standby at ``provider``, taken out for one use; ``_untaken`` ends that use.
        Meanwhile no other use and no new choice."""
        if provider in self._using:
            return None
        successor = self._standby.pop(provider, None)
        if successor is not None:
            self._using.add(provider)
        return successor

    def _untaken(self, provider: str, successor: GenerationRecord, *, started: bool) -> None:
        """The use ``_taken`` began ended: the successor left standby (``started``), or stays on it."""
        self._using.discard(provider)
        if not started:
            self._standby[provider] = successor

    # -- stopping -------------------------------------------------------------------------------------------

    def watches(self) -> list[asyncio.Task[None]]:
        return list(self._watches.values())

    async def let_go(self) -> None:
        """On a graceful stop (its tasks cancelled): each successor's account slot given back; their leases
        go back with the instance's, and whoever resumes them puts them back at their places."""
        for record in self._standby.values():
            try:
                await self._admission.accounts.release(record.account_id, record.id)
                await self._admission.off_standby(record)
            except Exception:
                log.exception(
                    "a successor's account slot was not given back", extra={"generation_id": record.id}
                )
        self._standby.clear()


def _behind(newcomer: GenerationRecord, successor: GenerationRecord) -> bool:
    """Whether a generation joining the line would be started after ``successor`` by the fair turn anyway: it
    is of the same account, and of no higher priority."""
    if newcomer.account_id != successor.account_id:
        return False
    return _rank(newcomer) >= _rank(successor)


def _rank(record: GenerationRecord) -> int:
    return Priority(record.priority or Priority.NORMAL).rank
