"""How long one message takes from an acknowledged produce to a waiting consumer on the embedded broker, for
several values of the consumer's ``fetch_max_wait_ms`` (faust fixes it at 1,500 ms). Messages are sent one at
a time, each after the previous arrived and a pause, so every one meets a consumer already waiting.

    .venv/bin/python -m bench.broker_fetch_wait [--messages N]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from bench.common import Result, engines
from videogen_common.topics import Topics, ensure_topics

WAITS_MS = (1500, 500, 100)
PAUSE_S = 0.13


async def one_wait(kafka: str, wait_ms: int, messages: int) -> Result:
    topics = Topics(f"wait{wait_ms}.")
    await ensure_topics(kafka, topics, 2)
    consumer = AIOKafkaConsumer(
        topics.requested,
        bootstrap_servers=kafka,
        group_id=f"bench-wait-{wait_ms}",
        auto_offset_reset="earliest",
        fetch_max_wait_ms=wait_ms,
    )
    producer = AIOKafkaProducer(bootstrap_servers=kafka, enable_idempotence=False)
    await consumer.start()
    await producer.start()
    try:
        await producer.send_and_wait(topics.requested, b"join", key=b"0")
        await consumer.getone()  # joined, assigned, and fetching
        latencies = []
        started = time.perf_counter()
        for n in range(messages):
            sent = time.perf_counter()
            await producer.send_and_wait(topics.requested, b"x", key=str(n).encode())
            await consumer.getone()
            latencies.append((time.perf_counter() - sent) * 1000)
            await asyncio.sleep(PAUSE_S)
        return Result(
            f"fetch_max_wait_ms={wait_ms}: produce → consume",
            messages,
            time.perf_counter() - started,
            latencies,
        )
    finally:
        await producer.stop()
        await consumer.stop()


async def run(messages: int) -> list[Result]:
    with tempfile.TemporaryDirectory(prefix="vg-bench-") as tmp:
        async with engines(Path(tmp)) as urls:
            return [await one_wait(urls.kafka, wait, messages) for wait in WAITS_MS]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--messages", type=int, default=40)
    args = parser.parse_args()
    for result in asyncio.run(run(args.messages)):
        print(
            f"{result.name:<45} p50 {result.pct(0.5):7.1f} ms   p99 {result.pct(0.99):7.1f} ms"
            f"   (n={result.count})"
        )


if __name__ == "__main__":
    main()
