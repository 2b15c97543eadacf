"""An endpoint's lane: its own queue of deliveries and the workers that send them, at most ``concurrency`` at
once, and what the dispatcher remembers about the endpoint between attempts (its breaker, its record)."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from videogen_common.clock import Clock
from videogen_common.records.delivery import Delivery
from videogen_common.records.webhook import Health, WebhookEndpoint


@dataclass(slots=True)
class Job:
    """A delivery queued on a lane."""

    delivery_id: str
    # The delivery as stored, when known (the sweep read it, or this instance created it): claiming it then
    # needs no read back.
    delivery: Delivery | None = None
    # Set when this instance stored the delivery already claimed by itself: the claim ends then.
    claimed_until: datetime | None = None


class Lane:
    """One endpoint's queue: at most ``concurrency`` attempts to it at once and ``queue_limit`` deliveries
    queued or in flight (held). While its last attempt failed (``failing``) it sends one at a time, as a
    probe: a dead endpoint ties up one connection and one timeout, not ``concurrency`` of them, and its
    breaker opens after fewer wasted attempts; the first success opens it up again. While its breaker is
    open (``paused_until``) it sends nothing and keeps what it holds, to go on with once the cooldown ends.

    Its workers take the queued jobs one at a time and hand each to ``send`` (the dispatcher's attempt),
    which lets go of the job's delivery when done with it (``let_go``) or puts the job back (``put_back``);
    ``on_worker_exit`` is told when a worker ends.

    It also keeps the endpoint's record, read at most once per ``endpoint_ttl`` (see ``endpoint``):
    concurrent attempts to one endpoint share one read, and this instance's own writes to the endpoint (its
    health, a disable) are applied to the copy as they are made."""

    def __init__(
        self,
        webhook_id: str,
        *,
        concurrency: int,
        queue_limit: int,
        endpoint_ttl: timedelta,
        clock: Clock,
        send: Callable[[Lane, Job], Awaitable[None]],
        on_worker_exit: Callable[[Lane], None],
    ) -> None:
        self.webhook_id = webhook_id
        self.concurrency = concurrency
        self.queue_limit = max(queue_limit, concurrency)
        self._endpoint_ttl = endpoint_ttl
        self._clock = clock
        self._send = send
        self._on_worker_exit = on_worker_exit
        self._queue: deque[Job] = deque()
        self._held: set[str] = set()  # delivery ids queued, in flight, or about to be queued
        self._workers: set[asyncio.Task[None]] = set()
        self._paused_until: datetime | None = None
        self._failing = False
        self._endpoint: WebhookEndpoint | None = None
        self._endpoint_read_at: datetime | None = None
        self._endpoint_lock = asyncio.Lock()

    # What it holds.

    def holds(self, delivery_id: str) -> bool:
        return delivery_id in self._held

    def hold(self, delivery_id: str) -> None:
        """Count the delivery as the lane's (it is about to be queued)."""
        self._held.add(delivery_id)

    def let_go(self, delivery_id: str) -> bool:
        """Forget the delivery; whether the lane held it."""
        if delivery_id in self._held:
            self._held.discard(delivery_id)
            return True
        return False

    def full(self) -> bool:
        return len(self._held) >= self.queue_limit

    def busy(self, now: datetime) -> bool:
        """Has enough to keep every worker occupied, or may not send: the sweeper brings it nothing more."""
        return len(self._held) >= self.concurrency or self.paused(now)

    def idle(self, now: datetime) -> bool:
        return not self._held and not self._workers and not self.paused(now)

    # The queue and its workers.

    def offer(self, job: Job) -> None:
        """Queue a job whose delivery the lane already holds; start a worker if one is free."""
        self._queue.append(job)
        self.start_workers()

    def put_back(self, job: Job) -> None:
        """Return a job a worker took to the front of the queue (it is tried again next)."""
        self._queue.appendleft(job)

    def take(self) -> Job:
        return self._queue.popleft()

    def claimed_jobs(self) -> list[tuple[str, datetime]]:
        """(delivery id, claimed until) of the queued jobs this instance created claimed: the ones it may
        hand back."""
        return [(job.delivery_id, job.claimed_until) for job in self._queue if job.claimed_until is not None]

    @property
    def workers(self) -> frozenset[asyncio.Task[None]]:
        return frozenset(self._workers)

    def worker_cap(self) -> int:
        """How many attempts may be in flight at once now."""
        return 1 if self._failing else self.concurrency

    def start_workers(self) -> None:
        if self.paused(self._clock.now()):
            return  # the sweep starts them again once the cooldown ends
        # Each worker is busy with a job or about to take one: one more per queued job, up to the cap.
        wanted = min(self.worker_cap(), len(self._workers) + len(self._queue))
        while len(self._workers) < wanted:
            worker = asyncio.create_task(self._work(), name=f"lane:{self.webhook_id}")
            self._workers.add(worker)
            worker.add_done_callback(self._worker_done)

    def _worker_done(self, worker: asyncio.Task[None]) -> None:
        self._workers.discard(worker)
        self._on_worker_exit(self)

    async def _work(self) -> None:
        try:
            while self._queue and not self.paused(
                self._clock.now()
            ):  # paused: the queue waits for the cooldown
                if len(self._workers) > self.worker_cap():
                    # The endpoint is failing: the surplus workers retire (the last one goes on probing).
                    return
                await self._send(self, self.take())
        finally:
            # Out of the count in the same step that found nothing (more) to do, not when the task's done
            # callback runs later: a job offered in between starts a worker of its own instead of waiting in
            # the queue for the sweep.
            self._workers.discard(asyncio.current_task())

    # The breaker and the probe.

    @property
    def paused_until(self) -> datetime | None:
        """When the breaker, if it was opened, lets attempts through again."""
        return self._paused_until

    @property
    def failing(self) -> bool:
        return self._failing

    def paused(self, now: datetime) -> bool:
        return self._paused_until is not None and self._paused_until > now

    def trip(self, until: datetime) -> None:
        """Open the breaker until ``until`` (a later failure may push it further)."""
        if self._paused_until is None or until > self._paused_until:
            self._paused_until = until

    def failed(self) -> None:
        """An attempt failed: send one at a time, as a probe, until one succeeds."""
        self._failing = True

    def succeeded(self) -> None:
        """An attempt succeeded: the endpoint answers again, so the breaker closes and the lane goes back to
        full concurrency."""
        self._paused_until = None
        if self._failing:
            self._failing = False
            self.start_workers()

    # The endpoint's record.

    def fresh_endpoint(self, now: datetime) -> bool:
        """Whether the copy of the endpoint was read less than ``endpoint_ttl`` ago (a clock that moved back
        counts as stale)."""
        read_at = self._endpoint_read_at
        return read_at is not None and timedelta(0) <= now - read_at < self._endpoint_ttl

    async def endpoint(
        self, read: Callable[[str], Awaitable[WebhookEndpoint | None]]
    ) -> WebhookEndpoint | None:
        """The lane's endpoint, read with ``read`` at most once per ``endpoint_ttl`` (None: deleted)."""
        if self.fresh_endpoint(self._clock.now()):
            return self._endpoint
        async with self._endpoint_lock:  # concurrent attempts wait for one read
            read_at = self._clock.now()
            if not self.fresh_endpoint(read_at):
                self._endpoint = await read(self.webhook_id)
                self._endpoint_read_at = read_at
                if self._endpoint is not None:  # failing by another instance's attempts too
                    self._failing = self._endpoint.health.consecutive_failures > 0
            return self._endpoint

    def remember_health(self, health: Health) -> None:
        """Apply this instance's write of the endpoint's health to the copy."""
        if self._endpoint is not None:
            self._endpoint = replace(self._endpoint, health=health)

    def remember_disabled(self) -> None:
        """Apply this instance's disabling of the endpoint to the copy."""
        if self._endpoint is not None:
            self._endpoint = replace(self._endpoint, active=False)
