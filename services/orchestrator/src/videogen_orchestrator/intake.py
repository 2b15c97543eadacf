"""The intake of low-priority requests: started in the background, in turn by account, so that a batch's
thousands of items never stand between another tenant's request and its start.

The agent takes one request message at a time, and starting one (its lease, its route re-checked, its
admission: most often a place in line) costs a few store round trips. A batch's items (``priority: low``)
arrive as thousands of messages at once; started one by one where they arrive, they would hold every
request behind them on their partitions for as long as that takes (minutes, for 10,000 on a loaded
machine), however fairly admission shares the provider afterwards. So the agent hands a low-priority
request to this intake and goes on: normal and high requests are started at once, as before, and the
intake waits while they are (as while a generation chosen from the line for a freed slot is started:
``first``). The intake starts what it was handed one at a time, taking the accounts in turn (one
account's batch does not hold back another's low-priority work either), and acknowledges each message once
its generation is started (or found started, or finished): a message handed over but not started when the
instance stops stays uncommitted, and the partition's next owner gets it again (a duplicate request is
harmless).

While a generation waits here it is ``processing`` and unleased, as a request not yet read is; the
reconciler leaves the ones this instance holds here alone (``holds``) rather than claim them past the
dispatch grace one by one in its pass."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

log = logging.getLogger(__name__)

# Starts the generation; False if it is not started here (finished, leased elsewhere, this instance stopping).
Start = Callable[[str], Awaitable[bool]]
# Acknowledges the generation's request message.
Acknowledge = Callable[[], Awaitable[Any]]


class Intake:
    def __init__(self, start: Start, stopping: Callable[[], bool]) -> None:
        self._start = start
        self._stopping = stopping
        # Each account's requests in the order they came, and the accounts in turn (each once while it has
        # requests here).
        self._queues: dict[str, deque[str]] = {}
        self._turns: deque[str] = deque()
        # The generations held here, each with its request messages' acknowledgements (a duplicate request
        # adds one).
        self._held: dict[str, list[Acknowledge]] = {}
        self._ready = asyncio.Event()
        # Starts that go first (``first``): how many run now, and set while none does.
        self._first = 0
        self._clear = asyncio.Event()
        self._clear.set()
        self._worker: asyncio.Task[None] | None = None

    def __len__(self) -> int:
        return len(self._held)

    def holds(self, generation_id: str) -> bool:
        """Whether the generation's request waits here to be started."""
        return generation_id in self._held

    def put(self, account_id: str, generation_id: str, acknowledge: Acknowledge) -> None:
        """Start the generation in the account's turn, then ``acknowledge`` its request."""
        held = self._held.get(generation_id)
        if held is not None:  # a duplicate of one waiting here: acknowledged with it
            held.append(acknowledge)
            return
        queue = self._queues.get(account_id)
        if queue is None:
            queue = self._queues[account_id] = deque()
            self._turns.append(account_id)
        queue.append(generation_id)
        self._held[generation_id] = [acknowledge]
        self._ready.set()
        if self._worker is None:
            self._worker = asyncio.create_task(self._work(), name="intake")

    @contextlib.contextmanager
    def first(self) -> Iterator[None]:
        """Around a start that goes before the intake's (a normal or high request's, one chosen from the
        line for a freed slot): the intake starts nothing new meanwhile, so that its store round trips do not
        slow this one down."""
        self._first += 1
        self._clear.clear()
        try:
            yield
        finally:
            self._first -= 1
            if self._first == 0:
                self._clear.set()

    def _next(self) -> str | None:
        """The first generation of the account whose turn it is (which goes to the back of the turns)."""
        if not self._turns:
            return None
        account_id = self._turns.popleft()
        queue = self._queues[account_id]
        taken = queue.popleft()
        if queue:
            self._turns.append(account_id)
        else:
            del self._queues[account_id]
        return taken

    async def _work(self) -> None:
        while not self._stopping():
            await self._clear.wait()
            generation_id = self._next()
            if generation_id is None:
                self._ready.clear()
                await self._ready.wait()
                continue
            try:
                await self._start(generation_id)
            except Exception:
                # Acknowledged all the same: an unleased generation is the reconciler's past the grace.
                log.exception(
                    "a low-priority request could not be started", extra={"generation_id": generation_id}
                )
            acknowledgements = self._held.pop(generation_id, [])
            if self._stopping():
                return  # unacknowledged: the partition's next owner gets it
            for acknowledge in acknowledgements:
                try:
                    await acknowledge()
                except Exception:
                    log.exception(
                        "a request could not be acknowledged", extra={"generation_id": generation_id}
                    )

    async def stop(self) -> None:
        """Start nothing more; what waits here stays unacknowledged."""
        if self._worker is not None:
            self._worker.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._worker
