"""POST /v1/generate throughput and latency on this machine, with the real broker and store, beside two
ceilings measured in the same run: the store's raw insert rate and a bare aiohttp JSON endpoint.

    .venv/bin/python -m bench.api_create [--requests N] [--concurrency C] [--rounds R] [--write-concerns A,B]
        [--profile FILE] [--traces] [--baseline CHECKOUT]

The store's raw insert and creation are measured for each write concern of ``--write-concerns`` (all three
by default, the durable default first): each ceiling uses the same write concern as the creation it is
compared with, and the last concern's creation rate is the baseline the others' cost is stated against.
The phases run one after the other, ``--rounds`` times (3 by default), every process staying up: each
round's ratios compare figures taken moments apart, and the median over rounds is less at the mercy of
whatever else the machine is doing. Each phase also reports the CPU time its processes spent per request (the
load generator, the server, the store), read from /proc (the api's and the bare server's to the nanosecond),
which says where the time goes when the rates alone cannot; the api's CPU per creation is also stated against
the bare endpoint's per request, by round (what a creation costs the api beyond serving a request at all).

With ``--traces``, the api exports OpenTelemetry traces to a sink on 127.0.0.1 (``bench.otlp_sink``), so a run
with it beside one without states what traces cost creation.

With ``--baseline``, a second api runs from another checkout (its own ``.venv``: ``make install`` there; say
a ``git worktree`` of the commit to compare with) against the same engines, with the first write concern, and
each round measures its creation beside this checkout's, in alternating order: before and after in one run,
stated as this api's CPU per creation ÷ the baseline's, by round and its median (the figure to read on a noisy
machine, where run against run moves the ratio to the bare endpoint by ±20%).

With ``--profile``, the api process runs under cProfile and writes its statistics to FILE when it stops (read
them with ``python -m pstats FILE``); the figures of such a run are not comparable with the others.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import secrets
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import orjson

from bench.common import (
    Result,
    closed_loop,
    cpu_seconds,
    cpu_seconds_exact,
    engines,
    migrated_store,
    python_process,
)
from videogen.engines import free_port, wait_for_http
from videogen.keys import create_key
from videogen_common.clock import SystemClock
from videogen_common.domain import Provider
from videogen_common.generations import new_generation
from videogen_common.ids import new_id
from videogen_common.store import Durability, Store, connect

INSERT, BARE, CREATE = "store: raw insert_one", "aiohttp: bare JSON endpoint", "videogen: POST /v1/generate"
BASELINE = "baseline: POST /v1/generate"
BODY = orjson.dumps(
    {"prompt": "a red fox running through fresh snow at dawn, cinematic", "provider": "mock", "duration": 5}
)


@dataclass
class Phase:
    """One timed run, and the CPU time each process spent during it (seconds)."""

    result: Result
    cpu: dict[str, float]

    def per_request(self, process: str) -> float:
        """CPU seconds ``process`` spent per request of this phase."""
        return self.cpu[process] / self.result.count

    def cpu_line(self) -> str:
        per_op = ", ".join(f"{name} {ms * 1000 / self.result.count:.3f}" for name, ms in self.cpu.items())
        busy = sum(self.cpu.values()) / self.result.seconds
        return f"{self.result.name:<34} CPU ms per request: {per_op}   (all: {busy:.2f} cores busy)"


async def timed(
    name: str,
    op: Callable[[], Awaitable[None]],
    total: int,
    concurrency: int,
    pids: dict[str, int],
    *,
    warm_up: bool,
) -> Phase:
    """The closed loop (after a warm-up, if asked), measuring the CPU of this process (the load) and of
    ``pids``."""
    if warm_up:
        await closed_loop(f"{name} (warm-up)", op, total=min(200, total), concurrency=concurrency)
    before = {"load": time.process_time(), **{n: _cpu(n, pid) for n, pid in pids.items()}}
    result = await closed_loop(name, op, total=total, concurrency=concurrency)
    after = {"load": time.process_time(), **{n: _cpu(n, pid) for n, pid in pids.items()}}
    return Phase(result, {n: after[n] - before[n] for n in before})


def _cpu(name: str, pid: int) -> float:
    """The CPU a process has used so far: to the nanosecond for the api and the bare server (asyncio servers,
    whose threads live as long as they do: at 0.04 ms a request, 3,000 requests are only 12 clock ticks), in
    clock ticks for the store (its threads come and go)."""
    return cpu_seconds(pid) if name == "store" else cpu_seconds_exact(pid)


def poster(
    session: aiohttp.ClientSession, name: str, url: str, headers: dict[str, str]
) -> Callable[[], Awaitable[None]]:
    async def op() -> None:
        async with session.post(url, data=BODY, headers=headers) as response:
            await response.read()
            if response.status != 202:
                raise RuntimeError(f"{name}: HTTP {response.status}")

    return op


async def run(
    total: int,
    concurrency: int,
    rounds: int,
    concerns: list[Durability],
    profile: Path | None = None,
    traces: bool = False,
    baseline: Path | None = None,
) -> list[dict[str, Phase]]:
    """``rounds`` rounds of the phases, one after the other, so that each round's figures share the machine's
    conditions of the moment; every process stays up for the whole run. The store's raw insert and creation
    are measured once per write concern in ``concerns``: each concern's api and store client use that concern,
    so each ceiling is measured as durably as the creation it is compared with."""
    with tempfile.TemporaryDirectory(prefix="vg-bench-") as tmp:
        workdir = Path(tmp)
        async with engines(workdir) as urls, contextlib.AsyncExitStack() as stack:
            client, store = await migrated_store(urls, workdir, "bench")
            key = await create_key(store, "bench")
            await client.close()
            clock = SystemClock()

            def inserter(store: Store, collection: str) -> Callable[[], Awaitable[None]]:
                async def insert() -> None:
                    now = clock.now()
                    await store.db[collection].insert_one(
                        new_generation(
                            generation_id=new_id("gen", now),
                            account_id="bench",
                            prompt="x" * 56,
                            provider=Provider.MOCK,
                            duration=5,
                            now=now,
                        )
                    )

                return insert

            bare_port = free_port()
            bare = await stack.enter_async_context(
                python_process(["-m", "bench.bare_app", str(bare_port)], {}, workdir / "bare.log")
            )
            session = await stack.enter_async_context(
                aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency))
            )
            await wait_for_http(f"http://127.0.0.1:{bare_port}/healthz")
            bare_post = poster(
                session,
                BARE,
                f"http://127.0.0.1:{bare_port}/v1/generate",
                {"Content-Type": "application/json"},
            )
            store_pid = {"store": urls.store_pid}
            traced: dict[str, str] = {}
            if traces:
                sink_port = free_port()
                await stack.enter_async_context(
                    python_process(["-m", "bench.otlp_sink", str(sink_port)], {}, workdir / "sink.log")
                )
                await wait_for_http(f"http://127.0.0.1:{sink_port}/count")
                traced = {"OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{sink_port}"}

            def api_env(concern: Durability) -> dict[str, str]:
                return {
                    "VIDEOGEN_KAFKA_BOOTSTRAP": urls.kafka,
                    "VIDEOGEN_MONGO_URL": urls.mongo,
                    "VIDEOGEN_MONGO_DB": "bench",
                    "VIDEOGEN_MONGO_WRITE_CONCERN": concern.value,
                    "VIDEOGEN_DATA_DIR": str(workdir / "data"),
                    "VIDEOGEN_LOG_LEVEL": "WARNING",
                    # One account sends everything here: its rate limits are set beyond what the run sends,
                    # so the limiter does all its work (counting, headers, store syncs) and refuses nothing.
                    "VIDEOGEN_RATE_LIMIT_GENERATE_QUOTA": str(1_000_000),
                    **traced,
                }

            def create_headers() -> dict[str, str]:
                return {
                    "Content-Type": "application/json",
                    "Authorization": f"Bearer {key}",
                    "X-Request-Id": "bench-" + secrets.token_hex(4),
                }

            # Per write concern: its store client (the ceiling), its api process, and the two operations.
            measured: dict[
                Durability, tuple[Callable[[], Awaitable[None]], Callable[[], Awaitable[None]], int]
            ]
            measured = {}
            for concern in concerns:
                concern_client, concern_store = connect(
                    urls.mongo, "bench", app_name="bench", durability=concern
                )
                stack.push_async_callback(concern_client.close)
                api_port = free_port()
                env = {**api_env(concern), "VIDEOGEN_API_PORT": str(api_port)}
                api = ["-m", "videogen_api.main"]
                if profile is not None:
                    api = ["-m", "cProfile", "-o", str(profile), *api]
                api_proc = await stack.enter_async_context(
                    python_process(api, env, workdir / f"api-{concern.value}.log")
                )
                await wait_for_http(f"http://127.0.0.1:{api_port}/healthz")
                create = poster(session, CREATE, f"http://127.0.0.1:{api_port}/v1/generate", create_headers())
                measured[concern] = (inserter(concern_store, "raw_inserts"), create, api_proc.pid)
            compared: tuple[Callable[[], Awaitable[None]], int] | None = None
            if baseline is not None:
                # The same settings as the first concern's api, from the other checkout's code.
                port = free_port()
                proc = await stack.enter_async_context(
                    python_process(
                        ["-m", "videogen_api.main"],
                        {**api_env(concerns[0]), "VIDEOGEN_API_PORT": str(port)},
                        workdir / "api-baseline.log",
                        checkout=baseline,
                    )
                )
                await wait_for_http(f"http://127.0.0.1:{port}/healthz")
                url = f"http://127.0.0.1:{port}/v1/generate"
                compared = (poster(session, BASELINE, url, create_headers()), proc.pid)
            runs = []
            for n in range(rounds):
                first = n == 0
                phases = {
                    BARE: await timed(
                        BARE, bare_post, total, concurrency, {"server": bare.pid}, warm_up=first
                    )
                }
                for concern, (insert, create, api_pid) in measured.items():
                    phases[f"{INSERT} [{concern.value}]"] = await timed(
                        f"{INSERT} [{concern.value}]", insert, total, concurrency, store_pid, warm_up=first
                    )
                    name = f"{CREATE} [{concern.value}]"
                    this = (name, create, api_pid)
                    if compared is not None and concern is concerns[0]:
                        # Alternating which goes first, so neither always has the other's after-effects.
                        pair = [this, (BASELINE, *compared)]
                        for phase_name, op, pid in pair if n % 2 == 0 else pair[::-1]:
                            phases[phase_name] = await timed(
                                phase_name, op, total, concurrency, {"api": pid, **store_pid}, warm_up=first
                            )
                    else:
                        phases[name] = await timed(
                            name, create, total, concurrency, {"api": api_pid, **store_pid}, warm_up=first
                        )
                runs.append(phases)
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--write-concerns",
        default=",".join(c.value for c in Durability),
        help="comma-separated VIDEOGEN_MONGO_WRITE_CONCERN values to measure side by side",
    )
    parser.add_argument("--profile", type=Path, help="profile the api process with cProfile into this file")
    parser.add_argument(
        "--traces", action="store_true", help="the api exports its traces (to a sink on 127.0.0.1)"
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        help="another checkout (with its own .venv) whose api is measured beside this one's, each round",
    )
    args = parser.parse_args()
    profile = args.profile.resolve() if args.profile else None
    baseline = args.baseline.resolve() if args.baseline else None
    if baseline is not None and not (baseline / ".venv" / "bin" / "python").exists():
        parser.error(f"{baseline} has no .venv: run `make install` there first")
    concerns = [Durability(name.strip()) for name in args.write_concerns.split(",") if name.strip()]
    runs = asyncio.run(
        run(args.requests, args.concurrency, args.rounds, concerns, profile, args.traces, baseline)
    )
    against: list[float] = []
    ratios: dict[Durability, list[float]] = {c: [] for c in concerns}
    cpu_ratios: dict[Durability, list[float]] = {c: [] for c in concerns}
    costs: dict[Durability, list[float]] = {c: [] for c in concerns}
    for n, phases in enumerate(runs, 1):
        print(f"round {n}")
        for phase in phases.values():
            print("  " + phase.result.line())
        for phase in phases.values():
            print("  " + phase.cpu_line())
        bare = phases[BARE].result
        for concern in concerns:
            insert = phases[f"{INSERT} [{concern.value}]"].result
            create = phases[f"{CREATE} [{concern.value}]"].result
            ratio = create.rate / min(insert.rate, bare.rate)
            ratios[concern].append(ratio)
            costs[concern].append(create.rate / phases[f"{CREATE} [{concerns[-1].value}]"].result.rate)
            cpu_ratios[concern].append(
                phases[f"{CREATE} [{concern.value}]"].per_request("api") / phases[BARE].per_request("server")
            )
            print(
                f"  [{concern.value}] create / store insert = {create.rate / insert.rate:.2f}, create / bare "
                f"aiohttp = {create.rate / bare.rate:.2f}, create / slower ceiling = {ratio:.2f}, api CPU "
                f"per creation / bare server's per request = {cpu_ratios[concern][-1]:.2f}"
            )
        if BASELINE in phases:
            this = phases[f"{CREATE} [{concerns[0].value}]"].per_request("api")
            before = phases[BASELINE].per_request("api")
            against.append(this / before)
            print(
                f"  [{concerns[0].value}] api CPU per creation: this checkout {this * 1000:.3f} ms, the "
                f"baseline {before * 1000:.3f} ms, this / baseline = {against[-1]:.2f}; the baseline / bare "
                f"server's per request = {before / phases[BARE].per_request('server'):.2f}"
            )
        print()
    for concern in concerns:
        print(
            f"[{concern.value}] create / slower ceiling, by round: "
            f"{', '.join(f'{r:.2f}' for r in ratios[concern])}; "
            f"median {statistics.median(ratios[concern]):.2f}"
            f"  (target >= 0.80); create rate / [{concerns[-1].value}]'s, median "
            f"{statistics.median(costs[concern]):.2f}"
        )
        print(
            f"[{concern.value}] api CPU per creation / bare aiohttp server's, by round: "
            f"{', '.join(f'{r:.2f}' for r in cpu_ratios[concern])}; "
            f"median {statistics.median(cpu_ratios[concern]):.2f}  (target <= 3)"
        )
    if against:
        print(
            f"[{concerns[0].value}] api CPU per creation, this checkout / the baseline's, by round: "
            f"{', '.join(f'{r:.2f}' for r in against)}; median {statistics.median(against):.2f}"
        )


if __name__ == "__main__":
    main()
