"""Liveness, readiness and metrics over HTTP. ``/healthz`` answers while the process runs; ``/readyz`` runs
the service's readiness checks (each bounded) and answers 503 naming what failed; ``/metrics`` exposes the
process's Prometheus registry. The api serves these on its own port; the worker services, which have no HTTP
surface of their own, serve them on a small side server (``WorkerProbes``)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import orjson
from aiohttp import web
from aiokafka.admin import AIOKafkaAdminClient
from prometheus_client import CollectorRegistry

from videogen_common.metrics import CONTENT_TYPE_LATEST, ConsumerLag, exposition
from videogen_common.store import Store

log = logging.getLogger(__name__)

# A readiness check: returns when the dependency is usable, raises (``NotReady`` with a reason, or whatever
# the client raised) when it is not.
Check = Callable[[], Awaitable[object]]
CHECK_TIMEOUT_SECONDS = 2.0

OK = "ok"


class NotReady(Exception):
    """A readiness check's failure, with the reason ``/readyz`` shows."""


async def run_checks(checks: Mapping[str, Check], timeout: float = CHECK_TIMEOUT_SECONDS) -> dict[str, str]:
    """Run every check at once, each bounded by ``timeout``; ``"ok"`` or ``"error: …"`` by name."""

    async def one(check: Check) -> str:
        try:
            await asyncio.wait_for(check(), timeout)
        except NotReady as exc:
            return f"error: {exc}"
        except TimeoutError:
            return f"error: no answer within {timeout:g}s"
        except Exception as exc:
            return f"error: {exc.__class__.__name__}"
        return OK

    names = list(checks)
    results = await asyncio.gather(*(one(checks[name]) for name in names))
    return dict(zip(names, results, strict=True))


def store_check(store: Store) -> Check:
    """The store answers a ping."""
    return lambda: store.db.command("ping")


def all_ok(results: Mapping[str, str]) -> bool:
    return all(value == OK for value in results.values())


def json_answer(body: object, status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(body), status=status, content_type="application/json")


def readiness_answer(results: Mapping[str, str]) -> web.Response:
    ready = all_ok(results)
    return json_answer(
        {"status": "ok" if ready else "unavailable", "checks": dict(results)}, status=200 if ready else 503
    )


async def metrics_answer(registry: CollectorRegistry) -> web.Response:
    # In a thread: the process collector reads /proc files, which must not block the event loop.
    body = await asyncio.to_thread(exposition, registry)
    return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})


def probe_app(checks: Callable[[], Mapping[str, Check]], registry: CollectorRegistry) -> web.Application:
    """``/healthz``, ``/readyz`` (running ``checks()``, built per request so it sees the current state) and
    ``/metrics``."""

    async def healthz(_: web.Request) -> web.Response:
        return json_answer({"status": "ok"})

    async def readyz(_: web.Request) -> web.Response:
        return readiness_answer(await run_checks(checks()))

    async def metrics(_: web.Request) -> web.Response:
        return await metrics_answer(registry)

    app = web.Application()
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/metrics", metrics)
    return app


class ProbeServer:
    """A side HTTP server for probes and metrics. Port 0 picks a free port (``port`` tells which once
    started); a port already taken fails the start with ``OSError``, so a worker never runs unseen."""

    def __init__(self, app: web.Application, host: str, port: int) -> None:
        self._app = app
        self._host = host
        self._requested_port = port
        self._runner: web.AppRunner | None = None
        self.port: int | None = None

    async def start(self) -> None:
        runner = web.AppRunner(self._app, access_log=None, shutdown_timeout=1.0)
        await runner.setup()
        site = web.TCPSite(runner, self._host, self._requested_port)
        try:
            await site.start()
        except BaseException:
            await runner.cleanup()
            raise
        self._runner = runner
        self.port = int(runner.addresses[0][1])
        log.info("probes and metrics served", extra={"host": self._host, "port": self.port})

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None


class BrokerCheck:
    """The broker answers a metadata request on a connection of this check's own (opened at the first check,
    so a broker down at start-up only makes the service unready), and the topics the service needs exist.

    Opening that connection is a task of the check's own, not of the probe that started it: a probe that
    runs out of time leaves it going, and the next probe waits on the same one, so a broker slower to answer
    than one probe's limit is still reached (rather than a new connection begun and dropped each time). A
    connect that failed is begun again by the next probe."""

    def __init__(self, bootstrap: str, topics: list[str]) -> None:
        self._bootstrap = bootstrap
        self._topics = topics
        self._admin: AIOKafkaAdminClient | None = None
        self._opening: asyncio.Task[AIOKafkaAdminClient] | None = None

    async def __call__(self) -> None:
        admin = self._admin if self._admin is not None else await self._opened()
        existing = set(await admin.list_topics())
        missing = [topic for topic in self._topics if topic not in existing]
        if missing:
            raise NotReady(f"topic {', '.join(missing)} does not exist (run the migration)")

    async def _opened(self) -> AIOKafkaAdminClient:
        if self._opening is None or self._opening.done():
            # Overlapping probes wait on one connect, not one each.
            self._opening = asyncio.create_task(self._open())
            self._opening.add_done_callback(_retrieved)
        return await asyncio.shield(self._opening)

    async def _open(self) -> AIOKafkaAdminClient:
        admin = AIOKafkaAdminClient(bootstrap_servers=self._bootstrap, request_timeout_ms=5000)
        try:
            await admin.start()
        except BaseException:
            await admin.close()
            raise
        self._admin = admin
        return admin

    async def close(self) -> None:
        opening, self._opening = self._opening, None
        if opening is not None and not opening.done():
            opening.cancel()
            with contextlib.suppress(BaseException):
                await opening
        if self._admin is not None:
            await self._admin.close()
            self._admin = None


def _retrieved(task: asyncio.Task[AIOKafkaAdminClient]) -> None:
    """A connect's failure is the probes'; none is left for the loop to log as never retrieved."""
    if not task.cancelled():
        task.exception()


class WorkerProbes:
    """What a worker service (a faust app plus its runtime) serves on its side port: ``/readyz`` is ready once
    the runtime has started, the store answers, the broker answers and has the service's topics, and the
    consumer has joined its group (been given its partitions, however many); ``/metrics`` carries the
    service's registry plus the consumer's lag."""

    def __init__(
        self,
        *,
        host: str,
        port: int,
        registry: CollectorRegistry,
        kafka_bootstrap: str,
        topics: list[str],
        started: Callable[[], bool],
    ) -> None:
        self.registry = registry
        self.store: Store | None = None
        self.joined: bool | None = None  # None: no consumer followed (a runtime run without its faust app)
        self._runtime_started = started
        self._broker = BrokerCheck(kafka_bootstrap, topics)
        self._server = ProbeServer(probe_app(self.checks, registry), host, port)

    @property
    def port(self) -> int | None:
        return self._server.port

    def watch(self, app: Any) -> None:
        """Follow a faust app: its group membership (for readiness) and its consumer lag (for metrics)."""
        self.joined = False
        app.on_partitions_assigned.connect(self._on_assigned)
        self.registry.register(ConsumerLag(app))

    async def _on_assigned(self, *_: Any, **__: Any) -> None:
        self.joined = True

    def checks(self) -> dict[str, Check]:
        checks: dict[str, Check] = {"runtime": self._runtime, "store": self._store, "broker": self._broker}
        if self.joined is not None:
            checks["consumer"] = self._consumer
        return checks

    async def _runtime(self) -> None:
        if not self._runtime_started():
            raise NotReady("not started, or stopping")

    async def _store(self) -> None:
        if self.store is None:
            raise NotReady("not connected yet")
        await store_check(self.store)()

    async def _consumer(self) -> None:
        if not self.joined:
            raise NotReady("has not joined its consumer group yet")

    async def start(self) -> None:
        await self._server.start()

    async def stop(self) -> None:
        await self._server.stop()
        await self._broker.close()
