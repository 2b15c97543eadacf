"""Reading a topic from its start in tests, as a probe: no consumer group (nothing to join, which under load
can take longer than one fetch waits), every partition assigned and read from offset 0."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition

Record = Any  # aiokafka's ConsumerRecord: topic, partition, offset, key, value, headers


async def topic_records(
    bootstrap: str,
    topic: str,
    until: Callable[[list[Record]], bool] | None = None,
    *,
    timeout: float = 60.0,
) -> list[Record]:
    """The records on ``topic`` from its start: until ``until(records)`` holds (for a message another task
    or process publishes, perhaps still on its way), or, without ``until``, up to the end offsets as they are
    when called. An ``AssertionError`` if that is not reached after ``timeout`` seconds."""
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    await consumer.start()
    found: list[Record] = []
    try:
        async with asyncio.timeout(timeout):
            await consumer.topics()  # the cluster's metadata, the topic's partitions with it
            partitions = [
                TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or ())
            ]
            assert partitions, f"no topic {topic}"
            consumer.assign(partitions)
            await consumer.seek_to_beginning(*partitions)
            ends = await consumer.end_offsets(partitions)

            async def done() -> bool:
                if until is not None:
                    return until(found)
                return all([await consumer.position(tp) >= end for tp, end in ends.items()])

            while not await done():
                for records in (await consumer.getmany(timeout_ms=1000)).values():
                    found += records
    except TimeoutError:
        raise AssertionError(
            f"not read after {timeout:g} s from {topic}: {len(found)} records so far"
        ) from None
    finally:
        await consumer.stop()
    return found
