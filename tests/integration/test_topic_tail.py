"""``videogen_common.topic_tail``: how the api's status feed and the orchestrator's callback feed read their
topics, against a broker of the test's own behind a link the test cuts (``tests.support.partition``)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from tests.support.partition import partitioned_broker
from tests.support.waiting import eventually
from videogen_common.topic_tail import follow_from_end

TOPIC = "tail"


async def _make_topic(bootstrap: str) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(TOPIC, num_partitions=3, replication_factor=1)])
    finally:
        await admin.close()


async def _send(bootstrap: str, *values: bytes) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=False)
    await producer.start()
    try:
        for n, value in enumerate(values):
            await producer.send_and_wait(TOPIC, value, key=str(n).encode())
    finally:
        await producer.stop()


class Follower:
    """``follow_from_end`` run in a task, keeping what it was handed."""

    def __init__(self, bootstrap: str) -> None:
        self.seen: list[bytes | None] = []
        self.ready = asyncio.Event()
        self._stopping = False
        self._task = asyncio.create_task(
            follow_from_end(
                bootstrap,
                TOPIC,
                lambda key, value: self.seen.append(value),
                ready=self.ready,
                stopping=lambda: self._stopping,
                fetch_wait_ms=20,
                unread="the test's topic not read",
            )
        )

    async def reading(self) -> None:
        async with asyncio.timeout(30):
            await self.ready.wait()

    async def got(self, *values: bytes) -> None:
        async def arrived() -> bool:
            return all(value in self.seen for value in values)

        await eventually(arrived, timeout=30, what=f"{values} handed over")

    async def stop(self) -> None:
        self._stopping = True
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)


async def test_a_topic_is_read_from_its_end_once_it_exists_and_again_after_the_broker_was_cut_off(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with partitioned_broker(tmp_path / "broker") as link:
        early = Follower(link.address)
        late: Follower | None = None
        try:
            # No topic yet: it says so, is not ready, and tries again until there is one.
            async def said_unread() -> bool:
                return any(r.getMessage() == "the test's topic not read" for r in caplog.records)

            await eventually(said_unread, timeout=30, what="the missing topic logged")
            assert not early.ready.is_set()
            await _make_topic(link.address)
            await early.reading()

            # From the end: what was sent before a follower read is not handed to it.
            await _send(link.address, b"before")
            await early.got(b"before")
            late = Follower(link.address)
            await late.reading()
            await _send(link.address, b"after")
            await late.got(b"after")
            assert b"before" not in late.seen

            # Every connection reset: it reads again once the broker can be reached, and a record sent after
            # that arrives.
            link.refuse()
            await link.until(lambda it: it.open_connections() == 0, 10, "the followers' connections reset")
            link.heal()
            await early.reading()
            await _send(link.address, b"again")
            await early.got(b"again")
        finally:
            await early.stop()
            if late is not None:
                await late.stop()
