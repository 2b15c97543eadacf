"""A topic followed from its end by one process alone (every partition, no consumer group, nothing
committed) through broker outages and a topic not made yet: how the api's status feed and the orchestrator's
callback feed read their topics."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.errors import KafkaError

log = logging.getLogger(__name__)

# After the broker went away (or before the topic exists): how long until the next try.
RETRY_SECONDS = 2.0
# The most a consumer is given to stop.
STOP_SECONDS = 5.0

OnRecord = Callable[[bytes | None, bytes | None], None]


async def follow_from_end(
    bootstrap: str,
    topic: str,
    on_record: OnRecord,
    *,
    ready: asyncio.Event,
    stopping: Callable[[], bool],
    fetch_wait_ms: int,
    unread: str,
) -> None:
    """Hand each record's key and value, as it comes, to ``on_record`` until ``stopping()``. ``ready`` is set
    while the topic is read (every partition assigned, its end resolved: nothing sent from then on is
    missed). With the broker unreachable or no topic yet it logs ``unread`` (what not reading costs) and tries
    again every ``RETRY_SECONDS``, from the end again. ``fetch_wait_ms``: the longest the broker may hold a
    fetch before it answers."""
    while not stopping():
        consumer = AIOKafkaConsumer(
            bootstrap_servers=bootstrap,
            group_id=None,
            auto_offset_reset="latest",
            enable_auto_commit=False,
            fetch_max_wait_ms=fetch_wait_ms,
        )
        try:
            await consumer.start()
            await consumer.topics()  # the cluster's metadata, this topic's partitions in it
            partitions = consumer.partitions_for_topic(topic)
            if not partitions:
                raise KafkaError(f"topic {topic} not found yet")
            assigned = [TopicPartition(topic, p) for p in sorted(partitions)]
            consumer.assign(assigned)
            await consumer.seek_to_end()
            for partition in assigned:  # the end resolved now: nothing sent from here on is skipped
                await consumer.position(partition)
            ready.set()
            while not stopping():
                batches = await consumer.getmany(timeout_ms=1000)
                for records in batches.values():
                    for record in records:
                        on_record(record.key, record.value)
        except KafkaError as exc:
            log.warning(unread, extra={"topic": topic, "error": repr(exc), "retry_seconds": RETRY_SECONDS})
        finally:
            ready.clear()
            with contextlib.suppress(KafkaError, TimeoutError):
                async with asyncio.timeout(STOP_SECONDS):
                    await consumer.stop()
        if not stopping():
            await asyncio.sleep(RETRY_SECONDS)
