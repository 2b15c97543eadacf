"""Following one generation through the running services: the JSON lines each wrote about it, and the
headers of the Kafka records it led to."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import orjson

from tests.support.stack import Stack
from tests.support.topic_reads import topic_records

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
    """The headers of every record on ``topic`` keyed ``key``, read from the start to the end it has now
    (one fetch may bring only some partitions, or nothing yet, under load)."""
    return [dict(r.headers) for r in await topic_records(bootstrap, topic) if r.key == key]
