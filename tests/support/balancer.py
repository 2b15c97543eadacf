"""A load balancer standing in for a Kubernetes Service in front of api pods: a small reverse proxy on
127.0.0.1 that probes each backend's ``/readyz`` every ``probe_interval`` seconds (as a readiness probe does)
and forwards each request, round robin, to a backend whose last probe answered 200.

It is honest about failures: it never retries (a Service does not). A request it cannot forward, or whose
backend drops it, answers 502 (or 503 with no ready backend), so the client sees every failure. Backends come
and go as pods do: the test adds a new one before it is ready and removes an old one once its process exited;
in between, only readiness decides."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections import Counter
from dataclasses import dataclass, field

import aiohttp
from aiohttp import hdrs, web
from multidict import CIMultiDict

from videogen.engines import free_port

# Headers for one hop only (RFC 9110 §7.6.1), and those the proxy recomputes.
HOP_BY_HOP = frozenset(
    h.lower()
    for h in (
        hdrs.CONNECTION,
        hdrs.KEEP_ALIVE,
        hdrs.PROXY_AUTHENTICATE,
        hdrs.PROXY_AUTHORIZATION,
        hdrs.TE,
        hdrs.TRAILER,
        hdrs.TRANSFER_ENCODING,
        hdrs.UPGRADE,
        hdrs.HOST,
        hdrs.CONTENT_LENGTH,
    )
)


@dataclass
class Backend:
    url: str
    ready: bool = False
    became_ready: asyncio.Event = field(default_factory=asyncio.Event)
    became_unready: asyncio.Event = field(default_factory=asyncio.Event)
    probe: asyncio.Task[None] | None = None


class Balancer:
    def __init__(self, *, probe_interval: float = 0.1, probe_timeout: float = 1.0) -> None:
        self.probe_interval = probe_interval
        self.probe_timeout = probe_timeout
        self.backends: dict[str, Backend] = {}
        self.served: Counter[str] = Counter()  # backend URL → requests it answered
        self.errors: list[str] = []  # why each request the balancer answered itself (502/503) failed
        self._turn = itertools.count()
        self._runner: web.AppRunner | None = None
        self._upstream: aiohttp.ClientSession | None = None
        self.url = ""

    async def start(self, port: int | None = None) -> str:
        # Keep-alive connections to the backends, as an L7 balancer keeps; no decompression, bodies pass as
        # they are. aiohttp's client silently resends an idempotent request once when a reused connection
        # drops; a Service does not, so that is switched off (as aiohttp's own test client does).
        self._upstream = aiohttp.ClientSession(auto_decompress=False)
        self._upstream._retry_connection = False
        app = web.Application(client_max_size=16 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._forward)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        port = port or free_port()
        await web.TCPSite(self._runner, "127.0.0.1", port).start()
        self.url = f"http://127.0.0.1:{port}"
        return self.url

    async def stop(self) -> None:
        for url in list(self.backends):
            await self.remove(url)
        if self._runner is not None:
            await self._runner.cleanup()
        if self._upstream is not None:
            await self._upstream.close()

    def add(self, url: str) -> None:
        """A new endpoint (a pod scheduled): probed from now on, sent traffic once ready."""
        backend = Backend(url)
        backend.probe = asyncio.create_task(self._probe(backend))
        self.backends[url] = backend

    async def remove(self, url: str) -> None:
        """The endpoint is gone (its pod deleted)."""
        backend = self.backends.pop(url)
        if backend.probe is not None:
            backend.probe.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await backend.probe

    async def ready(self, url: str, timeout: float = 30.0) -> None:
        await asyncio.wait_for(self.backends[url].became_ready.wait(), timeout)

    async def unready(self, url: str, timeout: float = 30.0) -> None:
        await asyncio.wait_for(self.backends[url].became_unready.wait(), timeout)

    async def _probe(self, backend: Backend) -> None:
        assert self._upstream is not None
        timeout = aiohttp.ClientTimeout(total=self.probe_timeout)
        while True:
            try:
                async with self._upstream.get(f"{backend.url}/readyz", timeout=timeout) as answer:
                    ready = answer.status == 200
            except (aiohttp.ClientError, TimeoutError):
                ready = False
            if ready and not backend.ready:
                backend.became_ready.set()
            if backend.ready and not ready:
                backend.became_unready.set()
            backend.ready = ready
            await asyncio.sleep(self.probe_interval)

    def _pick(self) -> Backend | None:
        ready = [b for b in self.backends.values() if b.ready]
        return ready[next(self._turn) % len(ready)] if ready else None

    async def _forward(self, request: web.Request) -> web.StreamResponse:
        assert self._upstream is not None
        backend = self._pick()
        if backend is None:
            self.errors.append(f"{request.method} {request.rel_url}: no ready backend")
            return web.Response(status=503, text="no ready backend")
        headers = CIMultiDict((k, v) for k, v in request.headers.items() if k.lower() not in HOP_BY_HOP)
        body = await request.read()
        try:
            async with self._upstream.request(
                request.method,
                f"{backend.url}{request.rel_url}",
                headers=headers,
                data=body or None,
                allow_redirects=False,
            ) as answer:
                payload = await answer.read()
                self.served[backend.url] += 1
                return web.Response(
                    status=answer.status,
                    body=payload,
                    headers=CIMultiDict(
                        (k, v) for k, v in answer.headers.items() if k.lower() not in HOP_BY_HOP
                    ),
                )
        except (aiohttp.ClientError, TimeoutError) as exc:
            self.errors.append(f"{request.method} {request.rel_url} via {backend.url}: {exc!r}")
            return web.Response(status=502, text=f"upstream {backend.url} failed: {exc!r}")
