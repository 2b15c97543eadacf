"""Webhook receivers for tests: a real aiohttp server on 127.0.0.1 (port 0) whose answer to each request is
scripted — fail N times then succeed, 410, a redirect, 503 with Retry-After, or hang until the test releases
it. Every request's headers and body are recorded, and a test awaits the k-th one through asyncio events; no
sleeping anywhere."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from aiohttp import web
from multidict import CIMultiDictProxy


@dataclass(frozen=True)
class Reply:
    """One answer: a status and headers, optionally only after the test calls ``Receiver.release``."""

    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    hang: bool = False
    until: asyncio.Event | None = None  # if set: answer only once this event is set (a gate of its own)


OK = Reply(200)
HANG = Reply(200, hang=True)


@dataclass(frozen=True)
class Received:
    """One request as the receiver saw it. ``number`` counts from 1 per receiver."""

    number: int
    method: str
    path: str
    headers: CIMultiDictProxy[str]
    body: bytes


Script = Callable[[Received], Reply]


def replies(*first: Reply, then: Reply = OK) -> Script:
    """Answer the k-th request with ``first[k-1]`` and every later one with ``then``."""

    def script(request: Received) -> Reply:
        return first[request.number - 1] if request.number <= len(first) else then

    return script


def always(reply: Reply) -> Script:
    return replies(then=reply)


def failing(times: int, status: int = 500) -> Script:
    """``times`` answers of ``status``, then 200s."""
    return replies(*[Reply(status)] * times)


def redirecting(location: str, status: int = 302) -> Script:
    return always(Reply(status, {"Location": location}))


def unavailable(retry_after: str) -> Script:
    return always(Reply(503, {"Retry-After": retry_after}))


class Receiver:
    def __init__(self, script: Script | None = None) -> None:
        self.script = script or always(OK)
        self.requests: list[Received] = []
        self.answered = 0
        self._released = asyncio.Event()
        self._arrivals: dict[tuple[str | None, int], asyncio.Event] = {}
        self._arrived = asyncio.Condition()
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=5.0)
        self._port: int | None = None

    async def start(self) -> None:
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self._port = int(self._runner.addresses[0][1])

    async def stop(self) -> None:
        self.release()
        await self._runner.cleanup()

    def url(self, path: str = "/hook") -> str:
        assert self._port is not None, "receiver not started"
        return f"http://127.0.0.1:{self._port}{path}"

    def release(self) -> None:
        """Let every hanging request (and any later one) answer."""
        self._released.set()

    def count(self, path: str | None = None) -> int:
        return sum(1 for r in self.requests if path is None or r.path == path)

    async def request(self, k: int, *, path: str | None = None, timeout: float = 10.0) -> Received:
        """The k-th request (from 1), to any path or to ``path``; waits for it to arrive."""
        await asyncio.wait_for(self._arrival(path, k).wait(), timeout)
        return [r for r in self.requests if path is None or r.path == path][k - 1]

    async def request_where(
        self, match: Callable[[Received], bool], k: int = 1, *, timeout: float = 10.0
    ) -> Received:
        """The k-th request (from 1) for which ``match`` is true; waits for it to arrive."""

        def found() -> list[Received]:
            return [r for r in self.requests if match(r)]

        async with asyncio.timeout(timeout), self._arrived:
            await self._arrived.wait_for(lambda: len(found()) >= k)
        return found()[k - 1]

    def _arrival(self, path: str | None, k: int) -> asyncio.Event:
        return self._arrivals.setdefault((path, k), asyncio.Event())

    async def _handle(self, request: web.Request) -> web.Response:
        body = await request.read()
        received = Received(len(self.requests) + 1, request.method, request.path, request.headers, body)
        self.requests.append(received)
        self._arrival(None, received.number).set()
        self._arrival(received.path, self.count(received.path)).set()
        reply = self.script(received)
        async with self._arrived:  # after the script, so a waiter sees whatever the script recorded
            self._arrived.notify_all()
        if reply.hang:
            await self._released.wait()
        if reply.until is not None:
            await reply.until.wait()
        self.answered += 1
        return web.Response(status=reply.status, headers=dict(reply.headers))


@asynccontextmanager
async def receiving(script: Script | None = None) -> AsyncIterator[Receiver]:
    receiver = Receiver(script)
    await receiver.start()
    try:
        yield receiver
    finally:
        await receiver.stop()
