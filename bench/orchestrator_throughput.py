"""Generations per second from request to ``completed``, with the mock provider at zero latency, through one
and through two orchestrator processes, and the p50/p99 of that latency; beside two baselines measured in the
same run: the api's creation rate alone (nothing consumes the requests) and the store's rate of the
orchestrator's own per-generation round trips, replayed without Kafka, providers or media.

    .venv/bin/python -m bench.orchestrator_throughput [--generations N] [--concurrency C]

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
import contextlib
import secrets
import tempfile
import time
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import aiohttp
import orjson
from aiokafka import AIOKafkaConsumer

from bench.common import EngineUrls, Result, closed_loop, cpu_seconds, engines, migrated_store, python_process
from videogen.engines import free_port, wait_for_http
from videogen.keys import create_key
from videogen_common.clock import SystemClock
from videogen_common.domain import Provider
from videogen_common.events import Envelope
from videogen_common.generations import new_generation
from videogen_common.ids import new_id
from videogen_common.repositories.indexes import ensure_indexes
from videogen_common.store import Store, connect
from videogen_common.topics import Topics

BODY = orjson.dumps(
    {"prompt": "a red fox running through fresh snow at dawn", "provider": "mock", "duration": 3}
)
WARM_UP = 50


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


async def orchestrated(
    urls: EngineUrls, workdir: Path, orchestrators: int, total: int, concurrency: int
) -> tuple[Result, Result]:
    """Burst and paced runs through the api and ``orchestrators`` orchestrator processes."""
    tag = f"o{orchestrators}"
    db, prefix = f"bench_{tag}", f"{tag}{secrets.token_hex(3)}."
    client, store = await migrated_store(urls, workdir, db, prefix)
    key = await create_key(store, "bench")
    env = env_for(urls, workdir, db, prefix)
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
                )
            )
            pids[f"orchestrator-{n}"] = proc.pid
            await wait_for_http(f"http://127.0.0.1:{port}/readyz", timeout=60)
        proc = await stack.enter_async_context(
            python_process(
                ["-m", "videogen_api.main"],
                {**env, "VIDEOGEN_API_PORT": str(api_port)},
                workdir / f"api-{tag}.log",
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
        label = f"{orchestrators} orchestrator{'s' if orchestrators > 1 else ''}"
        before = {name: cpu_seconds(pid) for name, pid in pids.items()}
        fast = await burst(f"{label}: burst", api, completions, total, concurrency)
        spent = {name: cpu_seconds(pid) - before[name] for name, pid in pids.items()}
        per_generation = ", ".join(f"{name} {cpu * 1000 / total:.1f}" for name, cpu in spent.items())
        print(
            f"{fast.name}: CPU ms per generation: {per_generation}"
            f"   ({sum(spent.values()) / fast.seconds:.2f} cores busy)",
            flush=True,
        )
        slow = await paced(
            f"{label}: paced at {fast.rate / 2:.0f}/s", api, completions, max(100, total // 4), fast.rate / 2
        )
        stored = await inside(store, f"{slow.name}, insert → terminal write", list(api.sent)[-slow.count :])
        print(
            f"{stored.name}: p50 {stored.pct(0.5):.0f} ms   p99 {stored.pct(0.99):.0f} ms"
            f"   (n={stored.count})",
            flush=True,
        )
    await client.close()
    return fast, slow


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


async def orchestrator_round_trips(store: Store, generation_id: str, owner: str) -> None:
    """The store round trips the orchestrator makes for one mock generation, in its order and shapes (the
    runner's claim and read-back, the account slot, the actor's task id, ownership check and terminal write,
    the outbox flag, the slot's release and the look for a waiting generation). The outbox is settled by the
    notifier, not here."""
    generations, slots = store.generations, store.account_slots
    now = SystemClock().now()
    await generations.update_one(
        {
            "_id": generation_id,
            "status": {"$in": ["queued", "processing"]},
            "lease_expires_at": {"$not": {"$gte": now}},
        },
        {
            "$set": {
                "lease_owner": owner,
                "lease_expires_at": now + timedelta(seconds=30),
                "lease_token": "t",
            },
            "$unset": {"slot_wait": ""},
            "$inc": {"attempts": 1},
        },
    )
    doc = await generations.find_one({"_id": generation_id})
    assert doc is not None
    await slots.update_one(
        {"_id": "bench", "holders.99999": {"$exists": False}, "holders": {"$ne": generation_id}},
        {"$push": {"holders": generation_id}},
    )
    mine = {"_id": generation_id, "lease_owner": owner}
    await generations.update_one(
        {**mine, "version": 1},
        {"$set": {"provider_task_id": f"mock_{generation_id}"}, "$inc": {"version": 1}},
    )
    await generations.find_one({**mine, "version": 2}, projection={"_id": 1})
    await generations.update_one(
        {**mine, "status": "processing", "version": 2},
        {
            "$set": {
                "status": "completed",
                "video_url": "x",
                "thumbnail_url": "y",
                "outbox_pending": True,
                "outbox_at": now,
                "lease_owner": None,
                "lease_expires_at": None,
            },
            "$inc": {"version": 1},
        },
    )
    await slots.update_one({"_id": "bench", "holders": generation_id}, {"$pull": {"holders": generation_id}})
    await generations.find_one(
        {"slot_wait": {"$gt": "bench\n", "$lt": "bench\x0b"}},
        projection={"status": 1},
        sort=[("slot_wait", 1)],
    )


async def store_alone(urls: EngineUrls, total: int, concurrency: int) -> Result:
    client, store = connect(urls.mongo, "bench_store", app_name="bench")
    await ensure_indexes(store)
    await store.account_slots.insert_one({"_id": "bench", "holders": []})
    now = SystemClock().now()
    ids = []
    docs = []
    for _ in range(total + WARM_UP):
        doc = new_generation(
            generation_id=new_id("gen", now),
            account_id="bench",
            prompt="x" * 44,
            provider=Provider.MOCK,
            duration=3,
            now=now,
        )
        docs.append(doc)
        ids.append(doc["_id"])
    await store.generations.insert_many(docs)
    pending = iter(ids)

    async def op() -> None:
        await orchestrator_round_trips(store, next(pending), "bench")

    await closed_loop("warm-up", op, total=WARM_UP, concurrency=concurrency)
    before = cpu_seconds(urls.store_pid), cpu_seconds()
    result = await closed_loop(
        "store alone: the orchestrator's 9 round trips", op, total=total, concurrency=concurrency
    )
    store_cpu, load_cpu = cpu_seconds(urls.store_pid) - before[0], cpu_seconds() - before[1]
    print(
        f"{result.name}: CPU ms per generation: store {store_cpu * 1000 / total:.1f},"
        f" client {load_cpu * 1000 / total:.1f}",
        flush=True,
    )
    await client.close()
    return result


async def run(total: int, concurrency: int) -> list[Result]:
    with tempfile.TemporaryDirectory(prefix="vg-bench-") as tmp:
        workdir = Path(tmp)
        async with engines(workdir) as urls:
            results = [await store_alone(urls, total, concurrency)]
            results.append(await api_alone(urls, workdir, total, concurrency))
            for orchestrators in (1, 2):
                results.extend(await orchestrated(urls, workdir, orchestrators, total, concurrency))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--generations", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    results = asyncio.run(run(args.generations, args.concurrency))
    for result in results:
        print(result.line())
    store, api, one, _, two, _ = results
    for label, result in (("1 orchestrator ", one), ("2 orchestrators", two)):
        print(
            f"{label} / store ceiling = {result.rate / store.rate:.2f}"
            f"   / api alone = {result.rate / api.rate:.2f}"
        )
    print(f"2 orchestrators / 1 orchestrator = {two.rate / one.rate:.2f}")


if __name__ == "__main__":
    main()
