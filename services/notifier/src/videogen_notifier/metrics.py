"""The notifier's Prometheus metrics: delivery attempts by outcome and their latency, deliveries finished, the
retry backlog, and the endpoints whose circuit is open or that are disabled. Served on the side port with the
probes (``/metrics``)."""

from __future__ import annotations

from datetime import datetime, timedelta

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from videogen_common.deliveries import FAILED, SUCCEEDED
from videogen_common.metrics import LATENCY_BUCKETS
from videogen_common.repositories.deliveries import DeliveryRepository
from videogen_common.repositories.webhooks import WebhookRepository
from videogen_common.store import Store
from videogen_notifier.sender import AttemptResult

# A due delivery not attempted this long after its time is overdue: the notifier is not keeping up (or its
# endpoint's lane is full, see docs/operations.md).
OVERDUE_AFTER = timedelta(minutes=1)


def attempt_outcome(result: AttemptResult) -> str:
    """A bounded label for an attempt: the status class (``2xx`` … ``5xx``), or why there was no status."""
    if result.status_code is not None:
        return f"{result.status_code // 100}xx"
    if not result.retriable:
        return "refused"  # the destination guard refused the address
    return "timeout" if result.error == "timeout" else "network"


class NotifierMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.registry = registry
        self.attempts = Counter(
            "videogen_delivery_attempts",
            "Delivery attempts by outcome: 2xx (success), 3xx/4xx/5xx, timeout, network, refused.",
            ["outcome"],
            registry=registry,
        )
        self.attempt_latency = Histogram(
            "videogen_delivery_attempt_duration_seconds",
            "Time from sending a delivery to its answer (or timeout), by outcome.",
            ["outcome"],
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        self.finished = Counter(
            "videogen_deliveries_finished",
            "Deliveries this instance closed, by outcome: succeeded, or failed (schedule exhausted, endpoint "
            "disabled or deleted, destination refused).",
            ["outcome"],
            registry=registry,
        )
        for outcome in (SUCCEEDED, FAILED):  # from zero, so the first of each is a rise rate() sees
            self.finished.labels(outcome)
        self.in_flight = Gauge(
            "videogen_delivery_attempts_in_flight",
            "Deliveries queued in or being sent by this instance's endpoint lanes.",
            registry=registry,
        )
        self.retry_backlog = Gauge(
            "videogen_delivery_retry_backlog",
            "Deliveries waiting for a retry (after a failed attempt, or re-queued through the API), in the "
            "whole store.",
            registry=registry,
        )
        self.overdue = Gauge(
            "videogen_deliveries_overdue",
            "Pending deliveries whose next attempt is more than a minute late, in the whole store.",
            registry=registry,
        )
        self.endpoints = Gauge(
            "videogen_webhook_endpoints",
            "Endpoints by state, in the whole store: failing (last attempt failed), circuit_open (breaker "
            "pausing their deliveries), disabled (inactive).",
            ["state"],
            registry=registry,
        )

    def observe_attempt(self, result: AttemptResult) -> None:
        outcome = attempt_outcome(result)
        self.attempts.labels(outcome).inc()
        self.attempt_latency.labels(outcome).observe(result.latency_ms / 1000)

    async def refresh(
        self, store: Store, now: datetime, *, breaker_failures: int, breaker_cooldown: timedelta
    ) -> None:
        """The store-wide gauges (every instance reports the same figures)."""
        deliveries, webhooks = DeliveryRepository(store), WebhookRepository(store)
        self.retry_backlog.set(await deliveries.count_waiting_for_retry())
        self.overdue.set(await deliveries.count_overdue(now, OVERDUE_AFTER))
        self.endpoints.labels("failing").set(await webhooks.count_failing())
        self.endpoints.labels("circuit_open").set(
            await webhooks.count_circuit_open(now, breaker_failures, breaker_cooldown)
        )
        self.endpoints.labels("disabled").set(await webhooks.count_disabled())
