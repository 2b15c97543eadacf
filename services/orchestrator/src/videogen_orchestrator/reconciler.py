"""Repairs what a crash or a lost message left behind. MongoDB is the source of truth; Kafka is the fast path.

- A generation whose lease expired (its owner died, or a stopping instance handed it back) or that nobody ever
  leased (its request message was lost) is claimed and driven on.
- A provider or account slot still held by a finished generation (its instance died before giving it back) is
  reclaimed, and every provider with generations waiting and room for them gets them started, in fair turn
  (``admission``); a waiting generation whose client's deadline passed fails with ``deadline_exceeded``.
- A batch its api left ``validating`` (it stopped between the batch and the end of its items) for longer than
  ``batch_validating_seconds`` is settled: moved on with the items written, or failed if none was.
- An event the notifier has not taken in within the grace (any owed event, in any document's outbox: see
  videogen_common.outbox) is put on the events topic again (and waits another grace before the next)."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import timedelta

from videogen_common.clock import Clock
from videogen_common.endings import end_generation, settle_batches, settle_validating
from videogen_common.failures import ErrorCode, GenerationError
from videogen_common.outbox import publish
from videogen_common.repositories.generations import GenerationRepository
from videogen_common.repositories.instances import InstanceRepository
from videogen_common.repositories.leases import LeaseRepository
from videogen_common.repositories.outbox import OutboxRepository
from videogen_common.store import Store
from videogen_orchestrator.admission import Admission
from videogen_orchestrator.providers.rate import RateLimiter
from videogen_orchestrator.runner import Runner
from videogen_orchestrator.settings import OrchestratorSettings
from videogen_orchestrator.status_events import EventSink, publish_status

log = logging.getLogger(__name__)


class Reconciler:
    def __init__(
        self,
        settings: OrchestratorSettings,
        store: Store,
        runner: Runner,
        admission: Admission,
        sink: EventSink,
        *,
        clock: Clock,
        limiters: Iterable[RateLimiter] = (),
        batch: int = 100,
    ) -> None:
        """``settings``: the instance's name (its heartbeat), the grace after which a generation nobody
        leased or an owed event is taken up again, the interval between passes, and the providers' prices
        (what a generation failed past its deadline cost)."""
        self._store = store
        self._generations = GenerationRepository(store)
        self._leases = LeaseRepository(store)
        self._outbox = OutboxRepository(store)
        self._instances = InstanceRepository(store)
        self._instance = settings.orchestrator_instance
        self._interval = timedelta(seconds=settings.reconcile_interval_seconds)
        self._limiters = list(limiters)
        self._runner = runner
        self._admission = admission
        self._prices = settings.price_table
        self._sink = sink
        self._clock = clock
        self._grace = timedelta(seconds=settings.dispatch_grace_seconds)
        self._validating_bound = timedelta(seconds=settings.batch_validating_seconds)
        self._batch = batch

    async def run_once(self) -> tuple[int, int]:
        """One pass; returns (generations resumed or started from the queue, events republished)."""
        await self._runner.renew_leases()
        await self._share_rates()
        resumed = await self._resume_orphans()
        started = await self._start_waiting()
        await self._settle_batches()
        return resumed + started, await self._flush_outbox()

    async def _settle_batches(self) -> None:
        """Batches left ``validating`` past the bound are moved on or failed; batches whose last item ended
        without being counted (its process died in between) end now."""
        now = self._clock.now()
        try:
            await settle_validating(
                self._store, stale_before=now - self._validating_bound, now=now, sink=self._sink
            )
            await settle_batches(self._store, quiet_since=now - self._grace, now=now, sink=self._sink)
        except Exception:
            log.exception("could not settle batches")

    async def _resume_orphans(self) -> int:
        now = self._clock.now()
        resumed = 0
        # Leases that ran out (their owner died, maybe while it put the generation in line) or were handed
        # back (expired at the epoch), oldest first.
        async for generation_id in self._leases.expired_leases(now, self._batch):
            if await self._runner.start(generation_id, wait_for_slot=False, waiting=True):
                resumed += 1
        # Never leased: the request message was lost. The api creates generations `processing`; one that
        # waits in line is `queued` with no lease, and is not orphaned (_start_waiting).
        async for generation_id in self._leases.never_leased(now - self._grace, self._batch):
            if await self._runner.start(generation_id, wait_for_slot=False):
                resumed += 1
        if resumed:
            log.info("resumed orphaned generations", extra={"count": resumed})
        return resumed

    async def _start_waiting(self) -> int:
        admission = self._admission
        await admission.release_finished()
        await self._fail_past_deadline()
        started = 0
        for provider in admission.providers:
            started += await self._runner.dispatch(provider, wait_for_slot=False)
        if started:
            log.info("started generations that waited in line", extra={"count": started})
        return started

    async def _fail_past_deadline(self) -> None:
        """Waiting generations whose client's deadline passed fail now, not when their turn comes."""
        for generation_id in await self._admission.past_deadline():
            record = await self._generations.get(generation_id)
            if record is None or record.status.terminal:
                continue
            error = GenerationError(
                ErrorCode.DEADLINE_EXCEEDED,
                "the video was not finished by the deadline the request set (it was still waiting for "
                "capacity)",
                retriable=True,
            )
            await end_generation(
                self._store,
                record,
                error,
                prices=self._prices,
                now=self._clock.now(),
                announce=lambda failed: publish_status(self._sink, failed, self._clock.now()),
                sink=self._sink,
            )

    async def _share_rates(self) -> None:
        """This instance's heartbeat, and its share of each provider's request-rate cap: the cap divided by
        the instances seen in the last three passes."""
        now = self._clock.now()
        await self._instances.beat(self._instance, now)
        if self._limiters:
            alive = await self._instances.alive(now - 3 * self._interval)
            for limiter in self._limiters:
                limiter.share(alive)

    async def stopped(self) -> None:
        """This instance stops: it no longer takes a share of the rate caps."""
        await self._instances.gone(self._instance)

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
