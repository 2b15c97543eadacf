"""Owns this instance's in-flight generations: claims a lease in MongoDB before starting an actor, renews the
leases of everything it runs, and hands them back on shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from datetime import timedelta
from typing import Any

from videogen_common.clock import Clock
from videogen_common.domain import TERMINAL, Status
from videogen_common.store import Store
from videogen_orchestrator.actor import GenerationActor

log = logging.getLogger(__name__)

ACTIVE = [s.value for s in Status if s not in TERMINAL]


class Runner:
    def __init__(
        self,
        *,
        store: Store,
        actor: GenerationActor,
        clock: Clock,
        lease: timedelta,
        max_in_flight: int,
    ) -> None:
        self._store = store
        self._actor = actor
        self._clock = clock
        # Claims, renewals and hand-backs are made as the owner the actor writes under: one identity.
        self._owner = actor.owner
        self._lease = lease
        self._slots = asyncio.Semaphore(max_in_flight)
        self._tasks: dict[str, asyncio.Task[Any]] = {}
        self._claiming: set[str] = set()
        self._stopping = False

    @property
    def in_flight(self) -> int:
        return len(self._tasks)

    def owns(self, generation_id: str) -> bool:
        return generation_id in self._tasks

    async def start(self, generation_id: str, *, wait_for_slot: bool = True) -> bool:
        """Claim the generation and start its actor. Returns False if it is finished, already leased by a live
        owner, or (with ``wait_for_slot=False``) this instance is full. A duplicate request is harmless."""
        if self._stopping or generation_id in self._tasks or generation_id in self._claiming:
            return False
        if not wait_for_slot and self._slots.locked():
            return False
        # Reserved before the first await, so overlapping starts (agent and reconciler) claim it once.
        self._claiming.add(generation_id)
        try:
            await self._slots.acquire()
            try:
                doc = await self._claim(generation_id)
            except BaseException:
                self._slots.release()
                raise
            if doc is None:
                self._slots.release()
                return False
            self._tasks[generation_id] = asyncio.create_task(self._run(doc), name=f"actor:{generation_id}")
            return True
        finally:
            self._claiming.discard(generation_id)

    async def _claim(self, generation_id: str) -> dict[str, Any] | None:
        """Take the lease if it is free or expired. A conditional update stamping a unique token, then a read
        by id (the embedded store serves findAndModify with a collection scan)."""
        now = self._clock.now()
        token = secrets.token_hex(8)
        claimed = await self._store.generations.update_one(
            {
                "_id": generation_id,
                "status": {"$in": ACTIVE},
                "$or": [{"lease_expires_at": None}, {"lease_expires_at": {"$lt": now}}],
            },
            {
                "$set": {
                    "lease_owner": self._owner,
                    "lease_expires_at": now + self._lease,
                    "lease_token": token,
                },
                "$inc": {"attempts": 1},
            },
        )
        if claimed.modified_count != 1:
            return None
        doc = await self._store.generations.find_one({"_id": generation_id})
        return doc if doc is not None and doc.get("lease_token") == token else None

    async def _run(self, doc: dict[str, Any]) -> None:
        try:
            await self._actor.run(doc)
        except asyncio.CancelledError:
            raise
        except Exception:
            # The lease will expire and the reconciler retries it; nothing is lost.
            log.exception("actor crashed", extra={"generation_id": doc["_id"]})
        finally:
            self._tasks.pop(doc["_id"], None)
            self._slots.release()

    async def renew_leases(self) -> None:
        if not self._tasks:
            return
        await self._store.generations.update_many(
            {"_id": {"$in": list(self._tasks)}, "lease_owner": self._owner},
            {"$set": {"lease_expires_at": self._clock.now() + self._lease}},
        )

    async def wait_idle(self) -> None:
        while self._tasks:
            await asyncio.gather(*self._tasks.values(), return_exceptions=True)

    async def stop(self) -> None:
        """Stop taking work, cancel the actors and hand their leases back so another instance resumes them
        at once (the provider task id is saved, so nothing is submitted twice)."""
        self._stopping = True
        owned = list(self._tasks)
        for task in list(self._tasks.values()):
            task.cancel()
        with contextlib.suppress(Exception):
            await asyncio.gather(*self._tasks.values(), return_exceptions=True)
        if owned:
            await self._store.generations.update_many(
                {"_id": {"$in": owned}, "lease_owner": self._owner, "status": {"$in": ACTIVE}},
                {"$set": {"lease_owner": None, "lease_expires_at": None}},
            )
            log.info("released leases", extra={"count": len(owned)})
