"""The orchestrator's Prometheus metrics: generations by provider and outcome, the time they spend in each
state, provider calls (latency, errors), each key's capacity and breaker, routing's moves, the reconciler's
repairs, the unfinished backlog, and what the retention sweeper removed. Served on the
side port with the probes (``/metrics``)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from videogen_common.domain import TERMINAL, Provider, Status
from videogen_common.metrics import LATENCY_BUCKETS, STATE_BUCKETS
from videogen_common.records.admission import ProviderPool
from videogen_common.records.generation import GenerationRecord
from videogen_common.repositories.generations import GenerationRepository
from videogen_common.repositories.outbox import OutboxRepository
from videogen_common.repositories.provider_health import ProviderHealthRepository
from videogen_common.repositories.provider_pools import ProviderPoolRepository
from videogen_common.repositories.waiting import WaitingRepository
from videogen_common.routing import Breaker
from videogen_common.store import Store
from videogen_orchestrator.providers.base import Job, ProviderAdapter, ProviderError, TaskState
from videogen_orchestrator.retention_sweeper import Swept

UNFINISHED = [s for s in Status if s not in TERMINAL]
BREAKER_VALUE = {Breaker.CLOSED: 0, Breaker.HALF_OPEN: 1, Breaker.OPEN: 2}


class OrchestratorMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.registry = registry
        self.finished = Counter(
            "videogen_generations_finished",
            "Generations this instance drove to a terminal state, by provider and outcome "
            "(completed, failed).",
            ["provider", "outcome"],
            registry=registry,
        )
        # Every (provider, outcome) from zero, so the first failure of a run is a rise that rate() sees (a
        # series born at 1 reads as no change, and an alert on it would never fire).
        for provider in Provider:
            for outcome in (Status.COMPLETED, Status.FAILED):
                self.finished.labels(provider.value, outcome.value)
        self.failures = Counter(
            "videogen_generation_failures",
            "Failed generations by provider and error code (provider_unavailable, provider_error, ...).",
            ["provider", "code"],
            registry=registry,
        )
        self.duration = Histogram(
            "videogen_generation_duration_seconds",
            "From creation to the terminal state, by provider and outcome.",
            ["provider", "outcome"],
            buckets=STATE_BUCKETS,
            registry=registry,
        )
        self.state_seconds = Histogram(
            "videogen_generation_state_seconds",
            "Time a finished generation spent in a state (queued, processing), observed once per generation "
            "when it finishes.",
            ["provider", "state"],
            buckets=STATE_BUCKETS,
            registry=registry,
        )
        self.provider_calls = Histogram(
            "videogen_provider_call_duration_seconds",
            "Calls to a provider's API by provider, call (submit, poll) and outcome (ok, error).",
            ["provider", "call", "outcome"],
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        self.provider_errors = Counter(
            "videogen_provider_call_errors",
            "Provider calls that raised, by provider, call and error code (a Python exception's class "
            "name when the adapter did not classify it).",
            ["provider", "call", "code"],
            registry=registry,
        )
        self.resumed = Counter(
            "videogen_reconciler_resumed",
            "Generations the reconciler started: orphans resumed (their lease expired, or their request "
            "never arrived) and generations that waited in line.",
            registry=registry,
        )
        self.republished = Counter(
            "videogen_reconciler_republished",
            "Status events the reconciler republished because their first publish was not confirmed.",
            registry=registry,
        )
        self.in_flight = Gauge(
            "videogen_generations_in_flight", "Generations this instance is running now.", registry=registry
        )
        self.callbacks_reading = Gauge(
            "videogen_provider_callbacks_reading",
            "1 while this instance reads the providers' callbacks (VIDEOGEN_PROVIDER_CALLBACKS on), 0 while "
            "it cannot (the broker away): its tasks at Luma and fal then wait for the safety-net poll.",
            registry=registry,
        )
        self.unfinished = Gauge(
            "videogen_generations_unfinished",
            "Generations not yet finished, in the whole store, by status (refreshed periodically; every "
            "instance reports the same figure).",
            ["status"],
            registry=registry,
        )
        self.admission_waited = Histogram(
            "videogen_admission_wait_seconds",
            "Time a generation waited in line (for provider capacity or its account's cap) before it was "
            "admitted to its provider, by provider.",
            ["provider"],
            buckets=STATE_BUCKETS,
            registry=registry,
        )
        for provider in Provider:
            self.admission_waited.labels(provider.value)  # from zero, like the counters
        self.capacity_refusals = Counter(
            "videogen_provider_capacity_refusals",
            "Submits a provider refused for capacity (429): the generation waited again and the key's "
            "effective limit was lowered. By provider and pool (key).",
            ["provider", "pool"],
            registry=registry,
        )
        for provider in Provider:
            self.capacity_refusals.labels(provider.value, provider.value)
        capacity = "the whole deployment's, refreshed periodically; every instance reports the same figure"
        self.capacity_limit = Gauge(
            "videogen_provider_capacity_limit",
            f"A provider key's configured concurrency ({capacity}); absent for a key without a limit.",
            ["provider", "pool"],
            registry=registry,
        )
        self.capacity_effective = Gauge(
            "videogen_provider_capacity_effective_limit",
            f"A provider key's effective concurrency, lowered after refusals ({capacity}); absent while "
            "unlimited.",
            ["provider", "pool"],
            registry=registry,
        )
        self.capacity_running = Gauge(
            "videogen_provider_capacity_running",
            f"Generations holding a provider key's slots ({capacity}).",
            ["provider", "pool"],
            registry=registry,
        )
        self.capacity_paused = Gauge(
            "videogen_provider_capacity_paused",
            f"1 while a provider key takes no new work after a refusal ({capacity}).",
            ["provider", "pool"],
            registry=registry,
        )
        self.capacity_waiting = Gauge(
            "videogen_provider_capacity_waiting",
            f"Generations waiting in line at a provider ({capacity}).",
            ["provider"],
            registry=registry,
        )
        self.breaker_state = Gauge(
            "videogen_provider_breaker_state",
            f"A provider key's breaker: 0 closed, 1 half-open (probing), 2 open ({capacity}).",
            ["provider", "pool"],
            registry=registry,
        )
        self.breaker_transitions = Counter(
            "videogen_provider_breaker_transitions",
            "A provider key's breaker changes this instance made, by the state it moved to: open (failures "
            "in a row), half_open (a probe went), closed (a task succeeded).",
            ["provider", "pool", "to"],
            registry=registry,
        )
        for provider in Provider:
            for to in Breaker:
                self.breaker_transitions.labels(provider.value, provider.value, to.value)
        self.routing_moves = Counter(
            "videogen_routing_moves",
            "Generations this instance moved to another candidate of their route, by where from and to and "
            "why: breaker (open there), capacity (no room there, room at the other), refused (a 429 there), "
            "failed (the attempt failed where moving on is allowed).",
            ["from_provider", "to_provider", "why"],
            registry=registry,
        )
        self.outbox_pending = Gauge(
            "videogen_generations_outbox_pending",
            "Documents (a finished generation, a disabled endpoint, ...) owing events the notifier has not "
            "taken in yet, in the whole store.",
            registry=registry,
        )
        self.media_swept = Counter(
            "videogen_media_swept",
            "What the retention sweeper removed, by kind: generations whose media it deleted (retention, or "
            "a delete's second pass), uploads (their image and document).",
            ["kind"],
            registry=registry,
        )
        for kind in ("generations", "uploads"):
            self.media_swept.labels(kind)
        self.media_objects_deleted = Counter(
            "videogen_media_objects_deleted",
            "Objects the retention sweeper asked the media storage to delete (one already gone counts too).",
            registry=registry,
        )
        self.media_sweep_failures = Counter(
            "videogen_media_sweep_failures",
            "Generations and uploads with an object the media storage would not delete (the storage's reason "
            "is logged); they are looked at again later.",
            registry=registry,
        )

    def observe_swept(self, swept: Swept) -> None:
        self.media_swept.labels("generations").inc(swept.generations)
        self.media_swept.labels("uploads").inc(swept.uploads)
        self.media_objects_deleted.inc(swept.objects)
        self.media_sweep_failures.inc(swept.failed)

    def observe_finished(self, final: GenerationRecord) -> None:
        """Count a generation this instance moved to its terminal state, with its time in each state."""
        provider, outcome = final.provider, final.status.value
        self.finished.labels(provider, outcome).inc()
        if final.status is Status.FAILED:
            code = final.error.code if final.error is not None else None
            self.failures.labels(provider, str(code or "unknown")).inc()
        created, ended = final.created_at, final.updated_at
        self.duration.labels(provider, outcome).observe(max(0.0, (ended - created).total_seconds()))
        for state, seconds in (final.state_seconds or {}).items():
            self.state_seconds.labels(provider, state).observe(float(seconds))

    def observe_waited(self, provider: str, seconds: float) -> None:
        self.admission_waited.labels(provider).observe(seconds)

    def observe_refused(self, pool: ProviderPool) -> None:
        self.capacity_refusals.labels(pool.provider, pool.id).inc()

    def observe_breaker(self, provider: str, pool: str, to: Breaker) -> None:
        self.breaker_transitions.labels(provider, pool, to.value).inc()

    def observe_move(self, from_provider: str, to_provider: str, why: str) -> None:
        self.routing_moves.labels(from_provider, to_provider, why).inc()

    def observe_call(self, provider: str, call: str, seconds: float, error: BaseException | None) -> None:
        self.provider_calls.labels(provider, call, "ok" if error is None else "error").observe(seconds)
        if error is not None:
            code = error.error.code if isinstance(error, ProviderError) else error.__class__.__name__
            self.provider_errors.labels(provider, call, code).inc()

    async def refresh(self, store: Store, now: datetime) -> None:
        """The store-wide gauges: a count per unfinished status and of the events owed (all indexed), and
        each provider key's capacity."""
        generations = GenerationRepository(store)
        for status in UNFINISHED:
            self.unfinished.labels(status.value).set(await generations.count_in_status(status))
        self.outbox_pending.set(await OutboxRepository(store).count_owed())
        pools = await ProviderPoolRepository(store).everything()
        for pool in pools:
            labels = (pool.provider, pool.id)
            for gauge, value in (
                (self.capacity_limit, pool.limit),
                (self.capacity_effective, pool.effective),
            ):
                if value is None:
                    with contextlib.suppress(KeyError):
                        gauge.remove(*labels)
                else:
                    gauge.labels(*labels).set(value)
            self.capacity_running.labels(*labels).set(pool.running)
            self.capacity_paused.labels(*labels).set(1 if pool.paused(now) else 0)
        health = {pool.id: pool for pool in await ProviderHealthRepository(store).everything()}
        for pool in pools:
            state = health[pool.id].breaker(now) if pool.id in health else Breaker.CLOSED
            self.breaker_state.labels(pool.provider, pool.id).set(BREAKER_VALUE[state])
        waiting = await WaitingRepository(store).waiting_by_provider()
        for provider in Provider:
            self.capacity_waiting.labels(provider.value).set(waiting.get(provider.value, 0))


class MeasuredProvider:
    """A provider adapter whose submit and poll calls are timed and whose errors are counted; everything else
    (its declared features, plan, cancel, close) is the adapter's own, passed through."""

    def __init__(self, adapter: ProviderAdapter, metrics: OrchestratorMetrics) -> None:
        self._adapter = adapter
        self._metrics = metrics
        self.name = adapter.name
        self.can_cancel = adapter.can_cancel
        self.pays_per_submit = adapter.pays_per_submit
        self.poll_interval_seconds = adapter.poll_interval_seconds
        self.calls_back = adapter.calls_back

    def plan(self, job: Job) -> dict[str, Any]:
        return self._adapter.plan(job)

    async def cancel(self, task_id: str) -> None:
        await self._adapter.cancel(task_id)

    async def close(self) -> None:
        await self._adapter.close()

    async def submit(self, job: Job) -> str:
        started, error = time.perf_counter(), None
        try:
            return await self._adapter.submit(job)
        except Exception as exc:
            error = exc
            raise
        finally:
            self._metrics.observe_call(self.name, "submit", time.perf_counter() - started, error)

    async def poll(self, task_id: str, job: Job) -> TaskState:
        started, error = time.perf_counter(), None
        try:
            return await self._adapter.poll(task_id, job)
        except Exception as exc:
            error = exc
            raise
        finally:
            self._metrics.observe_call(self.name, "poll", time.perf_counter() - started, error)


def measured(
    providers: Mapping[str, ProviderAdapter], metrics: OrchestratorMetrics
) -> dict[str, ProviderAdapter]:
    return {name: MeasuredProvider(adapter, metrics) for name, adapter in providers.items()}
