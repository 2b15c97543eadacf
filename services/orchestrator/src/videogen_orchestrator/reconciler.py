"""Repairs what a crash or a lost message left behind. MongoDB is the source of truth; Kafka is the fast path.

- A generation whose lease expired (its owner died) or that nobody ever leased (its request message was lost)
  is claimed and driven on.
- A terminal generation whose status event is not known to be on Kafka has it republished."""

from __future__ import annotations

import logging
from datetime import timedelta

from videogen_common.clock import Clock
from videogen_common.store import Store
from videogen_orchestrator.runner import ACTIVE, Runner
from videogen_orchestrator.status_events import EventSink, publish_status

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
        self._store = store
        self._runner = runner
        self._sink = sink
        self._clock = clock
        self._grace = grace
        self._batch = batch

    async def run_once(self) -> tuple[int, int]:
        """One pass; returns (generations resumed, status events republished)."""
        await self._runner.renew_leases()
        return await self._resume_orphans(), await self._flush_outbox()

    async def _resume_orphans(self) -> int:
        now = self._clock.now()
        orphans = (
            self._store.generations.find(
                {
                    "status": {"$in": ACTIVE},
                    "$or": [
                        {"lease_expires_at": {"$lt": now}},
                        {"lease_expires_at": None, "created_at": {"$lt": now - self._grace}},
                    ],
                },
                projection={"_id": 1},
            )
            .sort("created_at", 1)
            .limit(self._batch)
        )
        resumed = 0
        async for doc in orphans:
            if await self._runner.start(doc["_id"], wait_for_slot=False):
                resumed += 1
        if resumed:
            log.info("resumed orphaned generations", extra={"count": resumed})
        return resumed

    async def _flush_outbox(self) -> int:
        now = self._clock.now()
        pending = self._store.generations.find(
            {"outbox_pending": True, "updated_at": {"$lt": now - self._grace}}
        ).limit(self._batch)
        published = 0
        async for doc in pending:
            if await publish_status(self._store, self._sink, doc, now):
                published += 1
        if published:
            log.info("republished status events", extra={"count": published})
        return published
