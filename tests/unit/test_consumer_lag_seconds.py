"""videogen_common.metrics: the consumer lag in seconds — how long the oldest message not yet committed has
waited — estimated from the end offsets seen at each scrape, and exported beside the lag in messages."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from prometheus_client import CollectorRegistry, generate_latest

from videogen_common.metrics import ConsumerLag, EndOffsetHistory


def history(*samples: tuple[int, float]) -> EndOffsetHistory:
    found = EndOffsetHistory()
    for end, at in samples:
        found.observe(end, at)
    return found


@pytest.mark.parametrize(
    ("committed", "now", "seconds"),
    [
        (100, 50.0, 0.0),  # everything seen is committed
        (120, 50.0, 0.0),  # committed past what was seen (a scrape behind)
        # Offset n arrived when the end passed n: between 10 s (end 0) and 20 s (end 100), linearly.
        (99, 50.0, 50.0 - 20.0),  # the last of them: at 20 s
        (49, 50.0, 50.0 - 15.0),  # halfway
        (0, 50.0, 50.0 - 10.1),  # the first
    ],
)
def test_the_age_of_the_oldest_message_is_interpolated_between_the_samples_around_it(
    committed: int, now: float, seconds: float
) -> None:
    found = history((0, 10.0), (100, 20.0), (100, 30.0))  # a repeated end keeps its first time
    assert found.seconds_behind(committed, now) == pytest.approx(seconds)


def test_a_message_older_than_the_history_counts_from_its_oldest_sample() -> None:
    found = EndOffsetHistory(limit=2)
    for end, at in ((10, 1.0), (20, 2.0), (30, 3.0)):
        found.observe(end, at)
    assert found.seconds_behind(5, 10.0) == pytest.approx(10.0 - 2.0)


def test_no_samples_no_age() -> None:
    assert EndOffsetHistory().seconds_behind(0, 5.0) == 0.0


@dataclass(frozen=True)
class TP:
    topic: str
    partition: int


class Consumer:
    def __init__(self) -> None:
        self.ends = {TP("t.requested", 0): 0}

    def assignment(self) -> list[TP]:
        return list(self.ends)

    def highwater(self, tp: TP) -> int:
        return self.ends[tp]


class Monitor:
    def __init__(self) -> None:
        self.tp_committed_offsets = {TP("t.requested", 0): 0}


class App:
    def __init__(self) -> None:
        self.consumer, self.monitor = Consumer(), Monitor()


def test_the_collector_exports_the_lag_in_messages_and_in_seconds() -> None:
    app, now = App(), [100.0]
    registry = CollectorRegistry()
    registry.register(ConsumerLag(app, monotonic=lambda: now[0]))

    def sample(name: str) -> float | None:  # each read is a scrape
        return registry.get_sample_value(name, {"topic": "t.requested", "partition": "0"})

    generate_latest(registry)  # a scrape at 100 s: end 0, nothing waiting
    tp = TP("t.requested", 0)
    app.consumer.ends[tp] = 10
    now[0] = 115.0  # a scrape at 115 s sees 10 messages, none handled: they came within those 15 s
    assert sample("videogen_kafka_consumer_lag") == 10
    now[0] = 175.0
    assert sample("videogen_kafka_consumer_lag_seconds") == pytest.approx(175.0 - (100.0 + 0.1 * 15.0))
    app.monitor.tp_committed_offsets[tp] = 10
    assert sample("videogen_kafka_consumer_lag") == 0
    assert sample("videogen_kafka_consumer_lag_seconds") == 0.0
