"""Sends due deliveries. Each endpoint has its own lane with its own concurrency cap, so a slow or dead
endpoint only ever delays itself. A delivery is claimed in MongoDB before each attempt (its next attempt time
is pushed past the attempt's deadline), so two notifier instances never send the same attempt and a crash
mid-attempt only delays it.

An endpoint that fails ``breaker_failures`` attempts in a row trips its circuit breaker: until the cooldown
ends, each of its deliveries is handed back unsent, due when the cooldown ends (nothing is lost, and no retry
is spent). Attempts already in flight when it trips still finish, so up to ``endpoint_concurrency - 1`` more
may be sent. An endpoint failing for ``webhook_disable_after_seconds`` is disabled and its account told."""

from __future__ import annotations

import asyncio
import logging
import random
import secrets
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from videogen_common.clock import Clock, isoformat
from videogen_common.deliveries import FAILED, PENDING, SUCCEEDED
from videogen_common.store import Store
from videogen_notifier.health import Health, record_failure, record_success
from videogen_notifier.notices import disable_endpoint, finish_pending_notices
from videogen_notifier.payloads import signature_headers
from videogen_notifier.schedule import retry_delay
from videogen_notifier.sender import AttemptResult, Sender
from videogen_notifier.settings import NotifierSettings

log = logging.getLogger(__name__)

Doc = dict[str, Any]


class Lane:
    """One endpoint's queue: at most ``concurrency`` attempts to it at once and ``queue_limit`` deliveries
    queued or in flight (``pending``); while its breaker is open (``paused_until``) it takes nothing."""

    def __init__(self, concurrency: int, queue_limit: int) -> None:
        self.concurrency = concurrency
        self.slots = asyncio.Semaphore(concurrency)
        self.queue_limit = max(queue_limit, concurrency)
        self.pending = 0
        self.paused_until: datetime | None = None

    def paused(self, now: datetime) -> bool:
        return self.paused_until is not None and self.paused_until > now

    def full(self, now: datetime) -> bool:
        return self.pending >= self.queue_limit or self.paused(now)

    def busy(self, now: datetime) -> bool:
        """Has enough to keep every slot occupied: the sweeper brings it nothing more."""
        return self.pending >= self.concurrency or self.paused(now)


class Dispatcher:
    def __init__(
        self,
        *,
        settings: NotifierSettings,
        store: Store,
        sender: Sender,
        clock: Clock,
        rng: Callable[[], float] = random.random,
    ) -> None:
        self._settings = settings
        self._store = store
        self._sender = sender
        self._clock = clock
        self._rng = rng
        self._lanes: dict[str, Lane] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._claim_for = timedelta(seconds=settings.delivery_timeout_seconds * 2 + 5)
        self._cooldown = timedelta(seconds=settings.breaker_cooldown_seconds)
        self._disable_after = timedelta(seconds=settings.webhook_disable_after_seconds)

    @property
    def in_flight(self) -> int:
        return len(self._tasks)

    def submit(self, delivery_id: str, webhook_id: str) -> bool:
        """Queue a due delivery on its endpoint's lane. A full or paused lane refuses it (False): it stays due
        in the store and the sweeper brings it in once the lane has room."""
        if delivery_id in self._tasks:
            return False
        lane = self._lanes.get(webhook_id)
        if lane is None:
            settings = self._settings
            lane = self._lanes[webhook_id] = Lane(
                settings.endpoint_concurrency, settings.endpoint_queue_limit
            )
        if lane.full(self._clock.now()):
            return False
        lane.pending += 1
        task = asyncio.create_task(self._attempt_in_lane(lane, delivery_id), name=f"delivery:{delivery_id}")
        self._tasks[delivery_id] = task
        task.add_done_callback(lambda _: self._done(delivery_id, webhook_id, lane))
        return True

    def _done(self, delivery_id: str, webhook_id: str, lane: Lane) -> None:
        self._tasks.pop(delivery_id, None)
        lane.pending -= 1
        if lane.pending == 0 and not lane.paused(self._clock.now()) and self._lanes.get(webhook_id) is lane:
            del self._lanes[webhook_id]  # idle lanes are not kept for endpoints long gone

    async def sweep(self) -> int:
        """Submit the deliveries that are due (retries, and anything a crash left behind). Endpoints whose
        lane is already full are left out of the query, so a dead endpoint's backlog can never fill a sweep
        batch and starve other endpoints' retries; its due deliveries wait until its lane drains."""
        now = self._clock.now()
        busy = [webhook_id for webhook_id, lane in self._lanes.items() if lane.busy(now)]
        query: Doc = {"status": PENDING, "next_attempt_at": {"$lte": now}}
        if busy:
            query["webhook_id"] = {"$nin": busy}
        due = (
            self._store.deliveries.find(
                query,
                projection={"_id": 1, "webhook_id": 1},
            )
            .sort("next_attempt_at", 1)
            .limit(self._settings.sweep_batch)
        )
        count = 0
        async for doc in due:
            if self.submit(doc["_id"], doc["webhook_id"]):
                count += 1
        return count

    async def wait_idle(self) -> None:
        while self._tasks:
            await asyncio.gather(*self._tasks.values(), return_exceptions=True)

    async def stop(self) -> None:
        for task in list(self._tasks.values()):
            task.cancel()
        await asyncio.gather(*self._tasks.values(), return_exceptions=True)

    async def _attempt_in_lane(self, lane: Lane, delivery_id: str) -> None:
        async with lane.slots:
            if lane.paused(self._clock.now()):
                return  # the breaker opened while this waited: it stays due in the store, unclaimed
            try:
                await self._attempt(delivery_id, lane)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("delivery attempt crashed; it stays due", extra={"delivery_id": delivery_id})

    async def _claim(self, delivery_id: str) -> Doc | None:
        """Push the delivery's next attempt past this attempt's deadline, if it is still due; the unique token
        tells us the document we read back is the one we claimed. (A conditional update plus a read by id,
        rather than findAndModify, which the embedded store serves with a collection scan.)"""
        now = self._clock.now()
        token = secrets.token_hex(8)
        claimed = await self._store.deliveries.update_one(
            {"_id": delivery_id, "status": PENDING, "next_attempt_at": {"$lte": now}},
            {"$set": {"next_attempt_at": now + self._claim_for, "claim": token}},
        )
        if claimed.modified_count != 1:
            return None
        delivery = await self._store.deliveries.find_one({"_id": delivery_id})
        return delivery if delivery is not None and delivery.get("claim") == token else None

    async def _attempt(self, delivery_id: str, lane: Lane | None = None) -> None:
        delivery = await self._claim(delivery_id)
        if delivery is None:
            return  # not due, finished, or another instance has it
        endpoint = await self._store.webhooks.find_one({"_id": delivery["webhook_id"]})
        now = self._clock.now()
        if endpoint is None or not endpoint.get("active", False):
            await self._close(
                delivery, FAILED, "endpoint deleted" if endpoint is None else "endpoint disabled"
            )
            return
        paused_until = Health.of(endpoint).paused_until(self._settings.breaker_failures, self._cooldown)
        if paused_until is not None and paused_until > now:
            if lane is not None:
                lane.paused_until = paused_until
            # The breaker is open: hand the delivery back, due when the cooldown ends. It keeps its place
            # in the retry schedule, since no attempt was made.
            await self._store.deliveries.update_one(
                {"_id": delivery["_id"], "status": PENDING},
                {"$set": {"next_attempt_at": paused_until, "updated_at": now}},
            )
            return
        live_secrets = [
            s["secret"] for s in endpoint["secrets"] if s.get("expires_at") is None or s["expires_at"] > now
        ]
        body = delivery["body"].encode()
        headers = signature_headers(live_secrets, delivery["_id"], int(now.timestamp()), body)
        result = await self._sender.post(endpoint["url"], body, headers)
        await self._record(delivery, endpoint, result, lane)

    async def _record(self, delivery: Doc, endpoint: Doc, result: AttemptResult, lane: Lane | None) -> None:
        now = self._clock.now()
        attempt = {
            "at": now,
            "status_code": result.status_code,
            "latency_ms": result.latency_ms,
            "error": result.error,
        }
        number = len(delivery["attempts"]) + 1
        extra = {
            "delivery_id": delivery["_id"],
            "webhook_id": endpoint["_id"],
            "attempt": number,
            "status_code": result.status_code,
            "generation_id": delivery.get("generation_id"),
            "account_id": delivery.get("account_id"),
        }
        if result.ok:
            await self._close(delivery, SUCCEEDED, None, attempt)
            if Health.of(endpoint).needs_success_recorded(now):
                await record_success(self._store.webhooks, endpoint["_id"], now)
            log.info("delivered", extra=extra)
            return
        health = await record_failure(self._store.webhooks, endpoint["_id"], now)
        if lane is not None:
            # If this failure opened the breaker, what is queued behind it waits in the store, unclaimed.
            lane.paused_until = health.paused_until(self._settings.breaker_failures, self._cooldown)
        if result.status_code == 410:
            await self._disable(endpoint, "endpoint answered 410 Gone", now)
            await self._close(delivery, FAILED, "endpoint answered 410 Gone; it is now disabled", attempt)
            log.warning("endpoint disabled after 410", extra=extra)
            return
        failing_for = health.failing_for(now)
        if failing_for >= self._disable_after:
            reason = f"every attempt failed for {failing_for.total_seconds() / 86400:.1f} days" + (
                f" (since {isoformat(health.failing_since)})" if health.failing_since else ""
            )
            await self._disable(endpoint, reason, now)
            await self._close(delivery, FAILED, f"endpoint disabled: {reason}", attempt)
            log.warning("endpoint disabled after failing too long", extra={**extra, "reason": reason})
            return
        if not result.retriable:
            await self._close(delivery, FAILED, f"{result.error}; not retried", attempt)
            log.warning("delivery refused, not retried", extra={**extra, "error": result.error})
            return
        delay = retry_delay(
            self._settings.retry_delays,
            number,
            jitter=self._settings.retry_jitter,
            rand=self._rng(),
            retry_after=result.retry_after,
        )
        if delay is None:
            await self._close(delivery, FAILED, "retry schedule exhausted", attempt)
            log.warning("delivery failed, schedule exhausted", extra=extra)
            return
        await self._store.deliveries.update_one(
            {"_id": delivery["_id"], "status": PENDING},
            {
                "$push": {"attempts": attempt},
                "$set": {"next_attempt_at": now + timedelta(seconds=delay), "updated_at": now},
            },
        )
        log.info("delivery attempt failed; retry scheduled", extra={**extra, "retry_in_s": round(delay, 3)})

    async def _disable(self, endpoint: Doc, reason: str, now: datetime) -> None:
        for delivery_id, webhook_id in await disable_endpoint(self._store, endpoint, reason, now):
            self.submit(delivery_id, webhook_id)

    async def finish_pending_notices(self) -> int:
        """Complete the ``webhook.disabled`` notices of disables a crash interrupted; returns how many
        deliveries that created."""
        created = await finish_pending_notices(self._store, self._clock.now())
        for delivery_id, webhook_id in created:
            self.submit(delivery_id, webhook_id)
        return len(created)

    async def _close(
        self, delivery: Doc, status: str, reason: str | None, attempt: Doc | None = None
    ) -> None:
        update: Doc = {
            "$set": {
                "status": status,
                "next_attempt_at": None,
                "failure_reason": reason,
                "updated_at": self._clock.now(),
            }
        }
        if attempt is not None:
            update["$push"] = {"attempts": attempt}
        await self._store.deliveries.update_one({"_id": delivery["_id"], "status": PENDING}, update)
