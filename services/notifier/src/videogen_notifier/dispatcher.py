"""Sends due deliveries. Each endpoint has its own lane with its own queue and concurrency cap, so a slow or
dead endpoint only ever delays itself. A delivery is claimed in MongoDB before each attempt (its next attempt
time is pushed past the attempt's deadline), so two notifier instances never send the same attempt and a
crash mid-attempt only delays it. A delivery this instance creates from an event is stored already
claimed by it when its lane has room (for ``delivery_hold_seconds``, extended if it waits longer), so its
first attempt needs no claim of its own; after a crash, such a delivery is sent once that claim ends. A store
failure is not a crash: the lane keeps what it holds and tries it again once the store answers.

The store is the shared resource every endpoint's deliveries pass through, so each attempt costs as few
round trips as it can: the claim (none for a delivery created claimed), the HTTP request, and one update
that records the attempt. The endpoint's record is read once per lane and reused for
``endpoint_cache_seconds``: a change made through the API (URL, events, secrets, active) reaches the
deliveries within that long; this instance's own changes (health, disabling) apply at once.

An endpoint that fails ``breaker_failures`` attempts in a row trips its circuit breaker: until the cooldown
ends its lane sends nothing, and keeps what it holds to go on with then (it all stays in the store too:
nothing is lost, and no retry is spent); a retry it schedules meanwhile is due when the cooldown ends.
Attempts already in flight when it trips still finish, so up to ``endpoint_concurrency - 1`` more may be
sent. An endpoint failing for ``webhook_disable_after_seconds`` is disabled and its account told (a
``webhook.disabled`` event, taken in like any other).

A delivery held in a lane, created claimed, is out of the store's due range until its claim ends, so a dead
endpoint's backlog costs the sweeps nothing meanwhile: the store reads every due document a sweep matches,
whatever its limit.

The parts: the one intake for every type of event (``take_in``: deliveries made, queued, the owed events
settled); each endpoint's lane (``lanes.Lane``) owns its queue, its workers, its breaker and its copy of the
endpoint; the delivery collection's claims and writes are ``repositories.deliveries.DeliveryClaims``', the
endpoint's reads and writes ``repositories.webhooks.WebhookRepository``'s (both in ``videogen_common``); what
follows an attempt (done, retry when, give up, disable) is ``decision.decide``, a pure function. The
dispatcher ties them together: it creates and sweeps deliveries into lanes, makes each attempt and applies
its decision."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import secrets
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime, timedelta

from opentelemetry import trace

from videogen_common.clock import Clock
from videogen_common.deliveries import FAILED, SUCCEEDED
from videogen_common.disabling import disable_endpoint
from videogen_common.records.delivery import Attempt, Delivery
from videogen_common.records.event import Event
from videogen_common.records.webhook import Health, WebhookEndpoint
from videogen_common.repositories.deliveries import DeliveryClaims
from videogen_common.repositories.events import EventRepository
from videogen_common.repositories.outbox import OutboxRepository
from videogen_common.repositories.webhooks import WebhookRepository
from videogen_common.store import ConnectionFailure, PyMongoError, Store, WriteConcernError
from videogen_common.tracing import annotate, span_in
from videogen_notifier.decision import Policy, RetryAt, Succeeded, Why, decide
from videogen_notifier.deliveries import new_deliveries_for
from videogen_notifier.lanes import Job, Lane
from videogen_notifier.payloads import signature_headers
from videogen_notifier.sender import AttemptResult, Sender
from videogen_notifier.settings import NotifierSettings

log = logging.getLogger(__name__)

# How long a lane waits before trying again an attempt the store failed (it keeps the delivery meanwhile).
STORE_RETRY_SECONDS = 1.0
# The store failures that pass: unreachable, timed out, failing over, or short of its write concern. Any other
# error (a refused write) would fail again, so the attempt ends and the delivery stays due in the store.
STORE_UNAVAILABLE = (ConnectionFailure, WriteConcernError)
# What is logged when a delivery is given up.
GIVE_UP_LOGS = {
    Why.GONE: "endpoint disabled after 410",
    Why.FAILING_TOO_LONG: "endpoint disabled after failing too long",
    Why.NOT_RETRIABLE: "delivery refused, not retried",
    Why.EXHAUSTED: "delivery failed, schedule exhausted",
}


class Dispatcher:
    def __init__(
        self,
        *,
        settings: NotifierSettings,
        store: Store,
        sender: Sender,
        clock: Clock,
        rng: Callable[[], float] = random.random,
        on_closed: Callable[[str], None] | None = None,
    ) -> None:
        self._settings = settings
        self._store = store
        self._on_closed = on_closed  # told each delivery's final status (the metrics)
        self._sender = sender
        self._clock = clock
        self._rng = rng
        self._policy = Policy.of(settings)
        self._lanes: dict[str, Lane] = {}
        # A claim lasts past the attempt's deadline with room to spare; an attempt starts only on a claim
        # with at least ``_claim_margin`` left, so it is recorded before any other instance may take it.
        self._claim_for = timedelta(seconds=settings.delivery_timeout_seconds * 2 + 5)
        self._claim_margin = timedelta(seconds=settings.delivery_timeout_seconds + 5)
        # How long a delivery this instance creates stays claimed by it while it waits in its lane.
        self._hold_for = timedelta(seconds=settings.delivery_hold_seconds)
        self._held = 0  # deliveries held in all lanes
        self._endpoint_ttl = timedelta(seconds=settings.endpoint_cache_seconds)
        # The claim token of this instance is its delivery claims'.
        self._deliveries = DeliveryClaims(store, secrets.token_hex(8))
        self._webhooks = WebhookRepository(store)
        self._events = EventRepository(store)
        self._outbox = OutboxRepository(store)
        # Deliveries of a ``create`` that failed, which the store may have written all the same.
        self._unsure: set[str] = set()

    @property
    def in_flight(self) -> int:
        """Deliveries queued in or being sent by this instance's lanes."""
        return self._held

    def _hold(self, lane: Lane, delivery_id: str) -> None:
        lane.hold(delivery_id)
        self._held += 1

    def _let_go(self, lane: Lane, delivery_id: str) -> None:
        if lane.let_go(delivery_id):
            self._held -= 1

    def _room(self, lane: Lane) -> bool:
        return not lane.full() and self._held < self._settings.queue_limit

    def _lane(self, webhook_id: str) -> Lane:
        lane = self._lanes.get(webhook_id)
        if lane is None:
            settings = self._settings
            lane = self._lanes[webhook_id] = Lane(
                webhook_id,
                concurrency=settings.endpoint_concurrency,
                queue_limit=settings.endpoint_queue_limit,
                endpoint_ttl=self._endpoint_ttl,
                clock=self._clock,
                send=self._send,
                on_worker_exit=self._forget_if_idle,
            )
        return lane

    def _forget_if_idle(self, lane: Lane) -> None:
        """Idle lanes are not kept for endpoints long gone; one whose copy of the endpoint is still fresh is
        kept until it goes stale (the sweeper looks every pass), as the next delivery may be moments away."""
        now = self._clock.now()
        if lane.idle(now) and not lane.fresh_endpoint(now) and self._lanes.get(lane.webhook_id) is lane:
            del self._lanes[lane.webhook_id]

    def submit(self, delivery_id: str, webhook_id: str, known: Delivery | None = None) -> bool:
        """Queue a due delivery on its endpoint's lane (``known``: the delivery as stored, if the caller read
        it). A full or paused lane refuses it (False): it stays due in the store and the sweeper brings it in
        once the lane has room."""
        lane = self._lane(webhook_id)
        if lane.holds(delivery_id) or lane.paused(self._clock.now()) or not self._room(lane):
            self._forget_if_idle(lane)
            return False
        self._hold(lane, delivery_id)
        lane.offer(Job(delivery_id, known))
        return True

    async def take_in(self, events: Sequence[Event]) -> list[tuple[str, str]]:
        """The one intake for every type of event: record the owed events (``GET /v1/events`` lists them),
        create the deliveries these events call for (one per endpoint of the account subscribed to the type)
        and queue them on their lanes, then settle the owed events (after their records are written, never
        before); returns (delivery id, webhook id) of the deliveries created. A repeated event creates
        nothing."""
        owed = [event for event in events if event.owed]
        await self._events.record(owed)
        created = await self.create(await new_deliveries_for(self._store, events, self._clock.now()))
        await self._outbox.settle(owed)
        return created

    async def create(self, deliveries: list[Delivery]) -> list[tuple[str, str]]:
        """Store new deliveries (events' deliveries, built by ``new_deliveries_for``) in one batch and
        queue the ones that were new; returns their (delivery id, webhook id). Each one whose lane has room
        is stored claimed by this instance for ``delivery_hold_seconds`` and queued at once (a lane whose
        breaker is open keeps it for when the cooldown ends); the others are stored due now (or when their
        endpoint's breaker closes), for the sweeper to bring in as their lanes drain."""
        now = self._clock.now()
        # An event twice in one batch (republished at once) calls for the same deliveries twice: one each.
        unique: dict[str, Delivery] = {}
        for delivery in deliveries:
            unique.setdefault(delivery.id, delivery)
        to_store: list[Delivery] = []
        reserved: dict[str, Lane] = {}
        for new in unique.values():
            lane = self._lane(new.webhook_id)
            if self._room(lane):
                to_store.append(self._deliveries.mark_claimed(new, now + self._hold_for))
                self._hold(lane, new.id)
                reserved[new.id] = lane
            elif lane.paused(now):
                to_store.append(replace(new, next_attempt_at=lane.paused_until))
            else:
                to_store.append(new)
        try:
            created = await self._deliveries.insert_new(to_store)
        except BaseException:
            # The batch may have been stored although the store's answer never came: the agent tries it
            # again, and those of its deliveries found stored then, claimed by this instance, are queued.
            self._unsure.update(reserved)
            self._release(reserved)
            raise
        for delivery in created:
            held_by = reserved.pop(delivery.id, None)
            if held_by is not None:
                held_by.offer(Job(delivery.id, delivery, claimed_until=delivery.next_attempt_at))
        try:
            if self._unsure:
                await self._queue_stored_by_failed_try(reserved)
        finally:
            self._release(reserved)  # not stored by this call: the event was seen before
        return [(delivery.id, delivery.webhook_id) for delivery in created]

    async def _queue_stored_by_failed_try(self, reserved: dict[str, Lane]) -> None:
        """Queue the deliveries an earlier ``create`` of this instance stored claimed although it failed
        (found already stored now); without this they would wait in the store for their claim to end."""
        for delivery_id in [i for i in reserved if i in self._unsure]:
            stored = await self._deliveries.stored_claimed(delivery_id)
            if stored is not None:
                lane = reserved.pop(delivery_id)
                lane.offer(Job(delivery_id, stored, claimed_until=stored.next_attempt_at))
        self._unsure.clear()

    def _release(self, reserved: dict[str, Lane]) -> None:
        for delivery_id, lane in reserved.items():
            self._let_go(lane, delivery_id)
            self._forget_if_idle(lane)

    async def _send(self, lane: Lane, job: Job) -> None:
        """One job taken by one of the lane's workers."""
        try:
            await self._attempt(lane, job)
        except asyncio.CancelledError:
            self._let_go(lane, job.delivery_id)
            raise
        except STORE_UNAVAILABLE as exc:
            # The store did not answer: the delivery keeps its place and its claim, and is tried again
            # once the store answers, rather than waiting in the store for its claim to end.
            log.warning(
                "store unavailable during a delivery attempt; trying it again",
                extra={"delivery_id": job.delivery_id, "error": exc.__class__.__name__},
            )
            lane.put_back(job)
            await asyncio.sleep(STORE_RETRY_SECONDS)
            return
        except Exception:
            log.exception("delivery attempt crashed; it stays due", extra={"delivery_id": job.delivery_id})
        self._let_go(lane, job.delivery_id)

    async def sweep(self) -> int:
        """Submit the deliveries that are due (retries, and anything a crash left behind), oldest first, up
        to ``sweep_batch``. Those of endpoints whose lane is busy (or whose breaker is open) are passed over,
        so a dead endpoint's backlog can never fill a sweep and starve other endpoints' retries (the store
        reads every due document whatever the limit, so the busy ones are skipped here: see
        ``DeliveryClaims.due``)."""
        now = self._clock.now()
        for lane in list(self._lanes.values()):
            lane.start_workers()  # a lane whose cooldown has ended goes on with what it kept
            self._forget_if_idle(lane)
        busy = {webhook_id for webhook_id, lane in self._lanes.items() if lane.busy(now)}
        count = 0
        async with contextlib.aclosing(self._deliveries.due(now)) as due:
            async for delivery in due:
                webhook_id = delivery.webhook_id
                if webhook_id not in busy and self.submit(delivery.id, webhook_id, delivery):
                    count += 1
                    if count >= self._settings.sweep_batch:
                        break
        return count

    async def wait_idle(self) -> None:
        while workers := [w for lane in self._lanes.values() for w in lane.workers]:
            await asyncio.gather(*workers, return_exceptions=True)

    async def stop(self, hand_back_seconds: float = 5.0) -> None:
        """Stop sending. What this instance created claimed and had not begun is handed back (due now), for
        up to ``hand_back_seconds``, so another instance need not wait for those claims to end (what is not
        handed back by then is sent once its claim ends); a lane whose breaker is open keeps its claims, as
        nothing could be sent to it sooner anyway. Attempts cut short stay claimed until their claim ends, as
        after a crash."""
        now = self._clock.now()
        lanes = list(self._lanes.values())
        unstarted = [claimed for lane in lanes if not lane.paused(now) for claimed in lane.claimed_jobs()]
        workers = [w for lane in lanes for w in lane.workers]
        for worker in workers:
            worker.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        self._lanes.clear()
        self._held = 0
        if not unstarted:
            return
        try:
            async with asyncio.timeout(hand_back_seconds):
                for delivery_id, claimed_until in unstarted:
                    await self._deliveries.hand_back(delivery_id, claimed_until, now)
        except (TimeoutError, PyMongoError) as exc:
            log.warning(
                "could not hand back every queued delivery; the rest are due when their claims end",
                extra={"error": exc.__class__.__name__, "queued": len(unstarted)},
            )

    async def _attempt(self, lane: Lane, job: Job) -> None:
        delivery = await self._claimed(job)
        if delivery is None:
            return  # not due, finished, or another instance has it
        endpoint = await lane.endpoint(self._webhooks.get)
        now = self._clock.now()
        if endpoint is None or not endpoint.active:
            await self._close(
                delivery, FAILED, "endpoint deleted" if endpoint is None else "endpoint disabled"
            )
            return
        paused_until = endpoint.health.paused_until(self._policy.breaker_failures, self._policy.cooldown)
        if paused_until is not None and paused_until > now:
            lane.trip(paused_until)
            # The breaker is open: hand the delivery back, due when the cooldown ends. It keeps its place
            # in the retry schedule, since no attempt was made.
            await self._deliveries.postpone(delivery.id, paused_until, now)
            return
        live_secrets = endpoint.live_secrets(now)
        if delivery.body is None:  # a claimed delivery is always read with its body
            raise ValueError(f"delivery {delivery.id} was claimed without its body")
        body = delivery.body.encode()
        headers = signature_headers(live_secrets, delivery.id, int(now.timestamp()), body)
        span = span_in(
            "webhook.attempt",
            delivery.traceparent,
            delivery_id=delivery.id,
            webhook_id=endpoint.id,
            event_type=delivery.event_type,
            attempt=len(delivery.attempts) + 1,
        )
        with trace.use_span(span, end_on_exit=True):
            result = await self._sender.post(endpoint.url, body, headers)
            annotate(status_code=result.status_code, error=result.error, succeeded=result.ok)
            await self._record(delivery, endpoint, result, lane)

    async def _claimed(self, job: Job) -> Delivery | None:
        """The delivery, claimed by this instance for long enough to attempt it, or None. A claim taken here
        is kept on the job, so an attempt tried again (the store failed it) goes on under the same claim."""
        if job.claimed_until is None or job.delivery is None:
            claimed_until = self._clock.now() + self._claim_for
            delivery = await self._deliveries.claim_due(
                job.delivery_id, job.delivery, claimed_until, self._clock.now()
            )
            if delivery is not None:
                job.delivery, job.claimed_until = delivery, claimed_until
            return delivery
        now = self._clock.now()
        if job.claimed_until - now >= self._claim_margin:
            return job.delivery  # created claimed, and the claim outlasts this attempt
        # It waited long in the queue: extend the claim, unless another instance took it after it ended.
        renewed = await self._deliveries.renew_claim(job.delivery_id, now + self._claim_for)
        return job.delivery if renewed else None

    async def _record(
        self, delivery: Delivery, endpoint: WebhookEndpoint, result: AttemptResult, lane: Lane
    ) -> None:
        """Count the attempt in the endpoint's health, decide what follows it (``decision.decide``: the rules
        are there) and apply that: the store writes, the lane's breaker and probing, a disable, the logs."""
        now = self._clock.now()
        attempt = Attempt(now, result.status_code, result.latency_ms, result.error)
        number = len(delivery.attempts) + 1
        extra = {
            "delivery_id": delivery.id,
            "webhook_id": endpoint.id,
            "attempt": number,
            "status_code": result.status_code,
            "generation_id": delivery.generation_id,
            "account_id": delivery.account_id,
            "request_id": delivery.trace_id,
        }
        if result.ok:
            health = endpoint.health  # as it was before this attempt
        else:
            health = await self._webhooks.record_failure(endpoint.id, now)
            lane.remember_health(health)
            lane.failed()
        decision = decide(
            result, attempt=number, health=health, policy=self._policy, now=now, rand=self._rng()
        )
        outcome = decision.outcome
        if isinstance(outcome, Succeeded):
            await self._close(delivery, SUCCEEDED, None, attempt)
            if health.needs_success_recorded(now):
                await self._webhooks.record_success(endpoint.id, now)
                lane.remember_health(Health(last_success_at=now, last_failure_at=health.last_failure_at))
            lane.succeeded()  # the endpoint answers again
            log.info("delivered", extra=extra)
            return
        if decision.pause_until is not None:
            lane.trip(decision.pause_until)  # what is queued behind this failure waits for the cooldown
        if decision.disable is not None:
            await self._disable(lane, endpoint, decision.disable, now)
        if isinstance(outcome, RetryAt):
            await self._deliveries.schedule_retry(delivery.id, attempt, outcome.when, now)
            retry_in_s = round((outcome.when - now).total_seconds(), 3)
            log.info("delivery attempt failed; retry scheduled", extra={**extra, "retry_in_s": retry_in_s})
            return
        await self._close(delivery, FAILED, outcome.reason, attempt)
        if outcome.why is Why.FAILING_TOO_LONG:
            extra["reason"] = decision.disable
        elif outcome.why is Why.NOT_RETRIABLE:
            extra["error"] = result.error
        log.warning(GIVE_UP_LOGS[outcome.why], extra=extra)

    async def _disable(self, lane: Lane, endpoint: WebhookEndpoint, reason: str, now: datetime) -> None:
        """Disable the endpoint, its ``webhook.disabled`` event in the same write, and take the event in here
        at once (if this instance stops first, the reconciler republishes it: it is owed)."""
        event = await disable_endpoint(self._store, endpoint, reason, now)
        lane.remember_disabled()
        if event is not None:
            await self.take_in([event])

    async def _close(
        self, delivery: Delivery, status: str, reason: str | None, attempt: Attempt | None = None
    ) -> None:
        closed = await self._deliveries.close(delivery, status, reason, attempt, self._clock.now())
        if closed and self._on_closed is not None:
            self._on_closed(status)
