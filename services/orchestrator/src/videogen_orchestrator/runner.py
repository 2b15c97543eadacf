"""Owns this instance's in-flight generations: claims a lease in MongoDB before starting an actor, holds the
generation's account slot while it is at its provider, renews the leases of everything it runs, and hands them
back on shutdown.

A generation whose account is at its cap waits as ``queued`` with no lease, in its account's queue (see
``slots``); when one of the account's generations ends, the instance that ran it starts the account's oldest
waiting one, and the reconciler does the same on every pass for any account with a free slot, so a wake-up
lost to a crash is only delayed."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from datetime import UTC, datetime, timedelta
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import SpanKind

from videogen_common.clock import Clock
from videogen_common.records.generation import GenerationRecord
from videogen_common.repositories.generations import FINISHED, GenerationRepository
from videogen_common.store import Store
from videogen_common.tracing import annotate, span_in
from videogen_orchestrator.actor import GenerationActor
from videogen_orchestrator.outcomes import Finished
from videogen_orchestrator.slots import AccountSlots

log = logging.getLogger(__name__)

# The expiry a handed-back lease is given: long past, so any instance may claim it, and the next reconciler
# pass anywhere resumes it, at once.
HANDED_BACK = datetime(1970, 1, 1, tzinfo=UTC)


class Runner:
    def __init__(
        self,
        *,
        store: Store,
        actor: GenerationActor,
        clock: Clock,
        lease: timedelta,
        max_in_flight: int,
        account_max_in_flight: int,
    ) -> None:
        self._generations = GenerationRepository(store)
        self._actor = actor
        self._clock = clock
        # Claims, renewals and hand-backs are made as the owner the actor writes under: one identity.
        self._owner = actor.owner
        self._lease = lease
        self._slots = asyncio.Semaphore(max_in_flight)
        self.accounts = AccountSlots(store, cap=account_max_in_flight)
        self._tasks: dict[str, asyncio.Task[Any]] = {}
        self._wakers: set[asyncio.Task[Any]] = set()
        self._claiming: set[str] = set()
        self._no_claims = asyncio.Event()
        self._no_claims.set()
        self._stopping = False

    @property
    def in_flight(self) -> int:
        return len(self._tasks)

    @property
    def stopping(self) -> bool:
        return self._stopping

    def owns(self, generation_id: str) -> bool:
        return generation_id in self._tasks

    async def start(
        self, generation_id: str, *, wait_for_slot: bool = True, from_queue: bool = False
    ) -> bool:
        """Claim the generation and start its actor. Returns False if it is finished, already leased by a live
        owner, this instance is stopping or (with ``wait_for_slot=False``) full, or its account is at its cap,
        in which case it now waits as ``queued``. A duplicate request is harmless."""
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
                record = await self._admit(generation_id, from_queue=from_queue)
                if record is not None:
                    self._tasks[generation_id] = asyncio.create_task(
                        self._run(record), name=f"actor:{generation_id}"
                    )
                    started = True
            finally:
                if not started:
                    self._slots.release()
            return started
        finally:
            self._claiming.discard(generation_id)
            if not self._claiming:
                self._no_claims.set()

    async def _admit(self, generation_id: str, *, from_queue: bool) -> GenerationRecord | None:
        """The lease, then the account slot. Without a slot the generation is parked, unleased, as queued."""
        if self._stopping:  # stop began while this start waited for a slot on this instance
            return None
        record = await self._claim(generation_id)
        if record is None or self._stopping:
            return None  # a claim that raced stop is handed back by stop
        account_id = record.account_id
        if record.provider_task_id is not None:
            # Already at its provider: it holds a slot whatever the count now is.
            await self.accounts.keep(account_id, generation_id)
            return record
        if await self.accounts.acquire(account_id, generation_id):
            return record
        await self._park(record)
        if not from_queue:
            # A slot may have freed between the failed acquire and the park, and its releaser found nothing
            # waiting: look again now that this one is visible as waiting.
            self._spawn_wake(account_id)
        return None

    async def _claim(self, generation_id: str) -> GenerationRecord | None:
        """Take the lease if it is free or expired, under a unique token. A generation waiting for an account
        slot leaves the queue while leased: if it still gets no slot, it is parked again."""
        now = self._clock.now()
        return await self._generations.claim_lease(
            generation_id, self._owner, now, now + self._lease, secrets.token_hex(8)
        )

    async def _park(self, record: GenerationRecord) -> None:
        """The account is at its cap: the generation waits as ``queued``, with no lease, for a slot."""
        await self._generations.wait_for_slot(record, now=self._clock.now())
        log.info(
            "account at its cap; generation waits",
            extra={"generation_id": record.id, "account_id": record.account_id, "cap": self.accounts.cap},
        )

    async def _run(self, record: GenerationRecord) -> None:
        generation_id, account_id = record.id, record.account_id
        try:
            # Whether this actor wrote the generation's terminal state.
            finished_here = False
            try:
                # In the trace of the request that created it (a resumed generation too).
                span = span_in(
                    "generation.run",
                    record.traceparent,
                    kind=SpanKind.CONSUMER,
                    generation_id=generation_id,
                    account_id=account_id,
                    provider=record.provider,
                )
                with trace.use_span(span, end_on_exit=True):
                    result = await self._actor.run(record)
                    finished_here = isinstance(result, Finished)
                    annotate(status=result.record.status.value if isinstance(result, Finished) else "moved")
            except asyncio.CancelledError:
                raise
            except Exception:
                # The lease will expire and the reconciler retries it; nothing is lost.
                log.exception("actor crashed", extra={"generation_id": generation_id})
            try:
                # Lost: moved by someone else (canceled: give the slot back; taken over: it keeps it).
                if (finished_here or await self._finished(generation_id)) and await self.accounts.release(
                    account_id, generation_id
                ):
                    self._spawn_wake(account_id)
            except Exception:
                log.exception("slot not given back", extra={"generation_id": generation_id})
        finally:
            self._tasks.pop(generation_id, None)
            self._slots.release()

    async def _finished(self, generation_id: str) -> bool:
        status = await self._generations.status_of(generation_id)
        return status is None or status in FINISHED

    def _spawn_wake(self, account_id: str) -> None:
        if self._stopping:
            return
        task = asyncio.create_task(self.wake(account_id), name=f"wake:{account_id}")
        self._wakers.add(task)
        task.add_done_callback(self._wakers.discard)

    async def wake(self, account_id: str, *, wait_for_slot: bool = True) -> int:
        """Start the account's generations waiting for a slot, oldest first, while it has slots free. Returns
        how many this instance started."""
        started = 0
        try:
            while not self._stopping:
                oldest = await self.accounts.oldest_waiting(account_id)
                if oldest is None:
                    break
                oldest_id, oldest_status = oldest
                if oldest_status in FINISHED:  # canceled while it waited
                    await self.accounts.leave_queue(oldest_id)
                    continue
                if await self.accounts.free(account_id) <= 0:
                    break
                if not await self.start(oldest_id, wait_for_slot=wait_for_slot, from_queue=True):
                    break  # full again, or another instance is starting it (and goes on from there)
                started += 1
        except Exception:
            log.exception("starting waiting generations failed", extra={"account_id": account_id})
        return started

    async def renew_leases(self) -> None:
        if not self._tasks:
            return
        await self._generations.renew_leases(list(self._tasks), self._owner, self._clock.now() + self._lease)

    async def wait_idle(self) -> None:
        """Wait until no actor runs and no waiting generation is being started (what tests await)."""
        while self._tasks or self._wakers:
            await asyncio.gather(*self._tasks.values(), *self._wakers, return_exceptions=True)

    async def stop(self) -> None:
        """Stop taking work, cancel the actors and hand their leases back so another instance resumes them
        at once (the provider task id is saved, so nothing is submitted twice; account slots stay with their
        generations)."""
        self._stopping = True
        pending = [*self._wakers, *self._tasks.values()]
        for task in pending:
            task.cancel()
        with contextlib.suppress(Exception):
            await asyncio.gather(*pending, return_exceptions=True)
        # A start already past its first check finishes its claim (or gives up) before the hand-back.
        await self._no_claims.wait()
        released = await self._generations.hand_back_leases(self._owner, HANDED_BACK)
        if released:
            log.info("released leases", extra={"count": released})
