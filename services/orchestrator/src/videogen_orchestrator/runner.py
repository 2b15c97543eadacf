"""Owns this instance's in-flight generations: claims a lease in MongoDB, asks admission for the slots the
generation needs (its account's and one of its provider's), starts its actor, renews the leases of everything
it runs, and hands them back on shutdown.

A generation that cannot have its slots now waits, ``queued`` and unleased, in line at its provider
(``admission``). A generation whose route has other candidates is re-checked first (``Rerouting``): it may
move to a later candidate before anything is submitted, and after a capacity refusal or a ``Failover`` it
moves on as a new attempt, run by the same task here (never at two providers at once). Whenever a slot may
have freed — one of this instance's generations ended, one joined a line, a provider's pause ran out — the
instance starts what admission chooses next at that provider (``dispatch``, at most one pass per provider at
a time). The reconciler dispatches every provider on each pass too, so a wake-up lost to a crash is only
delayed.

While one account's work waits at a full provider, the instance keeps the next of it claimed, on standby
for the slot its own next task there frees (``successors``)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Coroutine
from datetime import UTC, datetime, timedelta
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import SpanKind

from videogen_common.clock import Clock
from videogen_common.generations import QueueReason
from videogen_common.records.generation import GenerationRecord
from videogen_common.repositories.generations import FINISHED, GenerationRepository
from videogen_common.repositories.leases import LeaseRepository
from videogen_common.store import Store
from videogen_common.tracing import annotate, span_in
from videogen_orchestrator.actor import GenerationActor
from videogen_orchestrator.admission import Admission, Admitted, with_pool
from videogen_orchestrator.health import Breakers
from videogen_orchestrator.intake import Intake
from videogen_orchestrator.outcomes import Failover, Finished, Lost, Refused, TaskEvent
from videogen_orchestrator.rerouting import Rerouting
from videogen_orchestrator.settings import OrchestratorSettings
from videogen_orchestrator.status_events import EventSink, publish_status
from videogen_orchestrator.successors import Successors

log = logging.getLogger(__name__)

# The expiry a handed-back lease is given: long past, so any instance may claim it, and the next reconciler
# pass anywhere resumes it, at once.
HANDED_BACK = datetime(1970, 1, 1, tzinfo=UTC)


class Runner:
    def __init__(
        self,
        settings: OrchestratorSettings,
        store: Store,
        actor: GenerationActor,
        admission: Admission,
        rerouting: Rerouting,
        *,
        health: Breakers,
        clock: Clock,
        sink: EventSink | None = None,
    ) -> None:
        """``settings``: how long a lease lasts, and how many generations this instance runs at once."""
        self._generations = GenerationRepository(store)
        self._leases = LeaseRepository(store)
        self._clock = clock
        self._sink = sink
        self._lease = timedelta(seconds=settings.lease_seconds)
        # Its peers: the actor it runs generations with, and what it asks where they go.
        self._actor = actor
        self._admission = admission
        self._rerouting = rerouting
        self._health = health
        # Claims, renewals and hand-backs are made as the owner the actor writes under: one identity.
        self._owner = actor.owner
        self._slots = asyncio.Semaphore(settings.max_in_flight)
        self._tasks: dict[str, asyncio.Task[Any]] = {}
        # What admission gave each generation running here.
        self._admitted: dict[str, Admitted] = {}
        # Generations running here whose provider slot was given back when their task ended.
        self._provider_slot_freed: set[str] = set()
        self._background: set[asyncio.Task[Any]] = set()
        self._dispatching: dict[str, asyncio.Task[int]] = {}
        self._dispatch_again: set[str] = set()
        self._claiming: set[str] = set()
        self._no_claims = asyncio.Event()
        self._no_claims.set()
        self._stopping = False
        # Low-priority requests, started in the background in turn by account (``intake``).
        self.intake = Intake(self.start, lambda: self._stopping)
        # The next generation to start at each full provider, claimed ahead of the slot a task here frees.
        self.successors = Successors(
            self,
            admission=admission,
            leases=self._leases,
            clock=clock,
            owner=self._owner,
            lease=self._lease,
            slots=self._slots,
            enabled=settings.admission_standby,
        )

    @property
    def in_flight(self) -> int:
        return len(self._tasks)

    @property
    def stopping(self) -> bool:
        return self._stopping

    def owns(self, generation_id: str) -> bool:
        return generation_id in self._tasks

    async def start(
        self,
        generation_id: str,
        *,
        wait_for_slot: bool = True,
        waiting: bool = False,
        lane: str | None = None,
    ) -> bool:
        """Claim the generation and start its actor. Returns False if it is finished, already leased by a live
        owner, this instance is stopping or (with ``wait_for_slot=False``) full, or it cannot have its slots
        now, in which case it now waits in line. A generation waiting in line is claimed only with
        ``waiting`` (``lane``: the line admission chose it from). A duplicate request is harmless."""
        if self._stopping or generation_id in self._tasks or generation_id in self._claiming:
            return False
        if not wait_for_slot and self._slots.locked():
            return False
        # Reserved before the first await, so overlapping starts (agent and reconciler) claim it once.
        self._claiming.add(generation_id)
        self._no_claims.clear()
        started = False
        try:
            await self._slots.acquire()
            try:
                admitted = await self._admit(generation_id, waiting=waiting, lane=lane)
                if admitted is not None:
                    self.launch(*admitted)
                    started = True
            finally:
                if not started:
                    self._slots.release()
            return started
        finally:
            self._claiming.discard(generation_id)
            if not self._claiming:
                self._no_claims.set()

    def launch(self, record: GenerationRecord, decision: Admitted) -> None:
        """Start the actor of a generation that holds its slots (and one of this instance's)."""
        self._admitted[record.id] = decision
        self._tasks[record.id] = asyncio.create_task(self._run(record, decision), name=f"actor:{record.id}")

    async def _admit(
        self, generation_id: str, *, waiting: bool, lane: str | None
    ) -> tuple[GenerationRecord, Admitted] | None:
        """The lease, then the slots. Without them the generation waits in line, unleased, as queued."""
        if self._stopping:  # stop began while this start waited for a slot on this instance
            return None
        now = self._clock.now()
        record = await self._leases.claim_lease(
            generation_id,
            self._owner,
            now,
            now + self._lease,
            secrets.token_hex(8),
            waiting=waiting,
            admitted=lane is not None,
        )
        if record is None or self._stopping:
            return None  # a claim that raced stop is handed back by stop
        if lane is not None:
            await self._admission.taken_from_line(lane)
        return await self.place(record, from_line=lane is not None)

    async def place(
        self, record: GenerationRecord, *, from_line: bool
    ) -> tuple[GenerationRecord, Admitted] | None:
        """A claimed generation's provider (its route re-checked: it may move to a later candidate before it
        is submitted), then its slots there; without them it waits in that provider's line."""
        placement = await self._rerouting.recheck(record)
        if placement is None:
            return None  # canceled meanwhile
        moved = placement.record
        from_line = from_line and moved.provider == record.provider
        decision = await self._admission.admit(moved, from_line=from_line, usable=placement.usable)
        if isinstance(decision, Admitted):
            return with_pool(moved, decision), decision
        await self.wait_in_line(moved, decision.reason)
        if placement.probe is not None:  # another may probe while this one waits
            await self._health.release_probe(placement.probe, moved.id)
        if not from_line:
            # A slot may have freed between the failed take and the wait, and its releaser found nobody
            # waiting: look again now that this one is in line.
            self.wake(moved.provider)
        if decision.reason == QueueReason.PROVIDER_CAPACITY:
            self.successors.arrived(moved)
        return None

    async def wait_in_line(self, record: GenerationRecord, reason: str, *, refused: bool = False) -> None:
        waiting = await self._admission.wait(record, reason, refused=refused)
        if waiting is not None and waiting.version != record.version and self._sink is not None:
            await publish_status(self._sink, waiting, self._clock.now())  # processing → queued

    async def _run(self, record: GenerationRecord, admitted: Admitted) -> None:
        generation_id = record.id
        try:
            # Whether this actor wrote the generation's terminal state.
            finished_here = False
            try:
                while True:
                    # In the trace of the request that created it (a resumed generation too).
                    span = span_in(
                        "generation.run",
                        record.traceparent,
                        kind=SpanKind.CONSUMER,
                        generation_id=generation_id,
                        account_id=record.account_id,
                        provider=record.provider,
                    )
                    with trace.use_span(span, end_on_exit=True):
                        result = await self._actor.run(record, on_task=self._task_news)
                        finished_here = isinstance(result, Finished)
                        annotate(
                            status=result.record.status.value if isinstance(result, Finished) else "moved"
                        )
                    if isinstance(result, Finished | Lost):
                        break
                    # Refused for capacity, or failed where it may move on: a new attempt, maybe elsewhere.
                    placed = await self._move_on(result, admitted)
                    if placed is None:
                        return
                    record, admitted = placed
                    self._admitted[generation_id] = admitted
            except asyncio.CancelledError:
                raise
            except Exception:
                # The lease will expire and the reconciler retries it; nothing is lost.
                log.exception("actor crashed", extra={"generation_id": generation_id})
            try:
                # Lost: moved by someone else (canceled: give the slots back; taken over: it keeps them).
                if finished_here or await self._finished(generation_id):
                    await self._released(record)
            except Exception:
                log.exception("slots not given back", extra={"generation_id": generation_id})
        finally:
            self._tasks.pop(generation_id, None)
            self._admitted.pop(generation_id, None)
            self._provider_slot_freed.discard(generation_id)
            self._slots.release()

    async def _move_on(
        self, result: Refused | Failover, admitted: Admitted
    ) -> tuple[GenerationRecord, Admitted] | None:
        """After a capacity refusal: wait in line again, unless a later candidate of its route has room (then
        move there). After a ``Failover``: move to the next candidate. Either way a new attempt, placed
        like a new generation; None if it waits (or was canceled meanwhile)."""
        record, rerouting = result.record, self._rerouting
        await self._health.release_probe(record.provider_pool, record.id)
        if isinstance(result, Refused):
            elsewhere = await rerouting.room_elsewhere(record)
            resume_at = await self._admission.refused(
                record, admitted.pool, result.retry_after, wait=elsewhere is None
            )
            self.wake(record.provider, at=resume_at)
            if elsewhere is None:
                return None
            reason = f"moved to {elsewhere}: {record.provider} refused it for capacity"
            moved = await rerouting.move(
                record, elsewhere, reason=reason, why="refused", attempt=result.attempt
            )
        else:
            await self._admission.release(record, provider_slot=self._holds_provider_slot(record.id))
            if self._limited(record.id):
                self.wake(record.provider)
            moved = await rerouting.fall_back(record, result.error, result.attempt)
        if moved is None:
            return None
        # A new attempt: the slot it takes at its next provider is given back when that one's task ends.
        self._provider_slot_freed.discard(record.id)
        if self._sink is not None:
            await publish_status(self._sink, moved, self._clock.now())  # it shows where it goes now
        return await self.place(moved, from_line=False)

    async def _released(self, record: GenerationRecord) -> None:
        """Give back a finished generation's slots, and start what waits for them: at its provider, if its
        slot there was one of a limited pool; wherever its account has work waiting, if the account was at
        its cap (below it, nothing of the account waits for its slot)."""
        account_was_full = await self._admission.release(
            record, provider_slot=self._holds_provider_slot(record.id)
        )
        woken: set[str] = set()
        if self._limited(record.id):
            self.wake(record.provider)
            woken.add(record.provider)
        if account_was_full:
            for provider in await self._admission.providers_waiting_for(record.account_id):
                if provider not in woken:
                    self.wake(provider)

    def _limited(self, generation_id: str) -> bool:
        """Whether the generation runs on a pool with a limit (as admission read it; unknown counts as
        limited): only then does it hold a provider slot, and may that slot be what another generation
        waits for (on a pool without a limit, its account's slot names the pool instead)."""
        admitted = self._admitted.get(generation_id)
        return admitted is None or admitted.pool is None or admitted.pool.effective is not None

    def _holds_provider_slot(self, generation_id: str) -> bool:
        """Whether the generation still holds a slot of its provider's: it was admitted to a limited pool,
        and its task has not ended there (its slot was given back then)."""
        return self._limited(generation_id) and generation_id not in self._provider_slot_freed

    async def _task_news(self, record: GenerationRecord, event: TaskEvent) -> None:
        """The generation is about to be submitted (where work waits, a successor is chosen for the slot it
        will free), the provider accepted its task (the pool it was admitted to may climb back), or the task
        ended there: its provider slot is free now, before the media is copied, and goes to the successor on
        standby, or back to the pool for the next to start — where the pool has a limit; an unlimited one has
        no slot of its own to give back."""
        if event is TaskEvent.SUBMITTING:
            # The provider fills up: the next slot this instance frees there gets a successor, chosen now
            # (after the submit's own writes, not beside them).
            if self._limited(record.id) and self._admission.contended(record.provider):
                self.successors.choose(record.provider)
        elif event is TaskEvent.ACCEPTED:
            admitted = self._admitted.get(record.id)
            if admitted is not None:
                await self._admission.accepted(admitted.pool)
        elif not self._limited(record.id):
            return
        elif await self.successors.handed_over(record, self._admitted.get(record.id)):
            self._provider_slot_freed.add(record.id)
        elif await self._admission.task_ended(record):
            self._provider_slot_freed.add(record.id)
            self.wake(record.provider)

    async def _finished(self, generation_id: str) -> bool:
        status = await self._generations.status_of(generation_id)
        return status is None or status in FINISHED

    # -- what the successors ask (``successors.Host``) -------------------------------------------------------

    async def back_in_line(self, record: GenerationRecord) -> None:
        await self._admission.accounts.release(record.account_id, record.id)
        await self.wait_in_line(record, QueueReason.PROVIDER_CAPACITY)

    def spawn(self, work: Coroutine[Any, Any, None], name: str) -> None:
        """Run ``work`` in the background (stop cancels it; ``wait_idle`` awaits it)."""
        task = asyncio.create_task(work, name=name)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def holding_at(self, provider: str) -> bool:
        """Whether a generation running here holds a slot at ``provider`` (its task has not ended)."""
        return any(
            admitted.pool is not None
            and admitted.pool.provider == provider
            and self._holds_provider_slot(gid)
            for gid, admitted in self._admitted.items()
        )

    # -- starting what waits --------------------------------------------------------------------------------

    def wake(self, provider: str, *, at: datetime | None = None) -> None:
        """Start what waits at ``provider`` (at ``at``, if given) on this instance, in the background."""
        if self._stopping:
            return
        delay = max(0.0, (at - self._clock.now()).total_seconds()) if at is not None else 0.0
        self.spawn(self._wake_after(provider, delay), f"wake:{provider}")

    async def _wake_after(self, provider: str, delay: float) -> None:
        if delay > 0:
            await self._clock.sleep(delay)
        await self.dispatch(provider)

    async def dispatch(self, provider: str, *, wait_for_slot: bool = True) -> int:
        """Start the generations admission chooses at ``provider`` while it has room for them; returns how
        many this instance started. One pass per provider at a time: a call while one runs makes it look
        once more instead."""
        running = self._dispatching.get(provider)
        if running is not None:
            self._dispatch_again.add(provider)
            return 0
        task = asyncio.ensure_future(self._dispatch(provider, wait_for_slot=wait_for_slot))
        self._dispatching[provider] = task
        try:
            return await task
        finally:
            self._dispatching.pop(provider, None)

    async def _dispatch(self, provider: str, *, wait_for_slot: bool) -> int:
        started = 0
        try:
            while not self._stopping:
                self._dispatch_again.discard(provider)
                if await self.successors.offer(provider):
                    started += 1
                    continue
                if self.successors.blocks(provider):
                    break  # no room for it (or it is being handed one): none for what waits behind it
                chosen = await self._admission.next_waiting(provider)
                if chosen is None:
                    if provider in self._dispatch_again:
                        continue
                    break
                with self.intake.first():
                    ok = await self.start(
                        chosen.generation_id, wait_for_slot=wait_for_slot, waiting=True, lane=chosen.lane
                    )
                if not ok:
                    # Full again, or another instance is starting it (and goes on from there).
                    if provider in self._dispatch_again:
                        continue
                    break
                started += 1
        except Exception:
            log.exception("starting waiting generations failed", extra={"provider": provider})
        return started

    async def renew_leases(self) -> None:
        held = [*self._tasks, *self.successors.leased()]
        if not held:
            return
        await self._leases.renew_leases(held, self._owner, self._clock.now() + self._lease)

    async def wait_idle(self) -> None:
        """Wait until no actor runs and nothing waiting is being started (what tests await)."""
        while self._tasks or self._background or self._dispatching:
            await asyncio.gather(
                *self._tasks.values(),
                *self._background,
                *self._dispatching.values(),
                return_exceptions=True,
            )

    async def stop(self) -> None:
        """Stop taking work, cancel the actors and hand their leases back so another instance resumes them
        at once (the provider task id is saved, so nothing is submitted twice; slots stay with their
        generations)."""
        self._stopping = True
        await self.intake.stop()
        watches = self.successors.watches()
        pending = [*self._background, *self._dispatching.values(), *self._tasks.values(), *watches]
        for task in pending:
            task.cancel()
        with contextlib.suppress(Exception):
            await asyncio.gather(*pending, return_exceptions=True)
        # A start already past its first check finishes its claim (or gives up) before the hand-back.
        await self._no_claims.wait()
        await self.successors.let_go()
        released = await self._leases.hand_back_leases(self._owner, HANDED_BACK)
        if released:
            log.info("released leases", extra={"count": released})
        await self._health.close()  # the providers' recent successes gathered here
