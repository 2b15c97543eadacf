"""Prometheus metrics: one registry per process, built at start-up and passed down (never the library's global
default, so tests can build several services in one process), its text exposition, and the Kafka consumer lag
of a faust worker. Each service defines its own metric families in its own ``metrics.py``."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
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

__all__ = ["CONTENT_TYPE_LATEST", "ConsumerLag", "EndOffsetHistory", "exposition", "new_registry"]


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


class EndOffsetHistory:
    """When one partition's end offset reached each value it was seen at, to tell how long ago the oldest
    message not yet committed arrived: the consumer lag in seconds. As kafka-lag-exporter estimates it, by
    interpolating between the two samples around that message's offset. Samples are taken when the figures
    are read (each scrape), so the estimate is as fine as the scrape interval; it is bounded to ``limit``
    samples, past which it is a lower bound."""

    def __init__(self, limit: int = 720) -> None:
        self._samples: deque[tuple[int, float]] = deque(maxlen=limit)  # (end offset, first seen at)

    def observe(self, end: int, at: float) -> None:
        if not self._samples or end > self._samples[-1][0]:
            self._samples.append((end, at))

    def seconds_behind(self, committed: int, now: float) -> float:
        """How long the message at offset ``committed`` (the next one to handle) has been waiting; 0 when
        every message seen is committed."""
        if not self._samples or committed >= self._samples[-1][0]:
            return 0.0
        before: tuple[int, float] | None = None
        for end, at in self._samples:
            if end > committed:
                if before is None:  # it arrived before the oldest sample kept: at least this long
                    return max(0.0, now - at)
                end_before, at_before = before
                share = (committed + 1 - end_before) / (end - end_before)
                return max(0.0, now - (at_before + share * (at - at_before)))
            before = (end, at)
        return 0.0  # not reached: the last sample is past ``committed``


class ConsumerLag(Collector):
    """``videogen_kafka_consumer_lag{topic,partition}``: for each partition assigned to this instance, the
    log end offset its Kafka client last saw minus the offset this instance last committed, i.e. messages
    the broker holds that are not handled here yet; and ``videogen_kafka_consumer_lag_seconds``, how long
    the oldest of them has waited (see ``EndOffsetHistory``). Read at scrape time from the faust app, in
    memory.

    A partition is reported once this instance has committed on it: until then faust does not say where the
    group stands. On the embedded Tansu broker the end offset after a batched produce is wrong (see the
    development notes), so the figure can under-report there; on Kafka it is exact."""

    def __init__(self, app: Any, monotonic: Callable[[], float] = time.monotonic) -> None:
        self._app = app  # a faust.App; typed loosely because common does not import faust
        self._monotonic = monotonic
        self._history: dict[tuple[str, int], EndOffsetHistory] = {}

    def describe(self) -> Iterable[Metric]:
        return list(self._families())

    def collect(self) -> Iterator[Metric]:
        messages, seconds = self._families()
        now = self._monotonic()
        for key, (end, committed) in sorted(self.offsets().items()):
            labels = [key[0], str(key[1])]
            history = self._history.setdefault(key, EndOffsetHistory())
            history.observe(end, now)
            messages.add_metric(labels, max(0, end - committed))
            seconds.add_metric(labels, history.seconds_behind(committed, now))
        yield messages
        yield seconds

    def offsets(self) -> dict[tuple[str, int], tuple[int, int]]:
        """(end offset, committed offset) of each assigned partition this instance has committed on."""
        try:
            consumer = self._app.consumer
            assigned: Iterable[PartitionLike] = consumer.assignment()
            committed: Mapping[Any, int] = self._app.monitor.tp_committed_offsets or {}
            found: dict[tuple[str, int], tuple[int, int]] = {}
            for tp in assigned:
                end, done = consumer.highwater(tp), committed.get(tp)
                if end is not None and done is not None:
                    found[(tp.topic, tp.partition)] = (int(end), int(done))
        except Exception:  # the consumer is not started (or already stopped): nothing to report
            return {}
        return found

    @staticmethod
    def _families() -> tuple[GaugeMetricFamily, GaugeMetricFamily]:
        return (
            GaugeMetricFamily(
                "videogen_kafka_consumer_lag",
                "Messages on an assigned partition that this instance has not committed yet.",
                labels=["topic", "partition"],
            ),
            GaugeMetricFamily(
                "videogen_kafka_consumer_lag_seconds",
                "How long the oldest message on an assigned partition not committed here has waited "
                "(estimated from the end offsets seen at each scrape).",
                labels=["topic", "partition"],
            ),
        )
