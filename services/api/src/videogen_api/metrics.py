"""The api's Prometheus metrics: every request by route pattern (never the raw path, which would make a series
per generation id), method and status; the Kafka publishes behind them. Served at ``/metrics``."""

from __future__ import annotations

from aiohttp import web
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from videogen_common.metrics import LATENCY_BUCKETS

# The route label of a request no route matched (404 on an unknown path, 405): one series, whatever the path.
UNMATCHED = "unmatched"
# The status label of a request whose client went away before the answer (nginx's convention).
CLIENT_CLOSED = 499


class ApiMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.registry = registry
        self.requests = Counter(
            "videogen_http_requests",
            "HTTP requests answered, by route pattern, method and status.",
            ["route", "method", "status"],
            registry=registry,
        )
        self.latency = Histogram(
            "videogen_http_request_duration_seconds",
            "Time from a request's arrival to its answer, by route pattern, method and status.",
            ["route", "method", "status"],
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        self.in_flight = Gauge(
            "videogen_http_requests_in_flight", "HTTP requests being handled now.", registry=registry
        )
        self.published = Counter(
            "videogen_events_published",
            "Envelopes the api put on Kafka (ok) or could not (failed: left to the orchestrator's "
            "reconciler), by event type.",
            ["type", "outcome"],
            registry=registry,
        )
        # Each label set's series, looked up once (``labels`` validates and takes a lock every time): every
        # request observes one route's two series, and every creation counts one publish.
        self._series: dict[tuple[str, str, int], tuple[Counter, Histogram]] = {}
        self._publishes: dict[tuple[str, str], Counter] = {}

    def observe_request(self, route: str, method: str, status: int, seconds: float) -> None:
        series = self._series.get((route, method, status))
        if series is None:
            labels = (route, method, str(status))
            series = self._series[route, method, status] = (
                self.requests.labels(*labels),
                self.latency.labels(*labels),
            )
        series[0].inc()
        series[1].observe(seconds)

    def count_publish(self, event_type: str, outcome: str) -> None:
        """One envelope put on Kafka (``ok``) or not (``failed``)."""
        series = self._publishes.get((event_type, outcome))
        if series is None:
            series = self._publishes[event_type, outcome] = self.published.labels(event_type, outcome)
        series.inc()


METRICS = web.AppKey("metrics", ApiMetrics)


def route_of(request: web.Request) -> str:
    """The pattern of the route that matched (``/v1/generations/{id}``), or ``unmatched``."""
    resource = request.match_info.route.resource
    return resource.canonical if resource is not None else UNMATCHED
