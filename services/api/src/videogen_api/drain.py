"""Draining before shutdown. Once it starts, readiness answers 503 (so load balancers stop sending new
requests) while the api keeps serving, and every response asks its client to close the connection, so a
keep-alive client reconnects, through the balancer, to another instance instead of reusing this one.

It also keeps the requests in flight: each from its first byte handled to its last byte written (a body still
arriving, a media file still streaming), so shutdown can wait for exactly those, and cut off what outlasts the
bound. aiohttp's own shutdown closes every connection first, which drops the rest of a body still arriving."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from aiohttp import hdrs, web


class Drain:
    """Whether this api instance is shutting down (set once, never cleared), and its requests in flight."""

    def __init__(self) -> None:
        self._draining = False
        self._requests: set[asyncio.Task[Any]] = set()
        self._idle = asyncio.Event()
        self._idle.set()

    @property
    def draining(self) -> bool:
        return self._draining

    @property
    def in_flight(self) -> int:
        return len(self._requests)

    def start(self) -> None:
        self._draining = True

    def track(self) -> None:
        """Count the current request in flight (``middleware.request_middleware`` calls it first). aiohttp
        runs each request in its own task, which ends once the response is written; the task's done-callback
        is the request leaving flight."""
        task = asyncio.current_task()
        if task is not None and task not in self._requests:
            self._requests.add(task)
            self._idle.clear()
            task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._requests.discard(task)
        if not self._requests:
            self._idle.set()

    async def on_response_prepare(self, _: web.Request, response: web.StreamResponse) -> None:
        # aiohttp has already chosen the Connection header when this hook runs: set it here as well as
        # closing the connection once the response is written.
        if self._draining:
            response.force_close()
            response.headers[hdrs.CONNECTION] = "close"

    async def finish(self, timeout: float) -> int:
        """Wait up to ``timeout`` seconds for the requests in flight (including any that arrive meanwhile on
        open connections), then cancel whatever is left; returns how many were cut off."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._idle.wait(), timeout)
        left = list(self._requests)
        for task in left:
            task.cancel()
        if left:
            await asyncio.wait(left, timeout=1.0)
        return len(left)
