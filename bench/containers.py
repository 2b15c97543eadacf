"""The stack as containers beside the stack as processes, in one run: how fast each takes generations in
(``POST /v1/generate``) and carries them through (request to ``video.completed`` webhook delivered), and how
long each service takes from start to ready.

    make images        # the images this measures (with a Docker engine that answers)
    .venv/bin/python -m bench.containers [--generations N] [--concurrency C] [--rounds R]

Both stacks — an api, an orchestrator and a notifier each — share the engines (Tansu and SecantusDB processes,
as in the other benchmarks) with a database, topic prefix and consumer groups of their own, and get the same
settings; the only difference is how the three services run: as Python processes from the checkout's venv, or
as the images' containers on the host's network (127.0.0.1, a read-only root, uid 10001, the data directory a
host directory mounted in). Each round sends a burst of N generations to each stack in turn (the order
alternates between rounds), C requests in flight: the creation rate is N over the time until the last ``202``,
the end-to-end rate N over the time from the first request to the last delivery to a receiver in this process.
Every generation asks for the same prompt, so the mock provider's render cache serves all but the first (the
figure is the pipeline's, not video encoding's); the per-account cap and the rate limit are out of the way.
The ratios (containers ÷ processes) are the figures: medians over rounds. CPU per generation of each service,
read from /proc (a container's processes are the host's), says where any difference goes.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import secrets
import statistics
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
import docker  # type: ignore[import-untyped]
import orjson
from aiohttp import web

from bench.common import EngineUrls, closed_loop, cpu_seconds, engines, migrated_store, python_process
from videogen.engines import free_port, wait_for_http
from videogen.keys import create_key

SERVICES = ("api", "orchestrator", "notifier")
PROCESSES, CONTAINERS = "processes", "containers"
BODY = orjson.dumps({"prompt": "a red fox running through fresh snow", "provider": "mock", "duration": 3})
IMAGE_TAG = "dev"


@dataclass
class Stack:
    kind: str
    api: str
    key: str
    hook_path: str  # where its deliveries arrive
    pids: dict[str, int]
    ready_s: dict[str, float]


@dataclass
class Figures:
    create_rate: float
    e2e_rate: float
    cpu_ms: dict[str, float]  # per generation, by service


@dataclass
class Deliveries:
    """The webhook receiver both stacks deliver to: when each generation's delivery arrived, by path."""

    at: dict[str, float] = field(default_factory=dict)
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.read()
        self.at.setdefault(orjson.loads(body)["data"]["id"], time.perf_counter())
        self.changed.set()
        return web.Response(text="ok")

    async def wait_for(self, ids: list[str], timeout: float) -> float:
        async with asyncio.timeout(timeout):
            while any(i not in self.at for i in ids):
                self.changed.clear()
                await self.changed.wait()
        return max(self.at[i] for i in ids)


def _env(urls: EngineUrls, kind: str, ports: dict[str, int], data_dir: str) -> dict[str, str]:
    tag = f"{kind}{secrets.token_hex(3)}"
    return {
        "VIDEOGEN_KAFKA_BOOTSTRAP": urls.kafka,
        "VIDEOGEN_MONGO_URL": urls.mongo,
        "VIDEOGEN_MONGO_DB": tag,
        "VIDEOGEN_TOPIC_PREFIX": f"{tag}.",
        "VIDEOGEN_ORCHESTRATOR_GROUP": f"{tag}-orchestrator",
        "VIDEOGEN_NOTIFIER_GROUP": f"{tag}-notifier",
        "VIDEOGEN_DATA_DIR": data_dir,
        "VIDEOGEN_LOG_LEVEL": "WARNING",
        "VIDEOGEN_API_HOST": "127.0.0.1",
        "VIDEOGEN_ORCHESTRATOR_HOST": "127.0.0.1",
        "VIDEOGEN_NOTIFIER_HOST": "127.0.0.1",
        **{f"VIDEOGEN_{name.upper()}_PORT": str(port) for name, port in ports.items()},
        "VIDEOGEN_RATE_LIMIT_GENERATE_QUOTA": str(1_000_000),
        "VIDEOGEN_ACCOUNT_MAX_IN_FLIGHT": str(100_000),
        "VIDEOGEN_WEBHOOK_ALLOW_HTTP": "true",
        "VIDEOGEN_WEBHOOK_ALLOW_CIDRS": "127.0.0.0/8",
    }


async def _ready(ports: dict[str, int], started: float) -> dict[str, float]:
    """Seconds from ``started`` until each service's /readyz answers 200."""

    async def one(port: int) -> float:
        await wait_for_http(f"http://127.0.0.1:{port}/readyz", timeout=120)
        return time.perf_counter() - started

    return dict(zip(ports, await asyncio.gather(*(one(p) for p in ports.values())), strict=True))


async def _prepared(urls: EngineUrls, workdir: Path, kind: str, data_dir: str) -> tuple[dict[str, str], str]:
    """A stack's environment (its own database, topics, groups and ports), migrated, and an API key."""
    ports = {name: free_port() for name in SERVICES}
    env = _env(urls, kind, ports, data_dir)
    client, store = await migrated_store(
        urls, workdir, env["VIDEOGEN_MONGO_DB"], env["VIDEOGEN_TOPIC_PREFIX"]
    )
    try:
        return env, await create_key(store, "bench")
    finally:
        await client.close()


def _ports(env: dict[str, str]) -> dict[str, int]:
    return {name: int(env[f"VIDEOGEN_{name.upper()}_PORT"]) for name in SERVICES}


@contextlib.asynccontextmanager
async def process_stack(urls: EngineUrls, workdir: Path) -> AsyncIterator[Stack]:
    env, key = await _prepared(urls, workdir, PROCESSES, str(workdir / "process-data"))
    ports = _ports(env)
    async with contextlib.AsyncExitStack() as stack:
        started = time.perf_counter()
        procs = {
            name: await stack.enter_async_context(
                python_process(["-m", f"videogen_{name}.main"], env, workdir / f"process-{name}.log")
            )
            for name in SERVICES
        }
        ready = await _ready(ports, started)
        pids = {name: proc.pid for name, proc in procs.items()}
        yield Stack(PROCESSES, f"http://127.0.0.1:{ports['api']}", key, "/processes", pids, ready)


@contextlib.asynccontextmanager
async def container_stack(urls: EngineUrls, workdir: Path) -> AsyncIterator[Stack]:
    data = workdir / "container-data"
    data.mkdir()
    data.chmod(0o777)  # written by the images' user (uid 10001)
    env, key = await _prepared(urls, workdir, CONTAINERS, "/var/lib/videogen")
    ports = _ports(env)
    engine = docker.from_env()
    run: list[docker.models.containers.Container] = []
    try:
        started = time.perf_counter()
        for name in SERVICES:
            run.append(
                await asyncio.to_thread(
                    engine.containers.run,
                    f"videogen-{name}:{IMAGE_TAG}",
                    detach=True,
                    network_mode="host",
                    hostname=f"bench-{name}",
                    environment=env,
                    read_only=True,
                    tmpfs={"/tmp": ""},
                    volumes={str(data): {"bind": "/var/lib/videogen", "mode": "rw"}},
                )
            )
        ready = await _ready(ports, started)
        for item in run:
            await asyncio.to_thread(item.reload)
        pids = {name: int(item.attrs["State"]["Pid"]) for name, item in zip(SERVICES, run, strict=True)}
        yield Stack(CONTAINERS, f"http://127.0.0.1:{ports['api']}", key, "/containers", pids, ready)
    finally:
        for item in run:
            with contextlib.suppress(docker.errors.NotFound):
                await asyncio.to_thread(item.remove, force=True)
        engine.close()


def _poster(session: aiohttp.ClientSession, stack: Stack, ids: list[str]) -> Callable[[], Awaitable[None]]:
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {stack.key}"}

    async def op() -> None:
        async with session.post(f"{stack.api}/v1/generate", data=BODY, headers=headers) as response:
            answer = await response.read()
            if response.status != 202:
                raise RuntimeError(f"{stack.kind}: HTTP {response.status}: {answer[:200]!r}")
            ids.append(orjson.loads(answer)["id"])

    return op


async def burst(
    session: aiohttp.ClientSession,
    stack: Stack,
    deliveries: Deliveries,
    engine_pids: dict[str, int],
    total: int,
    concurrency: int,
) -> Figures:
    ids: list[str] = []
    pids = {**stack.pids, **engine_pids}
    before = {name: cpu_seconds(pid) for name, pid in pids.items()}
    started = time.perf_counter()
    await closed_loop(stack.kind, _poster(session, stack, ids), total=total, concurrency=concurrency)
    created = time.perf_counter()
    delivered = await deliveries.wait_for(ids, timeout=600)
    after = {name: cpu_seconds(pid) for name, pid in pids.items()}
    return Figures(
        create_rate=total / (created - started),
        e2e_rate=total / (delivered - started),
        cpu_ms={name: (after[name] - before[name]) * 1000 / total for name in pids},
    )


async def run(total: int, concurrency: int, rounds: int) -> tuple[list[Stack], list[dict[str, Figures]]]:
    with tempfile.TemporaryDirectory(prefix="vg-bench-") as tmp:
        workdir = Path(tmp)
        deliveries = Deliveries()
        app = web.Application()
        app.router.add_post("/{stack}", deliveries.handle)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        hook_port = free_port()
        await web.TCPSite(runner, "127.0.0.1", hook_port).start()
        try:
            async with (
                engines(workdir) as urls,
                process_stack(urls, workdir) as processes,
                container_stack(urls, workdir) as containers,
                aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as session,
            ):
                for stack in (processes, containers):
                    hook = {
                        "url": f"http://127.0.0.1:{hook_port}{stack.hook_path}",
                        "events": ["video.completed"],
                    }
                    headers = {"Authorization": f"Bearer {stack.key}"}
                    async with session.post(
                        f"{stack.api}/v1/webhooks", json=hook, headers=headers
                    ) as response:
                        if response.status != 201:
                            raise RuntimeError(f"POST /v1/webhooks: HTTP {response.status}")
                engine_pids = {"store": urls.store_pid, "broker": urls.broker_pid}
                for stack in (processes, containers):  # warm-up: connections, caches, the first render
                    await burst(session, stack, deliveries, engine_pids, min(100, total), concurrency)
                results = []
                for n in range(rounds):
                    order = (processes, containers) if n % 2 == 0 else (containers, processes)
                    results.append(
                        {
                            stack.kind: await burst(
                                session, stack, deliveries, engine_pids, total, concurrency
                            )
                            for stack in order
                        }
                    )
                return [processes, containers], results
        finally:
            await runner.cleanup()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--generations", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    stacks, results = asyncio.run(run(args.generations, args.concurrency, args.rounds))
    for stack in stacks:
        print(
            f"{stack.kind:<10} start to ready: "
            + ", ".join(f"{name} {seconds:.1f} s" for name, seconds in stack.ready_s.items())
        )
    creates, e2es = [], []
    for n, figures in enumerate(results, 1):
        print(f"round {n}")
        for kind in (PROCESSES, CONTAINERS):
            f = figures[kind]
            cpu = ", ".join(f"{name} {ms:.2f}" for name, ms in f.cpu_ms.items())
            print(
                f"  {kind:<10} create {f.create_rate:7.0f}/s   end to end {f.e2e_rate:6.1f}/s"
                f"   CPU ms per generation: {cpu}"
            )
        create = figures[CONTAINERS].create_rate / figures[PROCESSES].create_rate
        e2e = figures[CONTAINERS].e2e_rate / figures[PROCESSES].e2e_rate
        creates.append(create)
        e2es.append(e2e)
        print(f"  containers / processes: create {create:.2f}, end to end {e2e:.2f}")
    print(
        f"containers / processes, median of {len(results)} rounds: create {statistics.median(creates):.2f} "
        f"({', '.join(f'{r:.2f}' for r in creates)}), end to end {statistics.median(e2es):.2f} "
        f"({', '.join(f'{r:.2f}' for r in e2es)})"
    )


if __name__ == "__main__":
    main()
