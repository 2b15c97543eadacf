"""Shared pieces of the benchmark scripts: engines, a bare aiohttp baseline, a closed-loop load generator."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import statistics
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pymongo import AsyncMongoClient
from pymongo.monitoring import CommandFailedEvent, CommandListener, CommandStartedEvent, CommandSucceededEvent

from videogen.engines import (
    free_port,
    kafka_bootstrap,
    mongo_url,
    secantus_spec,
    spawn,
    stop,
    tansu_spec,
    wait_for_port,
)
from videogen.migrate import migrate
from videogen_common.settings import CommonSettings
from videogen_common.store import Durability, Store, connect


@dataclass(frozen=True)
class Result:
    name: str
    count: int
    seconds: float
    latencies_ms: list[float]

    @property
    def rate(self) -> float:
        return self.count / self.seconds

    def pct(self, q: float) -> float:
        ordered = sorted(self.latencies_ms)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    def line(self) -> str:
        return (
            f"{self.name:<34} {self.rate:9.0f}/s   p50 {self.pct(0.5):6.2f} ms   p99 {self.pct(0.99):6.2f} ms"
            f"   (n={self.count}, mean {statistics.fmean(self.latencies_ms):.2f} ms)"
        )


async def closed_loop(
    name: str, op: Callable[[], Awaitable[None]], *, total: int, concurrency: int
) -> Result:
    """``concurrency`` workers each run ``op`` back to back until ``total`` operations are done."""
    latencies: list[float] = []
    remaining = total

    async def worker() -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            started = time.perf_counter()
            await op()
            latencies.append((time.perf_counter() - started) * 1000)

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return Result(name, len(latencies), time.perf_counter() - started, latencies)


@dataclass(frozen=True)
class EngineUrls:
    kafka: str
    mongo: str
    # The engine processes, so a benchmark can tell how much CPU each phase cost them (``cpu_seconds``).
    broker_pid: int = 0
    store_pid: int = 0


def cpu_seconds(pid: int | None = None) -> float:
    """User plus system CPU time a process (this one by default) has used so far. Linux only (/proc)."""
    if pid is None:
        times = os.times()
        return times.user + times.system
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_seconds_exact(pid: int) -> float:
    """CPU time the live threads of a process have used so far, to the nanosecond (the first field of each
    thread's /proc schedstat). ``cpu_seconds`` counts in clock ticks (10 ms): over a phase in which a process
    uses a tenth of a second, that is 10% either way. What threads that have ended used is not counted, so
    this is for processes whose threads live as long as they do (an asyncio server: its loop, its resolver's
    pool). Linux only."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(FileNotFoundError, ProcessLookupError):
            total += int((task / "schedstat").read_text().split()[0])
    return total / 1e9


@contextlib.asynccontextmanager
async def engines(workdir: Path) -> AsyncIterator[EngineUrls]:
    broker_spec, store_spec = tansu_spec(free_port()), secantus_spec(free_port(), workdir / "store")
    broker = await spawn(broker_spec, log=workdir / "broker.log")
    store = await spawn(store_spec, log=workdir / "store.log")
    try:
        await wait_for_port(broker_spec.port, proc=broker)
        await wait_for_port(store_spec.port, proc=store)
        yield EngineUrls(kafka_bootstrap(broker_spec.port), mongo_url(store_spec.port), broker.pid, store.pid)
    finally:
        await stop(broker)
        await stop(store)


class Commands(CommandListener):
    """Counts the store commands (round trips) a client sends, by command name and collection (``by_name``:
    e.g. ``"update generations"``)."""

    def __init__(self) -> None:
        self.by_name: collections.Counter[str] = collections.Counter()

    @property
    def count(self) -> int:
        return sum(self.by_name.values())

    def started(self, event: CommandStartedEvent) -> None:
        collection = event.command.get(event.command_name)
        name = event.command_name if not isinstance(collection, str) else f"{event.command_name} {collection}"
        self.by_name[name] += 1

    def succeeded(self, event: CommandSucceededEvent) -> None:
        return None

    def failed(self, event: CommandFailedEvent) -> None:
        return None


async def migrated_store(
    urls: EngineUrls,
    workdir: Path,
    db: str,
    topic_prefix: str = "videogen.",
    *,
    durability: Durability = Durability.MAJORITY_JOURNALED,
    commands: Commands | None = None,
) -> tuple[AsyncMongoClient[dict[str, Any]], Store]:
    """Run the migration for a benchmark's own database and topic prefix, and connect to that database with
    ``durability``'s write concern (its round trips counted by ``commands``, if given)."""
    await migrate(
        CommonSettings(
            kafka_bootstrap=urls.kafka,
            mongo_url=urls.mongo,
            mongo_db=db,
            topic_prefix=topic_prefix,
            data_dir=workdir / "data",
        )
    )
    listeners = [commands] if commands is not None else []
    return connect(urls.mongo, db, app_name="bench", durability=durability, event_listeners=listeners)


@contextlib.asynccontextmanager
async def python_process(
    args: list[str], env: dict[str, str], log: Path, *, checkout: Path | None = None
) -> AsyncIterator[asyncio.subprocess.Process]:
    """``python args`` with ``env`` added, its output to ``log``; stopped on exit. With ``checkout``, that
    checkout's own environment runs it, from there (``checkout/.venv/bin/python``: its code, not ours)."""
    python = str(checkout / ".venv" / "bin" / "python") if checkout is not None else sys.executable
    with log.open("ab") as out:
        proc = await asyncio.create_subprocess_exec(
            python,
            *args,
            env={**os.environ, **env},
            stdout=out,
            stderr=asyncio.subprocess.STDOUT,
            cwd=checkout,
        )
    try:
        yield proc
    finally:
        if proc.returncode is None:
            proc.terminate()
            await proc.wait()
