"""An endpoint's lane: its own queue of deliveries, at most ``concurrency`` of them being sent at once, and
what the dispatcher remembers about the endpoint between attempts (its breaker, its document)."""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

Doc = dict[str, Any]


@dataclass(slots=True)
class Job:
    """A delivery queued on a lane."""

    delivery_id: str
    # The delivery as stored, when known (the sweep read it, or this instance created it): claiming it then
    # needs no read back.
    doc: Doc | None = None
    # Set when this instance stored the delivery already claimed by itself: the claim ends then.
    claimed_until: datetime | None = None


class Lane:
    """One endpoint's queue: at most ``concurrency`` attempts to it at once and ``queue_limit`` deliveries
    queued or in flight (``held``). While its last attempt failed (``failing``) it sends one at a time, as
    a probe: a dead endpoint ties up one connection and one timeout, not ``concurrency`` of them, and its
    breaker opens after fewer wasted attempts; the first success opens it up again. While its breaker is
    open (``paused_until``) it sends nothing and keeps what it holds, to go on with once the cooldown ends.

    It also keeps the endpoint's document, read at most once per ``endpoint_ttl`` (see ``fresh_endpoint``):
    concurrent attempts to one endpoint share one read, and this instance's own writes to the endpoint (its
    health, a disable) are applied to the copy as they are made."""

    def __init__(self, webhook_id: str, concurrency: int, queue_limit: int) -> None:
        self.webhook_id = webhook_id
        self.concurrency = concurrency
        self.queue_limit = max(queue_limit, concurrency)
        self.queue: deque[Job] = deque()
        self.held: set[str] = set()  # delivery ids queued, in flight, or about to be queued
        self.workers: set[asyncio.Task[None]] = set()
        self.paused_until: datetime | None = None
        self.failing = False
        self.endpoint: Doc | None = None
        self.endpoint_read_at: datetime | None = None
        self.endpoint_lock = asyncio.Lock()

    def worker_cap(self) -> int:
        """How many attempts may be in flight at once now."""
        return 1 if self.failing else self.concurrency

    def paused(self, now: datetime) -> bool:
        return self.paused_until is not None and self.paused_until > now

    def full(self) -> bool:
        return len(self.held) >= self.queue_limit

    def busy(self, now: datetime) -> bool:
        """Has enough to keep every worker occupied, or may not send: the sweeper brings it nothing more."""
        return len(self.held) >= self.concurrency or self.paused(now)

    def idle(self, now: datetime) -> bool:
        return not self.held and not self.workers and not self.paused(now)

    def pause(self, until: datetime) -> None:
        """Open the breaker until ``until`` (a later failure may push it further)."""
        if self.paused_until is None or until > self.paused_until:
            self.paused_until = until

    def fresh_endpoint(self, now: datetime, ttl: timedelta) -> bool:
        """Whether the copy of the endpoint was read less than ``ttl`` ago (a clock that moved back counts as
        stale)."""
        read_at = self.endpoint_read_at
        return read_at is not None and timedelta(0) <= now - read_at < ttl
