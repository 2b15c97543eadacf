"""The provider callbacks' wake-ups this instance reads: every partition of the callbacks topic, from its end
(no consumer group, nothing committed: the generation may run on any instance), each handed to the
``TaskWatch``, which drops those for generations not running here. A wake-up missed (the broker away, this
instance starting) costs its generation a safety-net poll, no more."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from videogen_common.provider_callbacks import WakeUp
from videogen_common.topic_tail import follow_from_end

log = logging.getLogger(__name__)

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
        await follow_from_end(
            self._bootstrap,
            self._topic,
            self._hand_over,
            ready=self.ready,
            stopping=lambda: self._stopping,
            fetch_wait_ms=FETCH_WAIT_MS,
            unread="not reading provider callbacks (broker unreachable, or no topic yet); tasks are polled",
        )

    def _hand_over(self, key: bytes | None, value: bytes | None) -> None:
        wake = WakeUp.from_json(value) if value is not None else None
        if wake is not None:
            self._on_wake(wake)
