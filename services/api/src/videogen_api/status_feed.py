"""The status events this api process reads, for the requests that wait on a generation here (``Prefer:
wait``): every replica reads the whole status topic itself, from its end (no consumer group, nothing
committed), and hands each event to whoever waits on its generation in this process. A waiting request costs
a queue in memory, not a store query held open: it reads the generation once when it starts waiting, and again
only if no event reached it for ``RECHECK_SECONDS`` (an event published while this process was not reading
the topic, or the broker away), so it never waits past a change it could not hear of for longer than that."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.errors import KafkaError

from videogen_common.domain import TERMINAL, Status
from videogen_common.events import Envelope, EnvelopeError
from videogen_common.generations import public_view

log = logging.getLogger(__name__)

Doc = dict[str, Any]
Change = tuple[int | None, Doc]  # a generation's version and its public view then
# A waiter that heard nothing for this long reads the generation again.
RECHECK_SECONDS = 5.0
RETRY_SECONDS = 2.0
STOP_SECONDS = 5.0
# Events queued for one waiter beyond this are dropped: it catches up from the store.
QUEUE_LIMIT = 64


class StatusFeed:
    def __init__(self, bootstrap: str, topic: str) -> None:
        self._bootstrap = bootstrap
        self._topic = topic
        self._waiters: dict[str, set[asyncio.Queue[Envelope | None]]] = {}
        self._released = False
        self._stopping = False
        self._task: asyncio.Task[None] | None = None
        # Set once this process reads every partition of the topic from its end (what tests await).
        self.ready = asyncio.Event()

    @property
    def released(self) -> bool:
        return self._released

    @property
    def waiting(self) -> int:
        return sum(len(queues) for queues in self._waiters.values())

    def start(self) -> None:
        self._task = asyncio.create_task(self._follow(), name="status-feed")

    async def stop(self) -> None:
        self.release()
        self._stopping = True  # the loop ends even if a Kafka call swallowed the cancellation
        if self._task is not None:
            self._task.cancel()
            # Bounded: a consumer caught half-started may not stop cleanly; the process is going anyway.
            done, _ = await asyncio.wait({self._task}, timeout=STOP_SECONDS)
            if not done:
                log.warning("status feed did not stop in time; left behind")

    def release(self) -> None:
        """Shutting down: every waiter answers now with what it has, and later ones do not wait."""
        self._released = True
        for queues in self._waiters.values():
            for queue in queues:
                with contextlib.suppress(asyncio.QueueFull):
                    queue.put_nowait(None)

    @contextlib.contextmanager
    def watch(self, generation_id: str) -> Iterator[asyncio.Queue[Envelope | None]]:
        """The status events of ``generation_id`` that arrive while the block runs (None: released)."""
        queue: asyncio.Queue[Envelope | None] = asyncio.Queue(QUEUE_LIMIT)
        self._waiters.setdefault(generation_id, set()).add(queue)
        try:
            yield queue
        finally:
            queues = self._waiters.get(generation_id)
            if queues is not None:
                queues.discard(queue)
                if not queues:
                    del self._waiters[generation_id]

    async def changes(
        self, generation_id: str, read: Callable[[], Awaitable[Doc | None]]
    ) -> AsyncGenerator[Change, None]:
        """The generation as ``read`` finds it (the stored document), then as each status event of it reports
        it, until it is terminal or this feed is released: (version, public view) pairs. After
        ``RECHECK_SECONDS`` with no event it is read again and given again (unchanged, maybe: a consumer
        keeps what is newer). Nothing if ``read`` finds none."""
        with self.watch(generation_id) as queue:
            doc = await read()  # after watching: a change from now on is heard
            if doc is None:
                return
            change = doc["version"], public_view(doc)
            while True:
                yield change
                if Status(change[1]["status"]) in TERMINAL or self._released:
                    return
                try:
                    async with asyncio.timeout(RECHECK_SECONDS):
                        envelope = await queue.get()
                except TimeoutError:
                    doc = await read()  # a change this process did not hear of, if any
                    if doc is None:
                        return
                    change = doc["version"], public_view(doc)
                    continue
                if envelope is None:  # released
                    return
                change = envelope.version, envelope.generation  # the public view at that event

    async def until_terminal(
        self, generation_id: str, read: Callable[[], Awaitable[Doc | None]], seconds: float
    ) -> Doc | None:
        """The generation's public view once it is terminal, or as it is after ``seconds``, whichever comes
        first; None if ``read`` finds none."""
        view: Doc | None = None
        with contextlib.suppress(TimeoutError):
            async with (
                asyncio.timeout(seconds),
                contextlib.aclosing(self.changes(generation_id, read)) as changes,
            ):
                async for change in changes:
                    view = change[1]
        return view

    async def _follow(self) -> None:
        while not self._stopping:
            consumer = AIOKafkaConsumer(
                bootstrap_servers=self._bootstrap,
                group_id=None,  # every partition, read by this process alone
                auto_offset_reset="latest",
                enable_auto_commit=False,
                fetch_max_wait_ms=100,
            )
            try:
                await consumer.start()
                await consumer.topics()  # the cluster's metadata, this topic's partitions in it
                partitions = consumer.partitions_for_topic(self._topic)
                if not partitions:
                    raise KafkaError(f"topic {self._topic} not found yet")
                consumer.assign([TopicPartition(self._topic, p) for p in sorted(partitions)])
                await consumer.seek_to_end()
                self.ready.set()
                while not self._stopping:
                    batches = await consumer.getmany(timeout_ms=1000)
                    for records in batches.values():
                        for record in records:
                            self._hand_over(record.key, record.value)
            except KafkaError as exc:
                log.warning(
                    "status feed not reading (broker unreachable, or no topic yet); waiters read the store",
                    extra={"error": repr(exc), "retry_seconds": RETRY_SECONDS},
                )
            finally:
                self.ready.clear()
                with contextlib.suppress(KafkaError, TimeoutError):
                    async with asyncio.timeout(STOP_SECONDS):
                        await consumer.stop()
            if not self._stopping:
                await asyncio.sleep(RETRY_SECONDS)

    def _hand_over(self, key: bytes | None, value: bytes | None) -> None:
        if key is None or value is None:
            return
        queues = self._waiters.get(key.decode(errors="replace"))
        if not queues:
            return  # nobody here waits on it: not even parsed
        try:
            envelope = Envelope.from_json(value)
        except EnvelopeError:
            return
        for queue in queues:
            with contextlib.suppress(asyncio.QueueFull):
                queue.put_nowait(envelope)
