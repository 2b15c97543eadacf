"""The status events this api process reads, for the requests that wait on a generation here (``Prefer:
wait``): every replica reads the whole status topic itself, from its end (no consumer group, nothing
committed), and hands each event to whoever waits on its generation in this process. A waiting request costs
a queue in memory, not a store query held open: it reads the generation once when it starts waiting; after
that, every ``recheck_seconds`` the feed reads every generation waited on here in one query (per 500) and
hands each waiter its generation as stored, so a change it could not hear of (an event published while this
process was not reading the topic, or the broker away) reaches it that much later at most, and a thousand idle
waiters cost the store one query every few seconds, not a thousand."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.errors import KafkaError

from videogen_common.domain import TERMINAL, Status
from videogen_common.events import Envelope, EnvelopeError
from videogen_common.records.generation import GenerationRecord

log = logging.getLogger(__name__)

Doc = dict[str, Any]
Change = tuple[int | None, Doc]  # a generation's version and its public view then
Key = tuple[int, int]  # (version, progress; -1 when unknown): orders one generation's changes
ReadMany = Callable[[list[str]], AsyncIterator[GenerationRecord]]
# How often the generations waited on are read again, all at once, and the most read by one query.
RECHECK_SECONDS = 5.0
RECHECK_BATCH = 500
RETRY_SECONDS = 2.0
STOP_SECONDS = 5.0
# Events queued for one waiter beyond this are dropped: it catches up from the store.
QUEUE_LIMIT = 64


def change_key(change: Change) -> Key:
    version, view = change
    progress = view.get("progress")
    return (version or 0, progress if isinstance(progress, int) else -1)


class StatusFeed:
    def __init__(
        self, bootstrap: str, topic: str, read_many: ReadMany, *, recheck_seconds: float = RECHECK_SECONDS
    ) -> None:
        """``read_many(ids)``: the stored generations of these ids (those that exist)."""
        self._bootstrap = bootstrap
        self._topic = topic
        self._read_many = read_many
        self._recheck_seconds = recheck_seconds
        self._waiters: dict[str, set[asyncio.Queue[Change | None]]] = {}
        self._released = False
        self._stopping = False
        self._tasks: list[asyncio.Task[None]] = []
        # Set once this process reads every partition of the topic from its end (what tests await).
        self.ready = asyncio.Event()

    @property
    def released(self) -> bool:
        return self._released

    @property
    def waiting(self) -> int:
        return sum(len(queues) for queues in self._waiters.values())

    def start(self) -> None:
        self._tasks = [
            asyncio.create_task(self._follow(), name="status-feed"),
            asyncio.create_task(self._recheck(), name="status-feed-recheck"),
        ]

    async def stop(self) -> None:
        self.release()
        self._stopping = True  # the loop ends even if a Kafka call swallowed the cancellation
        if self._tasks:
            for task in self._tasks:
                task.cancel()
            # Bounded: a consumer caught half-started may not stop cleanly; the process is going anyway.
            _, pending = await asyncio.wait(self._tasks, timeout=STOP_SECONDS)
            if pending:
                log.warning("status feed did not stop in time; left behind")

    def release(self) -> None:
        """Shutting down: every waiter answers now with what it has, and later ones do not wait."""
        self._released = True
        for queues in self._waiters.values():
            for queue in queues:
                with contextlib.suppress(asyncio.QueueFull):
                    queue.put_nowait(None)

    @contextlib.contextmanager
    def watch(self, generation_id: str) -> Iterator[asyncio.Queue[Change | None]]:
        """The changes of ``generation_id`` heard or read while the block runs (None: released)."""
        queue: asyncio.Queue[Change | None] = asyncio.Queue(QUEUE_LIMIT)
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
        self, generation_id: str, read: Callable[[], Awaitable[GenerationRecord | None]]
    ) -> AsyncGenerator[Change, None]:
        """The generation as ``read`` finds it (the stored record), then each newer state of it heard of
        (a status event) or read (the recheck), until it is terminal or this feed is released: (version,
        public view) pairs, each newer than the one before. With nothing newer for ``recheck_seconds`` the
        last one is given again (a stream's cue for a keep-alive). Nothing if ``read`` finds none."""
        with self.watch(generation_id) as queue:
            record = await read()  # after watching: a change from now on is heard
            if record is None:
                return
            current: Change = record.version, record.public_view()
            while True:
                yield current
                if Status(current[1]["status"]) in TERMINAL or self._released:
                    return
                try:
                    async with asyncio.timeout(self._recheck_seconds):
                        change = await queue.get()
                        while change is not None and change_key(change) <= change_key(current):
                            change = await queue.get()  # nothing new
                except TimeoutError:
                    continue
                if change is None:  # released
                    return
                current = change

    async def until_terminal(
        self, generation_id: str, read: Callable[[], Awaitable[GenerationRecord | None]], seconds: float
    ) -> Doc | None:
        """The generation's public view once it is terminal, or as it is after ``seconds``, whichever comes
        first; None if ``read`` finds none."""
        view: Doc | None = None
        with contextlib.suppress(TimeoutError):
            async with (
                asyncio.timeout(seconds),
                contextlib.aclosing(self.changes(generation_id, read)) as changes,
            ):
                async for _version, view in changes:  # noqa: B007 — the last one is the answer
                    pass
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
        self._offer(envelope.generation_id, (envelope.version, envelope.generation))

    def _offer(self, generation_id: str, change: Change) -> None:
        for queue in self._waiters.get(generation_id, ()):
            with contextlib.suppress(asyncio.QueueFull):  # it catches up at the next recheck
                queue.put_nowait(change)

    async def _recheck(self) -> None:
        """Every ``recheck_seconds``: every generation waited on here, read in one query per
        ``RECHECK_BATCH``, handed to its waiters (who keep only what is newer than what they have)."""
        while not self._stopping:
            await asyncio.sleep(self._recheck_seconds)
            ids = list(self._waiters)
            for start in range(0, len(ids), RECHECK_BATCH):
                try:
                    async for record in self._read_many(ids[start : start + RECHECK_BATCH]):
                        self._offer(record.id, (record.version, record.public_view()))
                except Exception as exc:  # the store away: the waiters wait on, and this tries again
                    log.warning("could not read the generations waited on", extra={"error": repr(exc)})
                    break
