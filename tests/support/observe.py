"""Following one generation through the running services: the JSON lines each wrote about it, and the
headers of the Kafka records it led to."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import orjson
from aiokafka import AIOKafkaConsumer

from tests.support.stack import Stack

Entry = dict[str, Any]


async def log_entry(
    stack: Stack, service: str, match: Callable[[Entry], bool], timeout: float = 30.0
) -> Entry:
    """The first JSON line of the service's log that ``match`` accepts; waits for it to be written (a log file
    offers no event to await)."""
    process = stack.services[service]
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        for line in (await process.output()).splitlines():
            start = line.find("{")  # after any terminal control codes the worker printed
            if start >= 0:
                entry: Entry = orjson.loads(line[start:])
                if match(entry):
                    return entry
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"no such line in the {service} log:\n{await process.output()}")
        await asyncio.sleep(0.1)


async def headers_of(bootstrap: str, topic: str, key: bytes) -> list[dict[str, bytes]]:
    """The headers of every record on ``topic`` keyed ``key``, read from the start."""
    consumer = AIOKafkaConsumer(
        topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest", enable_auto_commit=False
    )
    await consumer.start()
    try:
        batches = await consumer.getmany(timeout_ms=3000)
        return [dict(r.headers) for records in batches.values() for r in records if r.key == key]
    finally:
        await consumer.stop()
