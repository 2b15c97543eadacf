"""The provider callbacks' wake-ups this instance reads: every partition of the callbacks topic, from its end
(no consumer group, nothing committed: the generation may run on any instance), each handed to the
``TaskWatch``, which drops those for generations not running here. A wake-up missed (the broker away, this
instance starting) costs its generation a safety-net poll, no more."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.errors import KafkaError

from videogen_common.provider_callbacks import WakeUp

log = logging.getLogger(__name__)

RETRY_SECONDS = 2.0
STOP_SECONDS = 5.0
# The longest a fetch waits for a wake-up: the broker may hold a fetch this long before answering with one
# that has arrived (measured with the bench's broker: 21 ms from a task's end to its wake-up at 100 ms, 11 ms
# at 20 ms); idle, it costs each instance ~50 small fetches a second.
FETCH_WAIT_MS = 20


class CallbackFeed:
    def __init__(self, bootstrap: str, topic: str, on_wake: Callable[[WakeUp], object]) -> None:
        self._bootstrap = bootstrap
        self._topic = topic
        self._on_wake = on_wake
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        # Set while it reads the topic (its partitions assigned, positioned at their end).
        self.ready = asyncio.Event()

    def start(self) -> None:
        self._task = asyncio.create_task(self._follow(), name="provider-callback-feed")

    async def stop(self) -> None:
        self._stopping = True
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _follow(self) -> None:
        while not self._stopping:
            consumer = AIOKafkaConsumer(
                bootstrap_servers=self._bootstrap,
                group_id=None,  # every partition, read by this instance alone
                auto_offset_reset="latest",
                enable_auto_commit=False,
                fetch_max_wait_ms=FETCH_WAIT_MS,
            )
            try:
                await consumer.start()
                await consumer.topics()
                partitions = consumer.partitions_for_topic(self._topic)
                if not partitions:
                    raise KafkaError(f"topic {self._topic} not found yet")
                consumer.assign([TopicPartition(self._topic, p) for p in sorted(partitions)])
                assigned = [TopicPartition(self._topic, p) for p in sorted(partitions)]
                await consumer.seek_to_end()
                for partition in assigned:  # the end resolved now: nothing sent from here on is skipped
                    await consumer.position(partition)
                self.ready.set()
                while not self._stopping:
                    batches = await consumer.getmany(timeout_ms=1000)
                    for records in batches.values():
                        for record in records:
                            wake = WakeUp.from_json(record.value) if record.value is not None else None
                            if wake is not None:
                                self._on_wake(wake)
            except KafkaError as exc:
                log.warning(
                    "not reading provider callbacks (broker unreachable, or no topic yet); tasks are polled",
                    extra={"error": repr(exc), "retry_seconds": RETRY_SECONDS},
                )
            finally:
                self.ready.clear()
                with contextlib.suppress(KafkaError, TimeoutError):
                    async with asyncio.timeout(STOP_SECONDS):
                        await consumer.stop()
            if not self._stopping:
                await asyncio.sleep(RETRY_SECONDS)
