"""Event streams held open by one api process: what idle ``GET /v1/generations/{id}/events`` streams
cost it, with the real broker and store.

    .venv/bin/python -m bench.event_streams [--streams N] [--requests N] [--concurrency C] [--idle S]
        [--rounds R]

One api process; no orchestrator, so the streamed generations stay ``processing`` and their streams idle (a
keep-alive comment every 15 s). Each round measures, one after the other:

- creation alone (``POST /v1/generate``, closed loop), the baseline;
- the store's operations per second while the api idles with no stream open (``serverStatus`` opcounters);
- ``--streams`` streams opened (each on a generation of its own, its first event read): the api's resident
  memory before and after, per stream;
- the store's operations per second while they idle, over ``--idle`` seconds;
- creation again with the streams open beside it;
- the streams closed, and creation alone once more (so the baseline brackets the run beside the streams).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import resource
import statistics
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import orjson
from pymongo import AsyncMongoClient

from bench.api_create import BODY
from bench.common import Result, closed_loop, cpu_seconds, engines, migrated_store, python_process
from videogen.engines import free_port, wait_for_http
from videogen.keys import create_key

ACCOUNT = "bench"


@dataclass
class Round:
    alone: Result
    beside: Result
    after: Result
    rss_before_kib: int
    rss_streams_kib: int
    idle_ops: float  # store operations per second, no stream open
    streams_ops: float  # ... with the streams open and idle
    idle_api_cpu: float  # api CPU seconds per second over the same windows
    streams_api_cpu: float
    opened_seconds: float
    opened_api_cpu: float  # api CPU seconds spent while they opened
    load_cpu: float  # this process's (the clients') over the same time

    def lines(self, streams: int) -> list[str]:
        per_stream = (self.rss_streams_kib - self.rss_before_kib) / streams
        return [
            "  " + self.alone.line(),
            "  " + self.beside.line(),
            "  " + self.after.line(),
            f"  {streams} streams opened in {self.opened_seconds:.2f} s (CPU ms per stream: api "
            f"{self.opened_api_cpu * 1000 / streams:.3f}, clients {self.load_cpu * 1000 / streams:.3f}); "
            "api RSS "
            f"{self.rss_before_kib / 1024:.1f} → {self.rss_streams_kib / 1024:.1f} MiB: {per_stream:.1f} KiB "
            "per stream",
            f"  store operations/s while idle: {self.idle_ops:.2f} without streams, {self.streams_ops:.2f} "
            f"with them; api CPU {self.idle_api_cpu:.1%} → {self.streams_api_cpu:.1%} of a core",
            f"  create beside the streams / alone (mean of before and after): rate {self.ratio:.2f}, p99 "
            f"{self.p99_ratio:.2f}",
        ]

    @property
    def ratio(self) -> float:
        return self.beside.rate / statistics.fmean([self.alone.rate, self.after.rate])

    @property
    def p99_ratio(self) -> float:
        return self.beside.pct(0.99) / statistics.fmean([self.alone.pct(0.99), self.after.pct(0.99)])


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


async def store_ops(client: AsyncMongoClient[dict[str, object]]) -> int:
    status = await client.admin.command("serverStatus")
    counters = status["opcounters"]
    return sum(int(counters[name]) for name in ("insert", "query", "update", "delete", "getmore", "command"))


async def idle_window(
    client: AsyncMongoClient[dict[str, object]], api_pid: int, seconds: float
) -> tuple[float, float]:
    """Store operations per second and the api's CPU share over ``seconds`` of nothing asked of the api (the
    two serverStatus calls themselves are taken off)."""
    ops, cpu = await store_ops(client), cpu_seconds(api_pid)
    await asyncio.sleep(seconds)
    ops_after, cpu_after = await store_ops(client), cpu_seconds(api_pid)
    return (ops_after - ops - 1) / seconds, (cpu_after - cpu) / seconds


async def create_generations(
    session: aiohttp.ClientSession, base: str, key: str, count: int, concurrency: int
) -> list[str]:
    """``count`` generations for the streams to follow, created through the api (``POST /v1/generate``, the
    real creation), ``concurrency`` requests at a time; no orchestrator runs, so they stay ``processing``."""
    gate = asyncio.Semaphore(concurrency)
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {key}"}

    async def one() -> str:
        async with gate, session.post(f"{base}/v1/generate", data=BODY, headers=headers) as response:
            body = await response.read()
            if response.status != 202:
                raise RuntimeError(f"create: HTTP {response.status}: {body[:200]!r}")
        generation_id: str = orjson.loads(body)["id"]
        return generation_id

    return list(await asyncio.gather(*(one() for _ in range(count))))


@contextlib.asynccontextmanager
async def open_streams(
    session: aiohttp.ClientSession, base: str, key: str, ids: list[str]
) -> AsyncIterator[None]:
    """One stream per generation, each read to its first event; held (and drained) until the block ends."""
    opened: list[asyncio.Future[None]] = []

    async def hold(generation_id: str, ready: asyncio.Future[None]) -> None:
        url = f"{base}/v1/generations/{generation_id}/events"
        async with session.get(url, headers={"Authorization": f"Bearer {key}"}) as response:
            if response.status != 200:
                raise RuntimeError(f"stream: HTTP {response.status}")
            async for line in response.content:
                if line == b"\n" and not ready.done():
                    ready.set_result(None)

    loop = asyncio.get_running_loop()
    tasks = []
    for generation_id in ids:
        ready = loop.create_future()
        opened.append(ready)
        tasks.append(asyncio.create_task(hold(generation_id, ready)))
    try:
        await asyncio.gather(*opened)
        yield
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def run(streams: int, total: int, concurrency: int, idle: float, rounds: int) -> list[Round]:
    with tempfile.TemporaryDirectory(prefix="vg-bench-") as tmp:
        workdir = Path(tmp)
        async with engines(workdir) as urls, contextlib.AsyncExitStack() as stack:
            client, store = await migrated_store(urls, workdir, "bench")
            stack.push_async_callback(client.close)
            key = await create_key(store, ACCOUNT)
            api_port = free_port()
            env = {
                "VIDEOGEN_KAFKA_BOOTSTRAP": urls.kafka,
                "VIDEOGEN_MONGO_URL": urls.mongo,
                "VIDEOGEN_MONGO_DB": "bench",
                "VIDEOGEN_API_PORT": str(api_port),
                "VIDEOGEN_DATA_DIR": str(workdir / "data"),
                "VIDEOGEN_LOG_LEVEL": "WARNING",
                "VIDEOGEN_RATE_LIMIT_GENERATE_QUOTA": str(1_000_000),
                "VIDEOGEN_RATE_LIMIT_DEFAULT_QUOTA": str(1_000_000),
                # One account holds every stream here.
                "VIDEOGEN_EVENT_STREAMS_PER_ACCOUNT": str(streams),
            }
            api = await stack.enter_async_context(
                python_process(["-m", "videogen_api.main"], env, workdir / "api.log")
            )
            base = f"http://127.0.0.1:{api_port}"
            await wait_for_http(f"{base}/readyz")
            session = await stack.enter_async_context(
                aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))
            )
            headers = {"Content-Type": "application/json", "Authorization": f"Bearer {key}"}

            async def create() -> None:
                async with session.post(f"{base}/v1/generate", data=BODY, headers=headers) as response:
                    await response.read()
                    if response.status != 202:
                        raise RuntimeError(f"create: HTTP {response.status}")

            await closed_loop("warm-up", create, total=min(200, total), concurrency=concurrency)
            results = []
            for _ in range(rounds):
                ids = await create_generations(session, base, key, streams, concurrency)
                alone = await closed_loop("create, alone", create, total=total, concurrency=concurrency)
                idle_ops, idle_cpu = await idle_window(client, api.pid, idle)
                rss_before = rss_kib(api.pid)
                started = asyncio.get_running_loop().time()
                api_cpu, load_cpu = cpu_seconds(api.pid), cpu_seconds()
                async with open_streams(session, base, key, ids):
                    opened = asyncio.get_running_loop().time() - started
                    api_cpu, load_cpu = cpu_seconds(api.pid) - api_cpu, cpu_seconds() - load_cpu
                    rss_streams = rss_kib(api.pid)
                    streams_ops, streams_cpu = await idle_window(client, api.pid, idle)
                    beside = await closed_loop(
                        f"create, beside {streams} streams", create, total=total, concurrency=concurrency
                    )
                after = await closed_loop("create, alone again", create, total=total, concurrency=concurrency)
                results.append(
                    Round(
                        alone,
                        beside,
                        after,
                        rss_before,
                        rss_streams,
                        idle_ops,
                        streams_ops,
                        idle_cpu,
                        streams_cpu,
                        opened,
                        api_cpu,
                        load_cpu,
                    )
                )
            return results


def raise_open_files(needed: int) -> None:
    """Let this process (and the api it starts, which inherits the limit) hold ``needed`` sockets: the soft
    limit on open files raised towards the hard one (often 1,024 soft, far more hard)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    if wanted < needed:
        raise SystemExit(f"{needed} open files needed; the hard limit is {hard}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--streams", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--idle", type=float, default=20.0, help="seconds each idle window lasts")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    raise_open_files(args.streams + args.concurrency + 1024)  # the streams, the load, the rest
    rounds = asyncio.run(run(args.streams, args.requests, args.concurrency, args.idle, args.rounds))
    for n, measured in enumerate(rounds, 1):
        print(f"round {n}")
        for line in measured.lines(args.streams):
            print(line)
    print(
        "create beside the streams / alone, by round: "
        + ", ".join(f"{r.ratio:.2f}" for r in rounds)
        + f"; median {statistics.median(r.ratio for r in rounds):.2f} (target >= 0.9)"
    )
    print(
        "create p99 beside the streams / alone, by round: "
        + ", ".join(f"{r.p99_ratio:.2f}" for r in rounds)
        + f"; median {statistics.median(r.p99_ratio for r in rounds):.2f} (target <= 2)"
    )


if __name__ == "__main__":
    main()
