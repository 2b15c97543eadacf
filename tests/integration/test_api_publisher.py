"""videogen_api.publisher's background path (creation's requests) against the real broker: handed over without
waiting, sent, and when sending fails, logged, counted and reported unhealthy, for the orchestrator's
reconciler to dispatch (tested in test_orchestrator_lifecycle.py; end to end in tests/e2e/test_faults.py)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import pytest
from aiokafka import AIOKafkaProducer

from tests.support.fakes import ManualClock
from tests.support.topic_reads import topic_records
from videogen_api.metrics import ApiMetrics
from videogen_api.publisher import EventPublisher
from videogen_common.clock import isoformat
from videogen_common.events import REQUESTED, Envelope
from videogen_common.metrics import new_registry
from videogen_common.settings import CommonSettings
from videogen_common.topics import Topics


@pytest.fixture
async def producer(common_settings: CommonSettings) -> AsyncIterator[AIOKafkaProducer]:
    producer = AIOKafkaProducer(bootstrap_servers=common_settings.kafka_bootstrap, enable_idempotence=False)
    await producer.start()
    try:
        yield producer
    finally:
        await producer.stop()


def request(n: int) -> Envelope:
    now = ManualClock().now()
    generation = {"id": f"gen_{n:026d}", "status": "processing", "prompt": f"clip {n}"}
    return Envelope(f"evt_{n:026d}", REQUESTED, isoformat(now), "acme", generation, trace_id=f"req_{n}")


async def requested(common_settings: CommonSettings, topics: Topics, count: int) -> list[Envelope]:
    records = await topic_records(
        common_settings.kafka_bootstrap, topics.requested, lambda found: len(found) >= count
    )
    return [Envelope.from_json(r.value or b"") for r in records]


def published(metrics: ApiMetrics, outcome: str) -> float:
    value = metrics.registry.get_sample_value(
        "videogen_events_published_total", {"type": REQUESTED, "outcome": outcome}
    )
    return value or 0.0


async def test_requests_handed_over_are_sent_and_counted(
    producer: AIOKafkaProducer, topics: Topics, common_settings: CommonSettings
) -> None:
    metrics = ApiMetrics(new_registry())
    publisher = EventPublisher(producer, topics, 5.0, metrics)
    publisher.start()
    for n in range(5):
        publisher.publish_soon(request(n))  # returns at once: nothing to await

    await publisher.close()  # what is queued goes into the producer's buffer
    await producer.flush()

    sent = await requested(common_settings, topics, 5)
    assert sorted(sent, key=lambda e: e.event_id) == [request(n) for n in range(5)]
    assert published(metrics, "ok") == 5 and publisher.connected()


async def test_a_send_failing_after_the_answer_is_logged_counted_and_reported_unhealthy(
    producer: AIOKafkaProducer, topics: Topics, caplog: pytest.LogCaptureFixture
) -> None:
    metrics = ApiMetrics(new_registry())
    publisher = EventPublisher(producer, topics, 5.0, metrics)
    publisher.start()
    await producer.stop()  # the broker can no longer be reached through it

    with caplog.at_level(logging.WARNING, logger="videogen_api.publisher"):
        publisher.publish_soon(request(1))
        await publisher.close()

    assert not publisher.connected()
    assert published(metrics, "failed") == 1 and published(metrics, "ok") == 0
    [record] = [r for r in caplog.records if r.getMessage() == "publish failed; left to the reconciler"]
    assert record.__dict__["generation_id"] == request(1).generation_id


async def test_beyond_the_queue_limit_requests_are_dropped_for_the_reconciler(
    producer: AIOKafkaProducer, topics: Topics
) -> None:
    metrics = ApiMetrics(new_registry())
    publisher = EventPublisher(producer, topics, 5.0, metrics, queue_limit=2)
    # Not started: nothing drains the queue.
    for n in range(3):
        publisher.publish_soon(request(n))

    assert published(metrics, "failed") == 1
    assert not publisher.connected()


async def test_an_answer_later_than_the_publish_timeout_counts_as_a_failure(
    producer: AIOKafkaProducer, topics: Topics, common_settings: CommonSettings
) -> None:
    # A first publish teaches the producer the topic's partitions, so the next one is buffered at once.
    warm = EventPublisher(producer, topics, 5.0)
    warm.start()
    warm.publish_soon(request(0))
    await warm.flush()
    assert warm.connected()
    metrics = ApiMetrics(new_registry())
    publisher = EventPublisher(producer, topics, 0.0001, metrics)  # no broker answers within 0.1 ms
    publisher.start()
    publisher.publish_soon(request(1))

    await publisher.flush()

    assert not publisher.connected()
    assert published(metrics, "failed") == 1 and published(metrics, "ok") == 0
    # It did arrive, late: the reconciler may dispatch its generation again, which compare-and-set makes
    # harmless.
    sent = await requested(common_settings, topics, 2)
    assert sorted(sent, key=lambda e: e.event_id) == [request(0), request(1)]
    await warm.close()
    await publisher.close()
