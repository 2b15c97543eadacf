"""Generations per second from request to ``completed``, with the mock provider at zero latency, through one
and through two orchestrator processes, and the p50/p99 of that latency; beside two baselines measured in the
same run: the api's creation rate alone (nothing consumes the requests) and the orchestrator's own work alone:
its real runner and actor in this process, over the same kind of store, with no api and no Kafka (so any
change to the queries they make shows up in the baseline too).

    .venv/bin/python -m bench.orchestrator_throughput [--generations N] [--concurrency C]
        [--baseline CHECKOUT [--rounds R]]

With ``--baseline``, only the one-orchestrator burst is measured, ``R`` rounds of it (default 3), each round
once through this checkout's api and orchestrator and once through another checkout's (its own ``.venv``:
``make install`` there; its own ``videogen migrate`` prepares its database), one after the other so both share
the machine's conditions of the moment: the burst rate and the orchestrator's CPU per generation, this
checkout ÷ the baseline's, by round and their median: the no-regression check for an orchestrator change.

Each orchestrator configuration is measured twice:
- burst: N requests as fast as the api takes them; the rate is N over the time from the first request to the
  last ``completed`` status event, and the latencies include the time spent in the backlog;
- paced: requests at half the burst rate, so there is no backlog, for the latency of one generation.

Completion is seen on the ``generation.status`` topic (the event the orchestrator publishes right after its
terminal write), so watching costs the store nothing. Every generation asks for the same prompt: the mock
provider's render cache serves all but the first, and the figure is the orchestration's, not video encoding's.
The per-account cap and the api's rate limit are raised out of the way (one account sends everything here).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import dataclasses
import os
import secrets
import statistics
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import orjson
from aiokafka import AIOKafkaConsumer

from bench.common import (
    Commands,
    EngineUrls,
    Result,
    closed_loop,
    cpu_seconds,
    engines,
    migrated_store,
    python_process,
)
from videogen.engines import free_port, wait_for_http
from videogen.keys import create_key
from videogen_common.clock import SystemClock
from videogen_common.domain import Provider
from videogen_common.events import Envelope
from videogen_common.generations import new_generation
from videogen_common.ids import new_id
from videogen_common.media import open_media_store
from videogen_common.metrics import new_registry
from videogen_common.records.event import Event
from videogen_common.settings import load_settings
from videogen_common.store import Store, connect
from videogen_common.topics import Topics
from videogen_orchestrator.assembly import Resources, assemble
from videogen_orchestrator.metrics import OrchestratorMetrics, measured
from videogen_orchestrator.providers.registry import build_providers, close_providers
from videogen_orchestrator.settings import OrchestratorSettings

BODY = orjson.dumps(
    {"prompt": "a red fox running through fresh snow at dawn", "provider": "mock", "duration": 3}
)
WARM_UP = 50
RUNNER_ALONE = "runner alone: no api, no Kafka"


class Completions:
    """Follows the status topic; records when each generation's ``completed`` event arrived."""

    def __init__(self) -> None:
        self.at: dict[str, float] = {}
        self._changed = asyncio.Event()

    async def follow(self, consumer: AIOKafkaConsumer) -> None:
        async for message in consumer:
            assert message.value is not None
            envelope = Envelope.from_json(message.value)
            if envelope.generation["status"] == "completed":
                self.at.setdefault(envelope.generation_id, time.perf_counter())
                self._changed.set()

    async def wait_for(self, ids: list[str], timeout: float) -> None:
        async with asyncio.timeout(timeout):
            while any(i not in self.at for i in ids):
                self._changed.clear()
                await self._changed.wait()


@contextlib.asynccontextmanager
async def following(kafka: str, topic: str) -> AsyncIterator[Completions]:
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=kafka, auto_offset_reset="earliest")
    await consumer.start()
    completions = Completions()
    task = asyncio.create_task(completions.follow(consumer))
    try:
        yield completions
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await consumer.stop()


class Client:
    """POSTs generations; records when each request was sent."""

    def __init__(self, session: aiohttp.ClientSession, url: str, key: str) -> None:
        self._session = session
        self._url = url
        self._headers = {"Content-Type": "application/json", "Authorization": f"Bearer {key}"}
        self.sent: dict[str, float] = {}

    async def create(self) -> str:
        started = time.perf_counter()
        async with self._session.post(self._url, data=BODY, headers=self._headers) as response:
            body = await response.read()
            if response.status != 202:
                raise RuntimeError(f"POST /v1/generate: HTTP {response.status}: {body[:200]!r}")
        generation_id: str = orjson.loads(body)["id"]
        self.sent[generation_id] = started
        return generation_id


def request_to_completed(name: str, client: Client, completions: Completions, ids: list[str]) -> Result:
    first = min(client.sent[i] for i in ids)
    last = max(completions.at[i] for i in ids)
    return Result(name, len(ids), last - first, [(completions.at[i] - client.sent[i]) * 1000 for i in ids])


async def burst(name: str, client: Client, completions: Completions, total: int, concurrency: int) -> Result:
    ids: list[str] = []

    async def op() -> None:
        ids.append(await client.create())

    await closed_loop(name, op, total=total, concurrency=concurrency)
    await completions.wait_for(ids, timeout=600)
    return request_to_completed(name, client, completions, ids)


async def paced(name: str, client: Client, completions: Completions, total: int, rate: float) -> Result:
    """Open loop: one request every 1/rate seconds, whatever the answers' timing."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    creating = []
    for n in range(total):
        await asyncio.sleep(max(0.0, start + n / rate - loop.time()))
        creating.append(asyncio.create_task(client.create()))
    ids = list(await asyncio.gather(*creating))
    await completions.wait_for(ids, timeout=600)
    return request_to_completed(name, client, completions, ids)


async def inside(store: Store, name: str, ids: list[str]) -> Result:
    """The same generations' time from the api's insert to the orchestrator's terminal write, by the store's
    own timestamps: the latency without the status event's trip to the watcher."""
    docs = await store.generations.find({"_id": {"$in": ids}}).to_list(None)
    spans = [(d["updated_at"] - d["created_at"]).total_seconds() * 1000 for d in docs]
    return Result(name, len(spans), 1.0, spans)


def env_for(urls: EngineUrls, workdir: Path, db: str, prefix: str) -> dict[str, str]:
    return {
        "VIDEOGEN_KAFKA_BOOTSTRAP": urls.kafka,
        "VIDEOGEN_MONGO_URL": urls.mongo,
        "VIDEOGEN_MONGO_DB": db,
        "VIDEOGEN_TOPIC_PREFIX": prefix,
        "VIDEOGEN_DATA_DIR": str(workdir / "data"),
        "VIDEOGEN_ORCHESTRATOR_GROUP": f"orch-{prefix}",
        "VIDEOGEN_MOCK_LATENCY_MS": "0",
        "VIDEOGEN_ACCOUNT_MAX_IN_FLIGHT": "100000",
        "VIDEOGEN_RATE_LIMIT_GENERATE_QUOTA": str(1_000_000),
        "VIDEOGEN_LOG_LEVEL": "WARNING",
    }


async def baseline_migrated(checkout: Path, env: dict[str, str], log: Path) -> None:
    """The other checkout's own ``videogen migrate`` over its database (its indexes, not ours)."""
    with log.open("ab") as out:
        proc = await asyncio.create_subprocess_exec(
            str(checkout / ".venv" / "bin" / "videogen"),
            "migrate",
            env={**os.environ, **env},
            stdout=out,
            stderr=asyncio.subprocess.STDOUT,
            cwd=checkout,
        )
        if await proc.wait() != 0:
            raise RuntimeError(f"videogen migrate in {checkout} failed: see {log}")


@dataclasses.dataclass
class Orchestrated:
    burst: Result
    paced: Result | None
    cpu_ms_per_generation: dict[str, float]


async def orchestrated(
    urls: EngineUrls,
    workdir: Path,
    orchestrators: int,
    total: int,
    concurrency: int,
    *,
    checkout: Path | None = None,
    tag: str = "",
    pace: bool = True,
) -> Orchestrated:
    """Burst (and, with ``pace``, paced) runs through the api and ``orchestrators`` orchestrator processes,
    from ``checkout`` when given (else this checkout)."""
    tag = tag or f"o{orchestrators}"
    db, prefix = f"bench_{tag}", f"{tag}{secrets.token_hex(3)}."
    env = env_for(urls, workdir, db, prefix)
    if checkout is not None:
        await baseline_migrated(checkout, env, workdir / f"migrate-{tag}.log")
        client, store = connect(urls.mongo, db, app_name="bench")
    else:
        client, store = await migrated_store(urls, workdir, db, prefix)
    key = await create_key(store, "bench")
    api_port = free_port()
    pids = {"store": urls.store_pid, "broker": urls.broker_pid}
    async with contextlib.AsyncExitStack() as stack:
        for n in range(orchestrators):
            port = free_port()
            proc = await stack.enter_async_context(
                python_process(
                    ["-m", "videogen_orchestrator.main"],
                    {
                        **env,
                        "VIDEOGEN_ORCHESTRATOR_INSTANCE": f"{tag}-{n}",
                        "VIDEOGEN_ORCHESTRATOR_PORT": str(port),
                    },
                    workdir / f"orchestrator-{tag}-{n}.log",
                    checkout=checkout,
                )
            )
            pids[f"orchestrator-{n}"] = proc.pid
            await wait_for_http(f"http://127.0.0.1:{port}/readyz", timeout=60)
        proc = await stack.enter_async_context(
            python_process(
                ["-m", "videogen_api.main"],
                {**env, "VIDEOGEN_API_PORT": str(api_port)},
                workdir / f"api-{tag}.log",
                checkout=checkout,
            )
        )
        pids["api"] = proc.pid
        await wait_for_http(f"http://127.0.0.1:{api_port}/healthz")
        completions = await stack.enter_async_context(following(urls.kafka, Topics(prefix).status))
        session = await stack.enter_async_context(
            aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency))
        )
        api = Client(session, f"http://127.0.0.1:{api_port}/v1/generate", key)
        # Warm-up: every orchestrator has its partitions and the render cache holds the prompt's video.
        await burst("warm-up", api, completions, WARM_UP, concurrency)
        label = f"{orchestrators} orchestrator{'s' if orchestrators > 1 else ''}" + (
            f" [{checkout.name}]" if checkout is not None else ""
        )
        before = {name: cpu_seconds(pid) for name, pid in pids.items()}
        fast = await burst(f"{label}: burst", api, completions, total, concurrency)
        spent = {name: cpu_seconds(pid) - before[name] for name, pid in pids.items()}
        cpu_ms = {name: cpu * 1000 / total for name, cpu in spent.items()}
        per_generation = ", ".join(f"{name} {ms:.1f}" for name, ms in cpu_ms.items())
        print(
            f"{fast.name}: CPU ms per generation: {per_generation}"
            f"   ({sum(spent.values()) / fast.seconds:.2f} cores busy)",
            flush=True,
        )
        slow = None
        if pace:
            rate = fast.rate / 2
            count = max(100, total // 4)
            slow = await paced(f"{label}: paced at {rate:.0f}/s", api, completions, count, rate)
            stored = await inside(
                store, f"{slow.name}, insert → terminal write", list(api.sent)[-slow.count :]
            )
            print(
                f"{stored.name}: p50 {stored.pct(0.5):.0f} ms   p99 {stored.pct(0.99):.0f} ms"
                f"   (n={stored.count})",
                flush=True,
            )
    await client.close()
    return Orchestrated(fast, slow, cpu_ms)


async def api_alone(urls: EngineUrls, workdir: Path, total: int, concurrency: int) -> Result:
    """POST /v1/generate with no orchestrator: the rate at which requests can be made at all."""
    db, prefix = "bench_api", f"api{secrets.token_hex(3)}."
    client, store = await migrated_store(urls, workdir, db, prefix)
    key = await create_key(store, "bench")
    await client.close()
    port = free_port()
    env = {**env_for(urls, workdir, db, prefix), "VIDEOGEN_API_PORT": str(port)}
    async with python_process(["-m", "videogen_api.main"], env, workdir / "api-alone.log"):
        await wait_for_http(f"http://127.0.0.1:{port}/healthz")
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as session:
            api = Client(session, f"http://127.0.0.1:{port}/v1/generate", key)

            async def op() -> None:
                await api.create()

            await closed_loop("warm-up", op, total=WARM_UP, concurrency=concurrency)
            return await closed_loop("api alone: POST /v1/generate", op, total=total, concurrency=concurrency)


class Finishes:
    """The ``EventSink`` the runner's actor is given instead of the status topic: resolves each generation's
    future when its terminal status event is sent (right after the terminal write, as on the topic)."""

    def __init__(self) -> None:
        self._waiting: dict[str, asyncio.Future[None]] = {}

    def expect(self, generation_id: str) -> asyncio.Future[None]:
        return self._waiting.setdefault(generation_id, asyncio.get_running_loop().create_future())

    async def send(self, envelope: Envelope) -> None:
        status = envelope.generation["status"]
        waiting = self._waiting.get(envelope.generation_id)
        if status not in ("completed", "failed") or waiting is None or waiting.done():
            return
        if status == "completed":
            waiting.set_result(None)
        else:
            error = envelope.generation["error"]
            waiting.set_exception(RuntimeError(f"{envelope.generation_id} failed: {error}"))

    async def send_event(self, event: Event) -> None:
        """Events (the terminal ones, stored by the transition) go nowhere here: nothing takes them in."""


async def runner_alone(urls: EngineUrls, workdir: Path, total: int, concurrency: int) -> Result:
    """The orchestrator's real ``Runner`` and ``GenerationActor`` in this process, wired as its runtime wires
    them (the mock provider at zero latency and its render cache, media to a folder of the run's temporary
    directory, metrics), over the real store, with no api and no Kafka: the generations are inserted as the
    api creates them, each is started by the runner as the request's agent would start it, and it is done when
    its terminal status event reaches the sink. Whatever the runner and the actor ask of the store (the lease
    claim, the account slot, the task id, the terminal write with its outbox flag, the slot's release and the
    look for a waiting generation) is what is measured, so a change to their queries shows up here."""
    db, prefix = "bench_runner", f"runner{secrets.token_hex(3)}."
    settings = load_settings(
        OrchestratorSettings,
        kafka_bootstrap=urls.kafka,
        mongo_url=urls.mongo,
        mongo_db=db,
        topic_prefix=prefix,
        data_dir=workdir / "runner-data",
        orchestrator_instance="bench-runner",
        mock_latency_ms=0,
        account_max_in_flight=100_000,
    )
    commands = Commands()
    client, store = await migrated_store(
        urls, workdir, db, prefix, durability=settings.mongo_write_concern, commands=commands
    )
    request = orjson.loads(BODY)
    clock = SystemClock()
    now = clock.now()
    docs = [
        new_generation(
            generation_id=new_id("gen", now),
            account_id="bench",
            prompt=request["prompt"],
            provider=Provider(request["provider"]),
            duration=request["duration"],
            now=now,
        )
        for _ in range(total + WARM_UP)
    ]
    await store.generations.insert_many(docs)
    pending = iter(doc["_id"] for doc in docs)
    metrics = OrchestratorMetrics(new_registry())
    providers = build_providers(settings)
    sink = Finishes()
    async with open_media_store(settings) as media:
        measured_providers = measured(providers, metrics)
        runner = assemble(Resources(settings, store, media, measured_providers, sink, clock, metrics)).runner

        async def op() -> None:
            generation_id = next(pending)
            finished = sink.expect(generation_id)
            if not await runner.start(generation_id):
                raise RuntimeError(f"the runner did not start {generation_id}")
            await finished

        try:
            await closed_loop("warm-up", op, total=WARM_UP, concurrency=concurrency)
            await runner.wait_idle()
            before = cpu_seconds(urls.store_pid), cpu_seconds()
            counted = collections.Counter(commands.by_name)
            started = time.perf_counter()
            result = await closed_loop(RUNNER_ALONE, op, total=total, concurrency=concurrency)
            await runner.wait_idle()  # the last generations' slots given back and wake-ups done
            seconds = time.perf_counter() - started
            store_cpu, runner_cpu = cpu_seconds(urls.store_pid) - before[0], cpu_seconds() - before[1]
            counted = collections.Counter(commands.by_name) - counted
        finally:
            await runner.stop()
            await close_providers(providers)
    print(
        f"{result.name}: CPU ms per generation: store {store_cpu * 1000 / total:.1f},"
        f" runner and actor (this process) {runner_cpu * 1000 / total:.1f}; store round trips per generation"
        f" {counted.total() / total:.2f} ("
        + ", ".join(f"{name} {n / total:.2f}" for name, n in counted.most_common())
        + ")",
        flush=True,
    )
    await client.close()
    return Result(result.name, result.count, seconds, result.latencies_ms)


async def run(total: int, concurrency: int) -> list[Result]:
    with tempfile.TemporaryDirectory(prefix="vg-bench-") as tmp:
        workdir = Path(tmp)
        async with engines(workdir) as urls:
            results = [await runner_alone(urls, workdir, total, concurrency)]
            results.append(await api_alone(urls, workdir, total, concurrency))
            for orchestrators in (1, 2):
                measured = await orchestrated(urls, workdir, orchestrators, total, concurrency)
                assert measured.paced is not None
                results.extend((measured.burst, measured.paced))
    return results


async def against(baseline: Path, total: int, concurrency: int, rounds: int) -> None:
    """One orchestrator's burst through this checkout and through ``baseline``, ``rounds`` times, in turn."""
    rates: list[float] = []
    cpus: list[float] = []
    with tempfile.TemporaryDirectory(prefix="vg-bench-") as tmp:
        workdir = Path(tmp)
        async with engines(workdir) as urls:
            for n in range(rounds):
                this = await orchestrated(urls, workdir, 1, total, concurrency, tag=f"this{n}", pace=False)
                before = await orchestrated(
                    urls, workdir, 1, total, concurrency, checkout=baseline, tag=f"base{n}", pace=False
                )
                rates.append(this.burst.rate / before.burst.rate)
                cpu = this.cpu_ms_per_generation, before.cpu_ms_per_generation
                cpus.append(cpu[0]["orchestrator-0"] / cpu[1]["orchestrator-0"])
                print(this.burst.line(), before.burst.line(), sep="\n", flush=True)
    print(
        "1 orchestrator, burst, this checkout / the baseline's, by round: rate "
        + ", ".join(f"{r:.2f}" for r in rates)
        + f" (median {statistics.median(rates):.2f}); orchestrator CPU per generation "
        + ", ".join(f"{c:.2f}" for c in cpus)
        + f" (median {statistics.median(cpus):.2f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--generations", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--baseline", type=Path, help="another checkout to compare one orchestrator with")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if args.baseline is not None:
        baseline = args.baseline.resolve()
        if not (baseline / ".venv" / "bin" / "videogen").exists():
            parser.error(f"{baseline} has no .venv: run `make install` there first")
        asyncio.run(against(baseline, args.generations, args.concurrency, args.rounds))
        return
    results = asyncio.run(run(args.generations, args.concurrency))
    for result in results:
        print(result.line())
    ceiling, api, one, _, two, _ = results
    for label, result in (("1 orchestrator ", one), ("2 orchestrators", two)):
        print(
            f"{label} / runner alone = {result.rate / ceiling.rate:.2f}"
            f"   / api alone = {result.rate / api.rate:.2f}"
        )
    print(f"2 orchestrators / 1 orchestrator = {two.rate / one.rate:.2f}")


if __name__ == "__main__":
    main()
