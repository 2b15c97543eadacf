"""Repairs what a crash or a lost message left behind. MongoDB is the source of truth; Kafka is the fast path.

- A generation whose lease expired (its owner died, or a stopping instance handed it back) or that nobody ever
  leased (its request message was lost) is claimed and driven on.
- An account slot still held by a finished generation (its instance died before giving it back) is reclaimed,
  and an account with a free slot and generations waiting for one gets them started, oldest first.
- An event the notifier has not taken in within the grace (any owed event, in any document's outbox: see
  videogen_common.outbox) is put on the events topic again (and waits another grace before the next)."""

from __future__ import annotations

import logging
from datetime import timedelta

from videogen_common.clock import Clock
from videogen_common.outbox import publish
from videogen_common.repositories.generations import GenerationRepository
from videogen_common.repositories.outbox import OutboxRepository
from videogen_common.store import Store
from videogen_orchestrator.runner import Runner
from videogen_orchestrator.status_events import EventSink

log = logging.getLogger(__name__)


class Reconciler:
    def __init__(
        self,
        *,
        store: Store,
        runner: Runner,
        sink: EventSink,
        clock: Clock,
        grace: timedelta,
        batch: int = 100,
    ) -> None:
        self._generations = GenerationRepository(store)
        self._outbox = OutboxRepository(store)
        self._runner = runner
        self._sink = sink
        self._clock = clock
        self._grace = grace
        self._batch = batch

    async def run_once(self) -> tuple[int, int]:
        """One pass; returns (generations resumed or started from the queue, events republished)."""
        await self._runner.renew_leases()
        resumed = await self._resume_orphans()
        started = await self._start_waiting()
        return resumed + started, await self._flush_outbox()

    async def _resume_orphans(self) -> int:
        now = self._clock.now()
        orphans = [
            # Leases that ran out (their owner died) or were handed back (expired at the epoch), oldest first.
            self._generations.expired_leases(now, self._batch),
            # Never leased: the request message was lost. The api creates generations `processing`; one that
            # waits for an account slot is `queued` with no lease, and is not orphaned (_start_waiting).
            self._generations.never_leased(now - self._grace, self._batch),
        ]
        resumed = 0
        for ids in orphans:
            async for generation_id in ids:
                if await self._runner.start(generation_id, wait_for_slot=False):
                    resumed += 1
        if resumed:
            log.info("resumed orphaned generations", extra={"count": resumed})
        return resumed

    async def _start_waiting(self) -> int:
        await self._runner.accounts.release_finished()
        started = 0
        async for account_id in self._runner.accounts.waiting_accounts():
            started += await self._runner.wake(account_id, wait_for_slot=False)
        if started:
            log.info("started generations that waited for an account slot", extra={"count": started})
        return started

    async def _flush_outbox(self) -> int:
        now = self._clock.now()
        published = 0
        async for event in self._outbox.due(now - self._grace, self._batch):
            if await publish(self._sink, event):
                published += 1
                await self._outbox.republished(event, now)
        if published:
            log.info("republished events", extra={"count": published})
        return published
