"""A rolling restart of every service under load loses nothing and fails no request.

The local stack runs as processes: two api processes behind a balancer that stands in for a Kubernetes Service
(it routes only to backends whose ``/readyz`` answers 200 and never retries), one orchestrator, one notifier,
and a customer's webhook receiver. While client loops create and read generations through the balancer for the
whole test, each service process is replaced the way a Deployment with maxSurge 1 / maxUnavailable 0 does it:
start the new process, wait until it is ready, SIGTERM the old one, and require it to exit 0 within its bound.

Then: no client request failed (every create 202, every read 200), every generation created is terminal, and
each one's webhook arrived with valid signatures and the event its outcome calls for."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections import Counter
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest

from tests.support.balancer import Balancer
from tests.support.pipeline import Receiver, verify
from tests.support.services import ServiceProcess, wait_http_ok
from tests.support.stack import generate, subscribe
from videogen.engines import free_port
from videogen.keys import create_key
from videogen.migrate import migrate
from videogen_common.settings import CommonSettings
from videogen_common.store import Store

pytestmark = pytest.mark.e2e

# Creating loops create, read back and list, then pause. Reading loops read far more often, so that requests
# reach an api that stopped accepting too early.
CREATING_LOOPS = 3
CREATE_PAUSE_S = 0.4
READING_LOOPS = 2
READ_PAUSE_S = 0.05
# Every fifth generation asks the mock provider to fail, so both outcomes are delivered.
FAIL_EVERY = 5
DRAIN_S = 1.0
SHUTDOWN_TIMEOUT_S = 5.0
# An old process must exit 0 within its drain and shutdown bound, plus this for releasing its connections.
EXIT_MARGIN_S = 5.0
DELIVERY_TIMEOUT_S = 90.0


class Load:
    """Client loops through the balancer, each on its own keep-alive session, until stopped. Records every
    request that did not get its expected answer."""

    def __init__(self, base: str, key: str) -> None:
        self.base = base
        self.key = key
        self.created: dict[str, bool] = {}  # generation id → whether it was asked to fail
        self.answered: Counter[str] = Counter()  # "POST 202", "GET 200", …
        self.failures: list[str] = []
        self._stopping = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._number = 0

    @property
    def ok(self) -> int:
        return sum(self.answered.values()) - len(self.failures)

    def start(self) -> None:
        self._tasks = [asyncio.create_task(self._creating()) for _ in range(CREATING_LOOPS)]
        self._tasks += [asyncio.create_task(self._reading()) for _ in range(READING_LOOPS)]

    async def stop(self) -> None:
        self._stopping.set()
        await asyncio.gather(*self._tasks)

    async def _creating(self) -> None:
        async with aiohttp.ClientSession() as session:
            while not self._stopping.is_set():
                self._number += 1
                fails = self._number % FAIL_EVERY == 0
                # One prompt: the mock provider renders it once and serves the rest from its render cache.
                prompt = "a rolling restart" + (" #fail" if fails else "")
                created = await self._call(
                    session,
                    "POST",
                    "/v1/generate",
                    202,
                    {"prompt": prompt, "provider": "mock", "duration": 3},
                )
                if created is not None:
                    self.created[created["id"]] = fails
                    await self._call(session, "GET", f"/v1/generations/{created['id']}", 200)
                await self._call(session, "GET", "/v1/generations?limit=5", 200)
                await self._pause(CREATE_PAUSE_S)

    async def _reading(self) -> None:
        async with aiohttp.ClientSession() as session:
            while not self._stopping.is_set():
                await self._call(session, "GET", "/v1/generations?limit=5", 200)
                if self.created:
                    await self._call(session, "GET", f"/v1/generations/{next(reversed(self.created))}", 200)
                await self._pause(READ_PAUSE_S)

    async def _pause(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), seconds)

    async def _call(
        self, session: aiohttp.ClientSession, method: str, path: str, expected: int, body: Any = None
    ) -> Any:
        try:
            async with session.request(
                method, self.base + path, json=body, headers={"Authorization": f"Bearer {self.key}"}
            ) as response:
                status, text = response.status, await response.text()
        except (aiohttp.ClientError, TimeoutError) as exc:
            self.answered[f"{method} error"] += 1
            self.failures.append(f"{method} {path}: {exc!r}")
            return None
        self.answered[f"{method} {status}"] += 1
        if status != expected:
            self.failures.append(f"{method} {path}: {status} {text[:300]}")
            return None
        return orjson.loads(text)


class Stack:
    """The processes of the test's stack, named by service, each started in its own log folder."""

    def __init__(self, env: dict[str, str], logs: Path) -> None:
        self.env = env
        self.logs = logs
        self.processes: list[ServiceProcess] = []

    async def start(self, name: str, **env: str) -> ServiceProcess:
        number = sum(p.name == name for p in self.processes) + 1
        process = ServiceProcess(name, {**self.env, **env}, self.logs / f"{name}-{number}")
        self.processes.append(process)
        await process.start()
        return process

    async def stop_all(self) -> None:
        await asyncio.gather(*(p.stop(signal.SIGKILL) for p in self.processes))


async def terminated(process: ServiceProcess, bound: float) -> None:
    """SIGTERM, as the kubelet sends it, and require exit code 0 within ``bound`` seconds."""
    assert process.proc is not None
    process.proc.send_signal(signal.SIGTERM)
    try:
        code = await asyncio.wait_for(process.proc.wait(), bound)
    except TimeoutError:
        raise AssertionError(f"{process.name} still running {bound}s after SIGTERM") from None
    assert code == 0, f"{process.name} exited with {code}:\n{await process.output()}"


async def test_rolling_restart_of_every_service_under_load_fails_no_request_and_loses_nothing(
    base_env: dict[str, str],
    common_settings: CommonSettings,
    store: Store,
    receiver: Receiver,
    tmp_path: Path,
) -> None:
    await migrate(common_settings)
    key = await create_key(store, "acme")
    balancer = Balancer(probe_interval=0.1)
    base = await balancer.start()
    stack = Stack(
        {
            **base_env,
            "VIDEOGEN_PUBLIC_BASE_URL": base,
            "VIDEOGEN_SHUTDOWN_DRAIN_SECONDS": str(DRAIN_S),
            "VIDEOGEN_SHUTDOWN_TIMEOUT_SECONDS": str(SHUTDOWN_TIMEOUT_S),
        },
        tmp_path / "logs",
    )
    load = Load(base, key)

    async def api() -> tuple[ServiceProcess, str]:
        port = free_port()
        process = await stack.start("api", VIDEOGEN_API_PORT=str(port))
        url = f"http://127.0.0.1:{port}"
        balancer.add(url)
        await wait_http_ok(f"{url}/healthz", process)  # fails fast, with its log, if the process dies
        await balancer.ready(url)
        return process, url

    async def worker(name: str) -> ServiceProcess:
        # Each process its own probe port, as each pod has its own address.
        port = free_port()
        process = await stack.start(name, **{f"VIDEOGEN_{name.upper()}_PORT": str(port)})
        await wait_http_ok(f"http://127.0.0.1:{port}/readyz", process, timeout=60)
        return process

    async def roll_api(old: ServiceProcess, old_url: str) -> tuple[ServiceProcess, str]:
        new, new_url = await api()
        before = load.ok
        await asyncio.gather(
            terminated(old, DRAIN_S + SHUTDOWN_TIMEOUT_S + EXIT_MARGIN_S),
            balancer.unready(old_url),  # its readiness probe saw it draining
        )
        await balancer.remove(old_url)
        assert load.ok > before, "no request completed while the api was replaced"
        return new, new_url

    async def roll_worker(old: ServiceProcess) -> ServiceProcess:
        new = await worker(old.name)
        before = load.ok
        await terminated(old, SHUTDOWN_TIMEOUT_S + EXIT_MARGIN_S)
        assert load.ok > before, f"no request completed while the {old.name} was replaced"
        return new

    try:
        (api_1, url_1), (api_2, url_2) = await asyncio.gather(api(), api())
        orchestrator, notifier = await asyncio.gather(worker("orchestrator"), worker("notifier"))
        async with aiohttp.ClientSession() as session:
            hook = await subscribe(session, base, key, receiver.url, ["video.completed", "video.failed"])
            # Warm-up: one delivery shows both workers joined their consumer groups before anything restarts.
            status, warm = await generate(session, base, key, "warm")
            assert status == 202
            await asyncio.wait_for(receiver.expect(warm["id"]), 60)

        load.start()
        replaced = [url_1, url_2]
        api_1, url_1 = await roll_api(api_1, url_1)
        api_2, url_2 = await roll_api(api_2, url_2)
        orchestrator = await roll_worker(orchestrator)
        notifier = await roll_worker(notifier)
        await load.stop()

        assert load.failures == [], f"{len(load.failures)} failed requests: {load.failures[:10]}"
        assert load.answered["POST 202"] == len(load.created) > 0
        assert set(load.answered) == {"POST 202", "GET 200"}
        assert balancer.errors == []
        # Every api process answered part of the load: the two replaced and the two that replaced them.
        assert all(balancer.served[url] > 0 for url in [*replaced, url_1, url_2]), balancer.served

        loop = asyncio.get_running_loop()
        deadline = loop.time() + DELIVERY_TIMEOUT_S
        for generation_id, fails in load.created.items():
            headers, body = await asyncio.wait_for(
                receiver.expect(generation_id), max(deadline - loop.time(), 0.1)
            )
            verify(hook["secret"], headers, body)
            payload = orjson.loads(body)
            assert payload["event"] == ("video.failed" if fails else "video.completed")
        final = {
            doc["_id"]: doc["status"]
            async for doc in store.generations.find({"_id": {"$in": list(load.created)}}, {"status": 1})
        }
        assert final == {
            generation_id: "failed" if fails else "completed" for generation_id, fails in load.created.items()
        }

        # The new processes are as healthy as the old were: they stop cleanly too.
        await asyncio.gather(
            *(
                terminated(process, DRAIN_S + SHUTDOWN_TIMEOUT_S + EXIT_MARGIN_S)
                for process in (api_1, api_2, orchestrator, notifier)
            )
        )
    finally:
        await load.stop()
        await stack.stop_all()
        await balancer.stop()
