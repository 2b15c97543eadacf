"""The status events this api process reads, for the requests that wait on a generation here (``Prefer:
wait``, event streams): every replica reads the whole status topic itself, from its end (no consumer group,
nothing committed), and hands each event to whoever waits on its generation in this process.

A waiter costs a few hundred bytes and no timer: an event stream may be one of 10,000 open in this process.
The feed's own two ticking tasks do what would otherwise take a timer per waiter, each spreading its work over
its period so that no moment does it for every waiter at once:

- the recheck: every ``recheck_seconds`` each generation waited on here is read again, so a change it could
  not hear of (an event published while this process was not reading the topic, or the broker away) reaches
  its waiters that much later at most. The generations are shared out among ``RECHECK_SLOTS`` slots, one
  slot read per tick, with one query per 500 that fetches only each generation's version and progress; only
  those changed since what was handed out are read in full;
- the cues (``changes(..., cues=True)``): every ``cue_seconds`` a waiter that asked for them is told that
  nothing newer came (a stream's moment for a keep-alive), the waiters shared out among ``CUE_SLOTS``
  slots.

Its ``read`` reads one generation together with every other asked for in the same moment (one query per
``RECHECK_BATCH``): thousands of streams opening at once cost the store a few queries, not one each."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

from videogen_common.domain import TERMINAL, Status
from videogen_common.events import Envelope, EnvelopeError
from videogen_common.records.generation import GenerationRecord
from videogen_common.topic_tail import follow_from_end

log = logging.getLogger(__name__)

Doc = dict[str, Any]
Change = tuple[int | None, Doc]  # a generation's version and its public view then
Key = tuple[int, int]  # (version, progress; -1 when unknown): orders one generation's changes
ReadMany = Callable[[list[str]], AsyncIterator[GenerationRecord]]
ReadKeys = Callable[[list[str]], Awaitable[dict[str, Key]]]
# How often the generations waited on are read again, in how many slots, and the most read by one query.
RECHECK_SECONDS = 5.0
RECHECK_SLOTS = 10
RECHECK_BATCH = 500
# How often a waiter that asked for cues gets one (an event stream's keep-alive), in how many slots.
CUE_SECONDS = 15.0
CUE_SLOTS = 30
STOP_SECONDS = 5.0
# Changes held for one waiter beyond this: the oldest are dropped (the newest is always kept).
QUEUE_LIMIT = 64
_NONE: Key = (-1, -1)


def change_key(change: Change) -> Key:
    version, view = change
    progress = view.get("progress")
    return (version or 0, progress if isinstance(progress, int) else -1)


class _Released(Exception):
    """The feed was released while a waiter slept."""


class _Waiter:
    """One request waiting on a generation: the changes handed to it and not yet taken, whether a cue came,
    and the future it sleeps on (set only while it sleeps)."""

    __slots__ = ("changes", "cued", "wake")

    def __init__(self) -> None:
        self.changes: deque[Change] | None = None
        self.cued = False
        self.wake: asyncio.Future[None] | None = None

    def offer(self, change: Change) -> None:
        if self.changes is None:
            self.changes = deque(maxlen=QUEUE_LIMIT)
        self.changes.append(change)
        self.rouse()

    def cue(self) -> None:
        self.cued = True
        self.rouse()

    def rouse(self) -> None:
        if self.wake is not None and not self.wake.done():
            self.wake.set_result(None)


class _Watched:
    """A generation waited on here: its waiters, the newest key handed to them (or read by them), and its
    recheck slot."""

    __slots__ = ("known", "slot", "waiters")

    def __init__(self, slot: int) -> None:
        self.waiters: set[_Waiter] = set()
        self.known: Key = _NONE
        self.slot = slot


class _Slots:
    """Members shared out round-robin among ``count`` slots, one slot visited per tick."""

    def __init__(self, count: int) -> None:
        self.members: list[set[Any]] = [set() for _ in range(count)]
        self._next = 0

    def add(self, member: Any) -> int:
        slot = self._next
        self._next = (slot + 1) % len(self.members)
        self.members[slot].add(member)
        return slot


class StatusFeed:
    def __init__(
        self,
        bootstrap: str,
        topic: str,
        read_many: ReadMany,
        read_keys: ReadKeys,
        *,
        recheck_seconds: float = RECHECK_SECONDS,
        cue_seconds: float = CUE_SECONDS,
    ) -> None:
        """``read_many(ids)``: the stored generations of these ids (those that exist); ``read_keys(ids)``:
        only their keys."""
        self._bootstrap = bootstrap
        self._topic = topic
        self._read_many = read_many
        self._read_keys = read_keys
        self._recheck_seconds = recheck_seconds
        self._cue_seconds = cue_seconds
        self._watched: dict[str, _Watched] = {}
        self._rechecks = _Slots(RECHECK_SLOTS)  # generation ids
        self._cues = _Slots(CUE_SLOTS)  # waiters that asked for cues
        self._reads: dict[str, list[asyncio.Future[GenerationRecord | None]]] = {}  # asked for, not read yet
        self._reading: set[asyncio.Task[None]] = set()
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
        return sum(len(watched.waiters) for watched in self._watched.values())

    def start(self) -> None:
        self._tasks = [
            asyncio.create_task(self._follow(), name="status-feed"),
            asyncio.create_task(self._recheck(), name="status-feed-recheck"),
            asyncio.create_task(self._cue(), name="status-feed-cues"),
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
        for watched in self._watched.values():
            for waiter in watched.waiters:
                waiter.rouse()

    @contextlib.contextmanager
    def _watch(self, generation_id: str, *, cues: bool) -> Iterator[_Waiter]:
        waiter = _Waiter()
        watched = self._watched.get(generation_id)
        if watched is None:
            watched = self._watched[generation_id] = _Watched(self._rechecks.add(generation_id))
        watched.waiters.add(waiter)
        cue_slot = self._cues.add(waiter) if cues else None
        try:
            yield waiter
        finally:
            if cue_slot is not None:
                self._cues.members[cue_slot].discard(waiter)
            watched.waiters.discard(waiter)
            if not watched.waiters:
                del self._watched[generation_id]
                self._rechecks.members[watched.slot].discard(generation_id)

    async def _next(self, waiter: _Waiter) -> Change | None:
        """The next change handed to ``waiter``, or None for a cue; raises ``_Released``."""
        while not self._released:
            if waiter.changes:
                return waiter.changes.popleft()
            if waiter.cued:
                waiter.cued = False
                return None
            waiter.wake = asyncio.get_running_loop().create_future()
            try:
                await waiter.wake
            finally:
                waiter.wake = None
        raise _Released

    async def changes(
        self,
        generation_id: str,
        read: Callable[[], Awaitable[GenerationRecord | None]],
        *,
        cues: bool = False,
    ) -> AsyncGenerator[Change | None, None]:
        """The generation as ``read`` finds it (the stored record), then each newer state of it heard of
        (a status event) or read (the recheck), until it is terminal or this feed is released: (version,
        public view) pairs, each newer than the one before. With ``cues``, also None every ``cue_seconds``
        (at a moment spread among this process's waiters): nothing newer came, a stream's cue for a
        keep-alive. Nothing if ``read`` finds none."""
        with self._watch(generation_id, cues=cues) as waiter:
            record = await read()  # after watching: a change from now on is heard
            if record is None:
                return
            current: Change = record.version, record.public_view()
            key = change_key(current)
            self._saw(generation_id, key)
            yield current
            terminal = Status(current[1]["status"]) in TERMINAL
            del current  # an idle stream holds its generation's key, not its view
            while not terminal:
                try:
                    change = await self._next(waiter)
                except _Released:
                    return
                if change is None:
                    yield None
                elif (changed := change_key(change)) > key:
                    key = changed
                    yield change
                    terminal = Status(change[1]["status"]) in TERMINAL

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
                async for change in changes:
                    if change is not None:
                        view = change[1]  # the last one is the answer
        return view

    async def read(self, generation_id: str) -> GenerationRecord | None:
        """The stored generation (None if there is none), read with the others asked for meanwhile."""
        loop = asyncio.get_running_loop()
        found: asyncio.Future[GenerationRecord | None] = loop.create_future()
        if not self._reads:
            loop.call_soon(self._read_asked)  # once this moment's requests have all asked
        self._reads.setdefault(generation_id, []).append(found)
        return await found

    def _read_asked(self) -> None:
        asked, self._reads = self._reads, {}
        ids = list(asked)
        for start in range(0, len(ids), RECHECK_BATCH):
            batch = {i: asked[i] for i in ids[start : start + RECHECK_BATCH]}
            task = asyncio.create_task(self._read_batch(batch), name="status-feed-read")
            self._reading.add(task)
            task.add_done_callback(self._reading.discard)

    async def _read_batch(self, asked: dict[str, list[asyncio.Future[GenerationRecord | None]]]) -> None:
        try:
            stored = {record.id: record async for record in self._read_many(list(asked))}
        except Exception as exc:  # each reader raises it, as its own query would have
            for futures in asked.values():
                for found in futures:
                    if not found.done():
                        found.set_exception(exc)
            return
        for generation_id, futures in asked.items():
            for found in futures:
                if not found.done():  # not cancelled meanwhile
                    found.set_result(stored.get(generation_id))

    def _saw(self, generation_id: str, key: Key) -> None:
        watched = self._watched.get(generation_id)
        if watched is not None and key > watched.known:
            watched.known = key

    async def _follow(self) -> None:
        await follow_from_end(
            self._bootstrap,
            self._topic,
            self._hand_over,
            ready=self.ready,
            stopping=lambda: self._stopping,
            fetch_wait_ms=100,
            unread="status feed not reading (broker unreachable, or no topic yet); waiters read the store",
        )

    def _hand_over(self, key: bytes | None, value: bytes | None) -> None:
        if key is None or value is None:
            return
        if key.decode(errors="replace") not in self._watched:
            return  # nobody here waits on it: not even parsed
        try:
            envelope = Envelope.from_json(value)
        except EnvelopeError:
            return
        self._offer(envelope.generation_id, (envelope.version, envelope.generation))

    def _offer(self, generation_id: str, change: Change) -> None:
        watched = self._watched.get(generation_id)
        if watched is None:
            return
        key = change_key(change)
        watched.known = max(watched.known, key)
        for waiter in watched.waiters:
            waiter.offer(change)

    async def _recheck(self) -> None:
        """One slot of the generations waited on here per tick, every slot once per ``recheck_seconds``:
        their keys read (one query per ``RECHECK_BATCH``), and those changed since what their waiters were
        handed read in full and handed to them (who keep only what is newer than what they have)."""
        tick = self._recheck_seconds / RECHECK_SLOTS
        for slot in _ticks(RECHECK_SLOTS):
            await asyncio.sleep(tick)
            if self._stopping:
                return
            await self.recheck_slot(slot)

    async def recheck_slot(self, slot: int) -> None:
        """One tick of the recheck: the generations of recheck slot ``slot``."""
        ids = list(self._rechecks.members[slot])
        for start in range(0, len(ids), RECHECK_BATCH):
            try:
                await self._recheck_batch(ids[start : start + RECHECK_BATCH])
            except Exception as exc:  # the store away: the waiters wait on, and this tries again
                log.warning("could not read the generations waited on", extra={"error": repr(exc)})
                return

    async def _recheck_batch(self, ids: list[str]) -> None:
        stored = await self._read_keys(ids)
        ids = [i for i, key in stored.items() if (w := self._watched.get(i)) is not None and key > w.known]
        if not ids:
            return
        async for record in self._read_many(ids):
            self._offer(record.id, (record.version, record.public_view()))

    async def _cue(self) -> None:
        """One slot of the waiters that asked for cues per tick, every slot once per ``cue_seconds``."""
        tick = self._cue_seconds / CUE_SLOTS
        for slot in _ticks(CUE_SLOTS):
            await asyncio.sleep(tick)
            if self._stopping:
                return
            self.cue_slot(slot)

    def cue_slot(self, slot: int) -> None:
        """One tick of the cues: the waiters of cue slot ``slot`` are told nothing newer came."""
        for waiter in self._cues.members[slot]:
            waiter.cue()


def _ticks(slots: int) -> Iterator[int]:
    while True:
        yield from range(slots)
