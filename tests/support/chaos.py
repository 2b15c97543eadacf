"""For the chaos soaks: a customer's webhook receiver that records every request (``Endpoint``), and
(``ChaosStack``) the whole system as separate processes — its own broker and store, the api, two
orchestrators, the notifier, a fake Runway and a fake Luma — with a link of ``tests.support.partition`` on the
paths a soak cuts:

- ``store``: the first orchestrator's only way to the store (the others reach it directly);
- ``broker``: every client's way to the broker (it advertises the link), the api's connections named ``api``;
- ``runway``: every orchestrator's way to Runway's API (Luma stays reachable, to route around it);
- a receiver's, made by ``receiver_link``: the notifier's way to that endpoint.

Every process can be killed with SIGKILL and is started again at once, as a supervisor would
(``kill_and_restart``; a service that exits on its own is started again too); a killed broker loses its
topics (it keeps them in memory), which are made again, as `videogen dev` does."""

from __future__ import annotations

import asyncio
import os
import random
import secrets
import signal
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import orjson
from aiohttp import web

from tests.support.engines import EngineProcess
from tests.support.env import settings_for
from tests.support.fake_providers.luma import FakeLuma
from tests.support.fake_providers.runway import FakeRunway
from tests.support.load import QUICK_REPAIRS
from tests.support.partition import Link, advertised_broker_spec, port_of, through
from tests.support.services import ServiceProcess, wait_http_ok
from videogen.engines import free_port, mongo_url, secantus_spec
from videogen.migrate import migrate
from videogen_common.settings import CommonSettings
from videogen_common.store import Store, connect


@dataclass
class Endpoint:
    """A customer's receiver on 127.0.0.1: records every request; a flaky one answers 503 to some. ``url``
    is where it listens; ``registered`` the URL its webhook names (a link's, when the soak can cut it)."""

    account: str
    flaky: bool
    rng: random.Random
    requests: list[tuple[dict[str, str], bytes, int]] = field(default_factory=list)
    url: str = ""
    registered: str = ""
    secret: str = ""
    port: int = 0
    runner: web.AppRunner | None = None

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.read()
        status = 503 if self.flaky and self.rng.random() < 0.3 else 200
        self.requests.append((dict(request.headers), body, status))
        return web.Response(status=status)

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/hook", self.handle)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        self.port = free_port()
        await web.TCPSite(self.runner, "127.0.0.1", self.port).start()
        self.url = self.registered = f"http://127.0.0.1:{self.port}/hook"

    async def stop(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()

    def delivered(self) -> set[str]:
        """Generations whose delivery this endpoint answered with 200."""
        return {orjson.loads(body)["data"]["id"] for _, body, status in self.requests if status == 200}


# The orchestrators: the first reaches the store only through the ``store`` link.
ORCHESTRATORS = ("orch-a", "orch-b")


@dataclass
class Kill:
    """A process killed (SIGKILL) at ``at``, started again at ``started``."""

    name: str
    at: datetime
    started: datetime


class ChaosStack:
    """See the module. ``env`` is added to every service's environment (over ``QUICK_REPAIRS``)."""

    def __init__(self, workdir: Path, env: dict[str, str]) -> None:
        self.workdir = workdir
        self.logs = workdir / "logs"
        self.extra_env = env
        self.store_port = free_port()
        self.broker_port = free_port()
        self.api_port = free_port()
        self.tag = secrets.token_hex(4)
        self.kills: list[Kill] = []
        self.links: dict[str, Link] = {}
        self.services: dict[str, ServiceProcess] = {}
        self._supervisors: list[asyncio.Task[None]] = []
        self._restarted: dict[str, asyncio.Event] = {}
        self._stack = AsyncExitStack()
        self._store_engine: EngineProcess | None = None
        self._broker_engine: EngineProcess | None = None
        self.runway: FakeRunway
        self.luma: FakeLuma
        self.key = ""
        self.store: Store

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.api_port}"

    def settings(self) -> CommonSettings:
        return settings_for(CommonSettings, self.env(direct=True))

    def env(self, *, direct: bool) -> dict[str, str]:
        """A service's environment; ``direct``: the store reached directly, else through its link."""
        store_url = mongo_url(self.store_port)
        if not direct:
            store_url = through(self.links["store"], store_url)
        runway, luma = self.runway, self.luma
        return {
            **QUICK_REPAIRS,
            "VIDEOGEN_KAFKA_BOOTSTRAP": self.links["broker"].address,
            "VIDEOGEN_MONGO_URL": store_url,
            "VIDEOGEN_MONGO_DB": f"chaos_{self.tag}",
            "VIDEOGEN_TOPIC_PREFIX": f"c{self.tag}.",
            # The broker's own default: killed, the in-memory broker forgets its topics, and a client's
            # metadata request makes each again with the broker's default of 4 partitions before the
            # restart's migrate can make it with ours. With 2, producers spread keys over 4 partitions while
            # the consumer groups read the 2 they joined with until their metadata refresh (minutes): events
            # on the other two went unread past the soak's convergence bound (27 generations' events, once in
            # six runs).
            "VIDEOGEN_TOPIC_PARTITIONS": "4",
            "VIDEOGEN_DATA_DIR": str(self.workdir / "data"),
            "VIDEOGEN_ORCHESTRATOR_GROUP": f"orch-{self.tag}",
            "VIDEOGEN_NOTIFIER_GROUP": f"notif-{self.tag}",
            "VIDEOGEN_API_PORT": str(self.api_port),
            "VIDEOGEN_PUBLIC_BASE_URL": self.base,
            "VIDEOGEN_WEBHOOK_ALLOW_HTTP": "true",
            "VIDEOGEN_WEBHOOK_ALLOW_CIDRS": "127.0.0.0/8",
            "VIDEOGEN_SHUTDOWN_DRAIN_SECONDS": "0",
            "VIDEOGEN_PROVIDERS": "runway,luma",
            "VIDEOGEN_RUNWAY_API_KEY": runway.api_key,
            "VIDEOGEN_RUNWAY_BASE_URL": through(self.links["runway"], runway.base_url),
            "VIDEOGEN_RUNWAY_POLL_INTERVAL_SECONDS": "0",
            "VIDEOGEN_LUMA_API_KEY": luma.api_key,
            "VIDEOGEN_LUMA_BASE_URL": luma.base_url,
            **self.extra_env,
        }

    # -- starting and stopping ----------------------------------------------------------------------------

    async def __aenter__(self) -> ChaosStack:
        try:
            await self._start()
        except BaseException:
            await self.__aexit__(None, None, None)
            raise
        return self

    async def _start(self) -> None:
        self.logs.mkdir(parents=True, exist_ok=True)
        stack = self._stack
        self.runway = await stack.enter_async_context(FakeRunway(task_seconds=1.0))
        self.luma = await stack.enter_async_context(FakeLuma(task_seconds=1.0))
        for name, port in (
            ("store", self.store_port),
            ("broker", self.broker_port),
            ("runway", port_of(self.runway.base_url)),
        ):
            link = Link(port, name=name)
            await link.start()
            stack.push_async_callback(link.stop)
            self.links[name] = link
        self._store_engine = EngineProcess(
            await asyncio.to_thread(secantus_spec, self.store_port, self.workdir / "store"),
            self.logs / "store.log",
        )
        self._broker_engine = EngineProcess(
            await asyncio.to_thread(advertised_broker_spec, self.broker_port, self.links["broker"].port),
            self.logs / "broker.log",
        )
        for engine in (self._broker_engine, self._store_engine):  # stopped after the services (LIFO)
            stack.push_async_callback(_stopped, engine)
        await asyncio.to_thread(self._store_engine.start)
        await asyncio.to_thread(self._broker_engine.start)
        await migrate(self.settings())
        client, self.store = connect(mongo_url(self.store_port), f"chaos_{self.tag}", app_name="chaos-test")
        stack.push_async_callback(client.close)
        stack.push_async_callback(self._stop_services)
        services = {
            "api": ServiceProcess("api", self.env(direct=True), self.logs / "api"),
            "notifier": ServiceProcess(
                "notifier",
                {**self.env(direct=True), "VIDEOGEN_NOTIFIER_PORT": str(free_port())},
                self.logs / "notifier",
            ),
        }
        for n, instance in enumerate(ORCHESTRATORS):
            env = {
                **self.env(direct=n != 0),
                "VIDEOGEN_ORCHESTRATOR_INSTANCE": instance,
                "VIDEOGEN_ORCHESTRATOR_PORT": str(free_port()),
            }
            services[instance] = ServiceProcess("orchestrator", env, self.logs / instance)
        self.services = services
        await asyncio.gather(*(self._start_service(name) for name in services))
        for name in services:
            self._restarted[name] = asyncio.Event()
            self._supervisors.append(asyncio.create_task(self._supervise(name)))

    async def __aexit__(self, *exc: object) -> None:
        await self._stack.aclose()

    async def _stop_services(self) -> None:
        for task in self._supervisors:
            task.cancel()
        await asyncio.gather(*self._supervisors, return_exceptions=True)
        await asyncio.gather(*(p.stop(signal.SIGKILL) for p in self.services.values()))

    async def _supervise(self, name: str) -> None:
        """Start ``name`` again whenever it exits, at once (as Kubernetes would, without its backoff)."""
        process = self.services[name]
        while True:
            assert process.proc is not None
            await process.proc.wait()
            await process.start()
            await self._name(name)
            self._restarted[name].set()

    async def _name(self, name: str) -> None:
        """Tell the api's connections to the broker apart from the others' (the broker link's party)."""
        process = self.services[name]
        if name == "api" and process.proc is not None:
            await self.links["broker"].name(process.proc.pid, "api")

    def _url(self, name: str, path: str) -> str:
        process = self.services[name]
        port = self.api_port if name == "api" else int(process.env[f"VIDEOGEN_{process.name.upper()}_PORT"])
        return f"http://127.0.0.1:{port}{path}"

    async def _start_service(self, name: str, *, ready: bool = True) -> None:
        """Start ``name``; return once it is ready (``/readyz``: a worker has joined its consumer group), or
        only alive (``/healthz``) unless ``ready``."""
        process = self.services[name]
        await process.start()
        await self._name(name)
        await wait_http_ok(self._url(name, "/readyz" if ready else "/healthz"), process, 60)

    async def kill_and_restart(self, name: str) -> None:
        """SIGKILL ``name`` (a service by its name here, ``broker`` or ``store``); it is started again at
        once, as a supervisor would. Returns once it was started (a service may still be starting: the soak
        goes on meanwhile)."""
        at = datetime.now(UTC)
        if name in ("broker", "store"):
            engine = self._broker_engine if name == "broker" else self._store_engine
            assert engine is not None
            await asyncio.to_thread(engine.stop, kill=True)
            await asyncio.to_thread(engine.start)
            if name == "broker":
                await migrate(self.settings())  # its topics were in memory
        else:
            process = self.services[name]
            assert process.proc is not None
            restarted = self._restarted[name] = asyncio.Event()
            os.killpg(process.proc.pid, signal.SIGKILL)
            await asyncio.wait_for(restarted.wait(), 30)
        self.kills.append(Kill(name, at, datetime.now(UTC)))

    # -- receivers ----------------------------------------------------------------------------------------

    async def receiver_link(self, endpoint: Endpoint) -> Link:
        """A link in front of ``endpoint``: the URL its webhook is registered with becomes the link's."""
        link = Link(endpoint.port, name=f"receiver {endpoint.account}")
        await link.start()
        self._stack.push_async_callback(link.stop)
        endpoint.registered = endpoint.url.replace(f":{endpoint.port}/", f":{link.port}/")
        self.links[f"receiver {endpoint.account}"] = link
        return link


async def _stopped(engine: EngineProcess) -> None:
    await asyncio.to_thread(engine.stop, kill=True)
