"""Admission to a provider with a concurrency limit: how much of the provider's capacity the orchestrator
uses, how fairly it shares it between accounts, how often the provider has to refuse, what each generation
costs the orchestrator and the store, and whether 10,000 waiting generations slow anything down.

    .venv/bin/python -m bench.provider_capacity [--limit 8] [--task-seconds 2] [--big 96] [--small 32]

The provider is the tests' fake of Luma's API in a process of its own (``bench.fake_provider``: at most
``--limit`` tasks per key at once, 429 beyond, each task ``--task-seconds`` long); the orchestrator is two
instances (runner, admission, actor, reconciler, as ``runtime.py`` wires them) in this process over the real
store, without Kafka: generations are created as the api creates them and handed to the instances in turn.

1. **Capacity and fairness.** One account sends ``--big`` generations first, three others ``--small`` each
   right after; our limit equals the provider's. Throughput (generations completed per second, from the first
   start to the last completion) ÷ the provider's capacity (limit ÷ task time), beside the same ratio for a
   bare client in this process keeping the provider full with the same poll interval and no store (the
   baseline);
   Jain's fairness index over the accounts' shares of the provider's slots, sampled while every account had
   work waiting; 429s per
   generation; store commands and orchestrator CPU per generation.
2. **A limit set too high.** Our limit twice the provider's, one account: 429s per generation and throughput.
3. **10,000 waiting.** A provider held full with 10,000 generations in line (10 accounts): the time to choose
   the next one to start (``next_waiting``) and a reconciler pass, and the rate of starting new generations at
   another provider, beside the same with 10 waiting, in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import secrets
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import orjson

from bench.common import Commands, EngineUrls, cpu_seconds, engines, migrated_store
from videogen_common.clock import SystemClock
from videogen_common.domain import Provider
from videogen_common.events import Envelope
from videogen_common.generations import new_generation
from videogen_common.ids import new_id
from videogen_common.media import open_media_store
from videogen_common.records.admission import Holder, ProviderPool
from videogen_common.records.event import Event
from videogen_common.repositories.generations import GenerationRepository
from videogen_common.repositories.provider_pools import ProviderPoolRepository
from videogen_common.repositories.waiting import WaitingRepository
from videogen_common.settings import load_settings
from videogen_common.store import Store, connect
from videogen_orchestrator.admission import Admission
from videogen_orchestrator.assembly import Resources, assemble
from videogen_orchestrator.providers.registry import build_providers, close_providers
from videogen_orchestrator.reconciler import Reconciler
from videogen_orchestrator.runner import Runner
from videogen_orchestrator.settings import OrchestratorSettings

POLL_S = 0.05
PROMPT = "a red fox running through fresh snow at dawn"


class Finishes:
    """The status sink: when each generation finished, and its account."""

    def __init__(self) -> None:
        self.at: dict[str, float] = {}
        self.account: dict[str, str] = {}
        self.failed = 0
        self._changed = asyncio.Event()

    async def send(self, envelope: Envelope) -> None:
        status = envelope.generation["status"]
        if status in ("completed", "failed"):
            self.at.setdefault(envelope.generation_id, time.perf_counter())
            self.account[envelope.generation_id] = envelope.account_id
            self.failed += status == "failed"
            self._changed.set()

    async def send_event(self, event: Event) -> None:
        """Events (the webhooks' side) are not measured here."""

    async def all_of(self, ids: list[str], timeout: float) -> None:
        async with asyncio.timeout(timeout):
            while any(i not in self.at for i in ids):
                self._changed.clear()
                await self._changed.wait()


@dataclass
class Fake:
    base_url: str
    origin: str
    api_key: str
    process: asyncio.subprocess.Process

    async def stats(self) -> dict[str, int]:
        async with aiohttp.ClientSession() as session, session.get(f"{self.origin}/stats") as response:
            found: dict[str, int] = await response.json()
            return found


@contextlib.asynccontextmanager
async def fake_provider(task_seconds: float, max_running: int) -> AsyncIterator[Fake]:
    process = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "bench.fake_provider"),
        *("--task-seconds", str(task_seconds), "--max-running", str(max_running)),
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        line = orjson.loads(await process.stdout.readline())
        yield Fake(line["base_url"], line["origin"], line["api_key"], process)
    finally:
        process.terminate()
        await process.wait()


@dataclass
class Wiring:
    """Two orchestrator instances in this process, as runtime.py wires them, on one store client that counts
    its commands."""

    settings: OrchestratorSettings
    store: Store
    commands: Commands
    sink: Finishes = field(default_factory=Finishes)
    runners: list[Runner] = field(default_factory=list)
    reconcilers: list[Reconciler] = field(default_factory=list)
    admissions: list[Admission] = field(default_factory=list)


@contextlib.asynccontextmanager
async def wired(urls: EngineUrls, workdir: Path, fake: Fake, **settings: Any) -> AsyncIterator[Wiring]:
    db = f"bench_{secrets.token_hex(4)}"
    client, _ = await migrated_store(urls, workdir, db, f"b{db}.")
    await client.close()
    commands = Commands()
    client, store = connect(urls.mongo, db, app_name="bench", event_listeners=[commands])
    base = load_settings(
        OrchestratorSettings,
        mongo_url=urls.mongo,
        mongo_db=db,
        data_dir=workdir / db,
        providers="mock,luma",
        luma_api_key=fake.api_key,
        luma_base_url=fake.base_url,
        poll_interval_seconds=POLL_S,
        account_max_in_flight=10_000,
        max_in_flight=256,
        **settings,
    )
    wiring = Wiring(base, store, commands)
    clock = SystemClock()
    providers = build_providers(base)
    async with open_media_store(base) as media:
        for name in ("orch-a", "orch-b"):
            settings_of = base.model_copy(update={"orchestrator_instance": name})
            parts = assemble(Resources(settings_of, store, media, providers, wiring.sink, clock))
            wiring.runners.append(parts.runner)
            wiring.reconcilers.append(parts.reconciler)
            wiring.admissions.append(parts.admission)
        try:
            yield wiring
        finally:
            for runner in wiring.runners:
                await runner.stop()
            await close_providers(providers)
            await client.close()


async def create(store: Store, account: str, count: int, provider: str = "luma") -> list[str]:
    """Generations as the api creates them."""
    clock = SystemClock()
    docs = []
    for _ in range(count):
        now = clock.now()
        docs.append(
            new_generation(
                generation_id=new_id("gen", now),
                account_id=account,
                prompt=PROMPT,
                provider=Provider(provider),
                duration=5,
                now=now,
            )
        )
    await GenerationRepository(store).insert_batch(docs)
    return [doc["_id"] for doc in docs]


@contextlib.asynccontextmanager
async def sampling_shares(urls: EngineUrls, db: str, accounts: list[str]) -> AsyncIterator[Counter[str]]:
    """Each account's slots at the provider, summed over samples taken every 0.1 s while every account has
    work waiting (through a client of its own, so the samples are not counted as the orchestrator's)."""
    client, store = connect(urls.mongo, db, app_name="bench-sampler")
    shares: Counter[str] = Counter()

    async def sample() -> None:
        pools, lines = ProviderPoolRepository(store), WaitingRepository(store)
        while True:
            waiting = {lane.account_id for lane in await lines.pending_at("luma") if lane.waiting > 0}
            if waiting >= set(accounts):
                for pool in await pools.of_provider("luma"):
                    shares.update(pool.running_by_account())
            await asyncio.sleep(0.1)

    task = asyncio.create_task(sample())
    try:
        yield shares
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await client.close()


def jain(shares: list[float]) -> float:
    return sum(shares) ** 2 / (len(shares) * sum(s * s for s in shares)) if any(shares) else 1.0


async def at_capacity(urls: EngineUrls, workdir: Path, args: argparse.Namespace, ours: int) -> dict[str, Any]:
    """Scenario 1 (``ours`` = the provider's limit) or 2 (above it, one account)."""
    async with (
        fake_provider(args.task_seconds, args.limit) as fake,
        wired(urls, workdir, fake, luma_max_concurrency=ours) as wiring,
    ):
        fair = ours == args.limit
        accounts = {"big": args.big} | ({f"small-{n}": args.small for n in range(3)} if fair else {})
        ids = [
            gid for account, count in accounts.items() for gid in await create(wiring.store, account, count)
        ]
        commands, cpu, store_cpu = wiring.commands.count, cpu_seconds(), cpu_seconds(urls.store_pid)
        started = time.perf_counter()
        for n, gid in enumerate(ids):  # arrivals, in order, shared between the two instances
            await wiring.runners[n % 2].start(gid)
        async with sampling_shares(urls, wiring.settings.mongo_db, list(accounts)) as shares:
            await wiring.sink.all_of(ids, timeout=args.big * args.task_seconds * 4 + 120)
        elapsed = max(wiring.sink.at.values()) - started
        commands = wiring.commands.count - commands
        cpu, store_cpu = cpu_seconds() - cpu, cpu_seconds(urls.store_pid) - store_cpu
        stats = await fake.stats()
        capacity = args.limit / args.task_seconds
        return {
            "generations": len(ids),
            "failed": wiring.sink.failed,
            "seconds": elapsed,
            "throughput": len(ids) / elapsed,
            "ratio": len(ids) / elapsed / capacity,
            "jain": jain([float(shares[account]) for account in accounts]),
            "shares": {account: round(share / sum(shares.values()), 3) for account, share in shares.items()},
            "refusals_per_generation": stats["capacity_refusals"] / len(ids),
            "peak_running": stats["peak_running"],
            "commands_per_generation": commands / len(ids),
            "cpu_ms_per_generation": cpu / len(ids) * 1000,
            "store_cpu_ms_per_generation": store_cpu / len(ids) * 1000,
        }


async def bare_client(args: argparse.Namespace) -> float:
    """The baseline: ``limit`` workers in this process keep the fake full (submit, poll every POLL_S until it
    is done, fetch the video), with no store and no orchestrator. Throughput ÷ capacity."""
    count = args.big + 3 * args.small
    async with (
        fake_provider(args.task_seconds, args.limit) as fake,
        aiohttp.ClientSession(headers={"Authorization": f"Bearer {fake.api_key}"}) as session,
    ):
        remaining = count

        async def worker() -> None:
            nonlocal remaining
            while remaining > 0:
                remaining -= 1
                body = {"generation_type": "video", "prompt": PROMPT, "model": "ray-2", "resolution": "720p",
                        "aspect_ratio": "16:9", "duration": "5s"}  # fmt: skip
                async with session.post(f"{fake.base_url}/generations", json=body) as response:
                    task = await response.json()
                while True:
                    async with session.get(f"{fake.base_url}/generations/{task['id']}") as response:
                        task = await response.json()
                    if task["state"] in ("completed", "failed"):
                        break
                    await asyncio.sleep(POLL_S)
                async with session.get(task["assets"]["video"]) as response:
                    await response.read()

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(args.limit)))
        ratio: float = count / (time.perf_counter() - started) / (args.limit / args.task_seconds)
        return ratio


async def with_waiting(urls: EngineUrls, workdir: Path, waiting: int) -> dict[str, float]:
    """Scenario 3 with ``waiting`` generations in line at a provider held full (10 accounts)."""
    async with fake_provider(1.0, 1000) as fake, wired(urls, workdir, fake, luma_max_concurrency=1) as wiring:
        store, runner, admission = wiring.store, wiring.runners[0], wiring.admissions[0]
        pools, lines = ProviderPoolRepository(store), WaitingRepository(store)
        await admission.register()
        [pool] = await pools.of_provider("luma")
        assert await pools.take(pool, "gen_holder", "holder", SystemClock().now())  # never gives it back
        per_account = max(1, waiting // 10)
        ids = [gid for n in range(10) for gid in await create(store, f"acct-{n}", per_account)]
        semaphore = asyncio.Semaphore(32)

        async def put_in_line(gid: str) -> None:
            async with semaphore:
                await runner.start(gid)  # no room: it joins its account's line

        await asyncio.gather(*(put_in_line(gid) for gid in ids))
        await runner.wait_idle()  # the wake-ups their joining made have looked (and found no room)
        assert sum((lane.waiting for lane in await lines.pending_at("luma")), 0) == len(ids)
        # Choosing the next: give the pool one free place (its limit 2), and time next_waiting alone.
        await pools.register(
            ProviderPool(pool.id, "luma", None, 2, 2, holders=(Holder("gen_holder", "holder"),))
        )
        rounds = 50
        started = time.perf_counter()
        for _ in range(rounds):
            assert await admission.next_waiting("luma") is not None
        choose_ms = (time.perf_counter() - started) / rounds * 1000
        await pools.register(ProviderPool(pool.id, "luma", None, 1, 1))  # full again
        # A reconciler pass with the line full.
        before = wiring.commands.count
        started = time.perf_counter()
        for _ in range(10):
            await wiring.reconcilers[0].run_once()
        pass_ms = (time.perf_counter() - started) / 10 * 1000
        pass_commands = (wiring.commands.count - before) / 10
        # Starting new generations at another provider (the mock, no limit) beside the line.
        fresh = await create(store, "fresh", 300, provider="mock")
        started = time.perf_counter()
        for gid in fresh:
            await runner.start(gid)
        await wiring.sink.all_of(fresh, timeout=120)
        start_rate = len(fresh) / (max(wiring.sink.at[gid] for gid in fresh) - started)
        return {
            "choose_ms": choose_ms,
            "pass_ms": pass_ms,
            "pass_commands": pass_commands,
            "start_rate": start_rate,
        }


async def run(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-capacity-") as tmp:
        workdir = Path(tmp)
        async with engines(workdir) as urls:
            baseline = await bare_client(args)
            fair = await at_capacity(urls, workdir, args, ours=args.limit)
            too_high = await at_capacity(urls, workdir, args, ours=2 * args.limit)
            few = await with_waiting(urls, workdir, 10)
            many = await with_waiting(urls, workdir, 10_000)
    capacity = args.limit / args.task_seconds
    print(f"provider: {args.limit} at once, {args.task_seconds:g} s a task: capacity {capacity:.2f}/s")
    print(f"baseline, a bare client keeping it full:   {baseline:.3f} of capacity")
    print(
        f"1. fair share, our limit = the provider's:  {fair['ratio']:.3f} of capacity "
        f"({fair['generations']} in {fair['seconds']:.1f} s, {fair['failed']} failed); "
        f"÷ baseline {fair['ratio'] / baseline:.3f}"
    )
    print(f"   Jain's index over the slots' shares while all waited: {fair['jain']:.3f}  {fair['shares']}")
    print(
        f"   429s per generation {fair['refusals_per_generation']:.3f}, peak at the provider "
        f"{fair['peak_running']}; per generation: {fair['commands_per_generation']:.1f} store commands, "
        f"{fair['cpu_ms_per_generation']:.2f} ms orchestrator CPU, "
        f"{fair['store_cpu_ms_per_generation']:.2f} ms store CPU"
    )
    print(
        f"2. our limit twice the provider's: {too_high['ratio']:.3f} of capacity, "
        f"{too_high['refusals_per_generation']:.3f} 429s per generation, {too_high['failed']} failed, "
        f"peak {too_high['peak_running']}"
    )
    print("3. beside 10 waiting → beside 10,000 waiting (ratio):")
    for name, unit in (("choose_ms", "ms"), ("pass_ms", "ms"), ("pass_commands", ""), ("start_rate", "/s")):
        print(
            f"   {name:<14} {few[name]:9.2f}{unit} → {many[name]:9.2f}{unit}  ({many[name] / few[name]:.2f})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--limit", type=int, default=8)
    parser.add_argument("--task-seconds", type=float, default=2.0)
    parser.add_argument("--big", type=int, default=96)
    parser.add_argument("--small", type=int, default=32)
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
