"""Prometheus metrics: one registry per process, built at start-up and passed down (never the library's global
default, so tests can build several services in one process), its text exposition, and the Kafka consumer lag
of a faust worker. Each service defines its own metric families in its own ``metrics.py``."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Protocol

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    GC_COLLECTOR,
    CollectorRegistry,
    GCCollector,
    PlatformCollector,
    ProcessCollector,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

# Seconds: from a fast store write to a provider call or a slow webhook receiver.
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
# Seconds a generation spends in a state: provider renders take seconds to many minutes.
STATE_BUCKETS = (0.1, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0)

__all__ = ["CONTENT_TYPE_LATEST", "ConsumerLag", "exposition", "new_registry"]


def new_registry() -> CollectorRegistry:
    """A fresh registry with the process's own figures (CPU, memory, open files, GC, Python version).

    Counters and histograms are exposed without their ``*_created`` twin series (a process-wide switch of the
    client library, set here because every registry of ours is built here): half the series, no loss."""
    disable_created_metrics()  # type: ignore[no-untyped-call]  # the library leaves it unannotated
    registry = CollectorRegistry()
    ProcessCollector(registry=registry)
    PlatformCollector(registry=registry)
    if GC_COLLECTOR is not None:
        GCCollector(registry=registry)
    return registry


def exposition(registry: CollectorRegistry) -> bytes:
    """The registry in Prometheus' text format (content type ``CONTENT_TYPE_LATEST``)."""
    return generate_latest(registry)


class PartitionLike(Protocol):
    topic: str
    partition: int


class ConsumerLag(Collector):
    """``videogen_kafka_consumer_lag{topic,partition}``: for each partition assigned to this instance, the
    log end offset its Kafka client last saw minus the offset this instance last committed, i.e. messages
    the broker holds that are not handled here yet. Read at scrape time from the faust app, in memory.

    A partition is reported once this instance has committed on it: until then faust does not say where the
    group stands. On the embedded Tansu broker the end offset after a batched produce is wrong (see the
    development notes), so the figure can under-report there; on Kafka it is exact."""

    def __init__(self, app: Any) -> None:
        self._app = app  # a faust.App; typed loosely because common does not import faust

    def describe(self) -> Iterable[Metric]:
        return [self._family()]

    def collect(self) -> Iterator[Metric]:
        family = self._family()
        for (topic, partition), lag in sorted(self.lag().items()):
            family.add_metric([topic, str(partition)], lag)
        yield family

    def lag(self) -> dict[tuple[str, int], int]:
        try:
            consumer = self._app.consumer
            assigned: Iterable[PartitionLike] = consumer.assignment()
            committed: Mapping[Any, int] = self._app.monitor.tp_committed_offsets or {}
            lags: dict[tuple[str, int], int] = {}
            for tp in assigned:
                end, done = consumer.highwater(tp), committed.get(tp)
                if end is not None and done is not None:
                    lags[(tp.topic, tp.partition)] = max(0, int(end) - int(done))
        except Exception:  # the consumer is not started (or already stopped): nothing to report
            return {}
        return lags

    @staticmethod
    def _family() -> GaugeMetricFamily:
        return GaugeMetricFamily(
            "videogen_kafka_consumer_lag",
            "Messages on an assigned partition that this instance has not committed yet.",
            labels=["topic", "partition"],
        )
