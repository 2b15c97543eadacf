"""What a batch costs the api beside single creates, in one run, with the real broker and store: the api's
CPU per accepted item of one batch (``POST /v1/batches``, JSONL) against its CPU per ``POST /v1/generate``
(the issue's target: a batch item ≤ 1/5 of a single create), the time to accept a batch of ``--items``
(10,000 by default), and how fast its results file (``GET /v1/batches/{id}/results``) streams.

    .venv/bin/python -m bench.api_batches [--items N] [--requests N] [--concurrency C] [--rounds R]

Each round creates ``--requests`` generations one by one (closed loop, ``--concurrency``), then submits one
batch of ``--items``, then reads that batch's results file; the api's CPU is read from /proc around each (to
the nanosecond). No orchestrator runs: the items wait, as a batch's items wait for capacity, and the results
file lists them all as they are."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import orjson

from bench.api_create import poster, timed
from bench.common import cpu_seconds_exact, engines, migrated_store, python_process
from videogen.engines import free_port, wait_for_http
from videogen.keys import create_key

ITEM = {
    "prompt": "a red fox running through fresh snow at dawn, cinematic",
    "provider": "mock",
    "duration": 5,
}


@dataclass
class Round:
    single_cpu_ms: float  # the api's CPU per POST /v1/generate
    single_rate: float
    batch_cpu_ms: float  # the api's CPU per accepted item
    accept_s: float  # wall time to accept the batch
    results_s: float  # wall time to stream its results file
    results_lines: int
    results_bytes: int

    def line(self) -> str:
        return (
            f"single create: {self.single_cpu_ms:.3f} ms api CPU each ({self.single_rate:,.0f}/s); "
            f"batch item: {self.batch_cpu_ms:.3f} ms api CPU each "
            f"(ratio {self.batch_cpu_ms / self.single_cpu_ms:.3f}); "
            f"accepted in {self.accept_s:.2f} s; results: {self.results_lines:,} lines, "
            f"{self.results_bytes / 1e6:.1f} MB in {self.results_s:.2f} s "
            f"({self.results_lines / self.results_s:,.0f} lines/s)"
        )


async def run(items: int, requests: int, concurrency: int, rounds: int) -> list[Round]:
    body = b"\n".join(orjson.dumps({**ITEM, "custom_id": f"item-{i}"}) for i in range(items)) + b"\n"
    with tempfile.TemporaryDirectory(prefix="vg-bench-") as tmp:
        workdir = Path(tmp)
        async with engines(workdir) as urls, contextlib.AsyncExitStack() as stack:
            client, store = await migrated_store(urls, workdir, "bench")
            key = await create_key(store, "bench")
            await client.close()
            port = free_port()
            env = {
                "VIDEOGEN_KAFKA_BOOTSTRAP": urls.kafka,
                "VIDEOGEN_MONGO_URL": urls.mongo,
                "VIDEOGEN_MONGO_DB": "bench",
                "VIDEOGEN_API_PORT": str(port),
                "VIDEOGEN_DATA_DIR": str(workdir / "data"),
                "VIDEOGEN_LOG_LEVEL": "WARNING",
                "VIDEOGEN_RATE_LIMIT_GENERATE_QUOTA": str(1_000_000),
            }
            api = await stack.enter_async_context(
                python_process(["-m", "videogen_api.main"], env, workdir / "api.log")
            )
            base = f"http://127.0.0.1:{port}"
            await wait_for_http(f"{base}/healthz")
            session = await stack.enter_async_context(
                aiohttp.ClientSession(
                    connector=aiohttp.TCPConnector(limit=concurrency),
                    timeout=aiohttp.ClientTimeout(total=600),
                )
            )
            auth = {"Authorization": f"Bearer {key}"}
            single = poster(
                session, "single", f"{base}/v1/generate", {**auth, "Content-Type": "application/json"}
            )
            found = []
            for n in range(rounds):
                phase = await timed("single", single, requests, concurrency, {"api": api.pid}, warm_up=n == 0)
                before, started = cpu_seconds_exact(api.pid), time.perf_counter()
                async with session.post(
                    f"{base}/v1/batches", data=body, headers={**auth, "Content-Type": "application/jsonl"}
                ) as response:
                    answer = await response.read()
                    if response.status != 202:
                        raise RuntimeError(f"batch: HTTP {response.status}: {answer[:300]!r}")
                accept = time.perf_counter() - started
                batch_cpu = cpu_seconds_exact(api.pid) - before
                batch_id = orjson.loads(answer)["id"]
                started = time.perf_counter()
                lines = size = 0
                async with session.get(f"{base}/v1/batches/{batch_id}/results", headers=auth) as response:
                    async for line in response.content:
                        lines += 1
                        size += len(line)
                results = time.perf_counter() - started
                found.append(
                    Round(
                        phase.per_request("api") * 1000,
                        phase.result.rate,
                        batch_cpu / items * 1000,
                        accept,
                        results,
                        lines,
                        size,
                    )
                )
                print(f"round {n + 1}: {found[-1].line()}", flush=True)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rounds = asyncio.run(run(args.items, args.requests, args.concurrency, args.rounds))
    ratios = [r.batch_cpu_ms / r.single_cpu_ms for r in rounds]
    print(
        f"batch item ÷ single create, api CPU: by round {', '.join(f'{v:.3f}' for v in ratios)}; "
        f"median {statistics.median(ratios):.3f} (target ≤ 0.2); accepting {args.items:,}: median "
        f"{statistics.median(r.accept_s for r in rounds):.2f} s; results: median "
        f"{statistics.median(r.results_lines / r.results_s for r in rounds):,.0f} lines/s"
    )


if __name__ == "__main__":
    main()
