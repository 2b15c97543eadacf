"""Provider callbacks against polling, in one run: what a generation costs the provider and the store, how
long a finished task waits to become a ``completed`` generation, and how much of the provider's capacity the
orchestrator uses.

    .venv/bin/python -m bench.provider_callbacks [--limit 8] [--task-seconds 2] [--jitter 0.25]
        [--generations 96] [--modes polled "polled fast" "called back" standby]

The provider is the tests' fake of Luma's API in this process (at most ``--limit`` tasks at once, 429
beyond, each ``--task-seconds`` long on average, ± ``--jitter`` of it drawn uniformly, the same draws in every
mode, so that tasks do not end in step with the polls; with a ``callback_url`` it posts the Generation there
when its state changes, as Luma does). The api runs in this process on 127.0.0.1 (the deployment's public base
URL: where the callbacks land), and the broker and the store are the real engines; the orchestrator is two
instances (runner, admission, actor, reconciler as ``runtime.py`` wires them, each with its callback feed when
callbacks are on) over one store client that counts its commands. ``--generations`` are created as the api
creates them, one account, our limit equal to the provider's, and handed to the instances in turn; three
modes, each on a database of its own:

- **polled**: the deployment's defaults (a poll every second at first, slower as the task ages);
- **polled fast**: polls every 50 ms (``bench.provider_capacity``'s setting, far more requests);
- **called back**: ``VIDEOGEN_PROVIDER_CALLBACKS`` on, the safety-net poll at its 60 s default;
- **standby**: called back, and each instance keeps the next generation claimed on standby for the slot its
  next ending task frees (``VIDEOGEN_ADMISSION_STANDBY``, the deployment's default; off in the modes above).

Per mode: provider requests per generation (creates, reads, 429s; the video's download aside), the
orchestrator's store commands per generation, the hand-over (from the moment the provider's task ended to
the generation's ``completed``: p50 and p90), the throughput ÷ the provider's capacity (limit ÷ task
time, from the first start to the last ``completed``: the drain at the end counts, when tasks of uneven length
leave slots empty with nothing left to start), and the slots used: the share of the provider's slots its
tasks held while generations still waited to start there (the orchestrator's own share of capacity: a slot
empty while work waited is a freed slot not yet seen, or not yet refilled).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import secrets
import statistics
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.common import Commands, EngineUrls, engines, migrated_store, python_process
from tests.support.fake_providers.common import FakeTask
from tests.support.fake_providers.luma import FakeLuma
from videogen.engines import free_port, wait_for_http
from videogen_common.clock import SystemClock
from videogen_common.domain import Provider
from videogen_common.events import Envelope
from videogen_common.generations import new_generation
from videogen_common.ids import new_id
from videogen_common.media import open_media_store
from videogen_common.records.event import Event
from videogen_common.repositories.generations import GenerationRepository
from videogen_common.settings import load_settings
from videogen_common.store import Store, connect
from videogen_common.topics import Topics
from videogen_orchestrator.assembly import Resources, assemble
from videogen_orchestrator.callback_feed import CallbackFeed
from videogen_orchestrator.providers.registry import build_providers, close_providers
from videogen_orchestrator.runner import Runner
from videogen_orchestrator.settings import OrchestratorSettings

PROMPT = "a red fox running through fresh snow at dawn"
MODES: dict[str, dict[str, Any]] = {
    "polled": {"admission_standby": False},
    "polled fast": {"poll_interval_seconds": 0.05, "admission_standby": False},
    "called back": {"provider_callbacks": True, "admission_standby": False},
    "standby": {"provider_callbacks": True},
}


class Finishes:
    """The status sink: when (wall time) each generation finished, and how."""

    def __init__(self) -> None:
        self.at: dict[str, float] = {}
        self.failed = 0
        self._changed = asyncio.Event()

    async def send(self, envelope: Envelope) -> None:
        status = envelope.generation["status"]
        if status in ("completed", "failed"):
            self.at.setdefault(envelope.generation_id, time.time())
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
class Wiring:
    settings: OrchestratorSettings
    store: Store
    commands: Commands
    sink: Finishes = field(default_factory=Finishes)
    runners: list[Runner] = field(default_factory=list)


@contextlib.asynccontextmanager
async def api_at(urls: EngineUrls, workdir: Path, db: str, prefix: str) -> AsyncIterator[str]:
    """The api on 127.0.0.1, a process of its own as deployed (its event loop not shared with the
    orchestrators'); yields its base URL."""
    port = free_port()
    env = {
        "VIDEOGEN_KAFKA_BOOTSTRAP": urls.kafka,
        "VIDEOGEN_MONGO_URL": urls.mongo,
        "VIDEOGEN_MONGO_DB": db,
        "VIDEOGEN_TOPIC_PREFIX": prefix,
        "VIDEOGEN_API_PORT": str(port),
        "VIDEOGEN_DATA_DIR": str(workdir / db),
        "VIDEOGEN_LOG_LEVEL": "WARNING",
        "VIDEOGEN_RATE_LIMIT_ENABLED": "false",
    }
    async with python_process(["-m", "videogen_api.main"], env, workdir / f"api-{db}.log"):
        base = f"http://127.0.0.1:{port}"
        await wait_for_http(f"{base}/healthz")
        yield base


@contextlib.asynccontextmanager
async def wired(
    urls: EngineUrls, workdir: Path, fake: FakeLuma, limit: int, **settings: Any
) -> AsyncIterator[Wiring]:
    db = f"bench_{secrets.token_hex(4)}"
    prefix = f"b{db}."
    client, _ = await migrated_store(urls, workdir, db, prefix)
    await client.close()
    commands = Commands()
    client, store = connect(urls.mongo, db, app_name="bench", event_listeners=[commands])
    async with api_at(urls, workdir, db, prefix) as api_url:
        base = load_settings(
            OrchestratorSettings,
            kafka_bootstrap=urls.kafka,
            mongo_url=urls.mongo,
            mongo_db=db,
            topic_prefix=prefix,
            data_dir=workdir / db,
            public_base_url=api_url,
            providers="luma",
            luma_api_key=fake.api_key,
            luma_base_url=fake.base_url,
            luma_max_concurrency=limit,
            account_max_in_flight=10_000,
            max_in_flight=256,
            **settings,
        )
        wiring = Wiring(base, store, commands)
        providers = build_providers(base)
        feeds: list[CallbackFeed] = []
        async with open_media_store(base) as media:
            for name in ("orch-a", "orch-b"):
                settings_of = base.model_copy(update={"orchestrator_instance": name})
                parts = assemble(Resources(settings_of, store, media, providers, wiring.sink, SystemClock()))
                wiring.runners.append(parts.runner)
                if base.provider_callbacks:
                    feed = CallbackFeed(urls.kafka, Topics(prefix).callbacks, parts.watch.wake)
                    feed.start()
                    feeds.append(feed)
            try:
                async with asyncio.timeout(30):
                    for feed in feeds:
                        await feed.ready.wait()
                yield wiring
            finally:
                for feed in feeds:
                    await feed.stop()
                for runner in wiring.runners:
                    await runner.stop()
                await close_providers(providers)
                await client.close()


async def create(store: Store, count: int) -> list[str]:
    clock = SystemClock()
    docs = []
    for _ in range(count):
        now = clock.now()
        docs.append(
            new_generation(
                generation_id=new_id("gen", now),
                account_id="bench",
                prompt=PROMPT,
                provider=Provider.LUMA,
                duration=5,
                now=now,
            )
        )
    await GenerationRepository(store).insert_batch(docs)
    return [doc["_id"] for doc in docs]


class JitteredLuma(FakeLuma):
    """The Luma fake, each new task's run time drawn around ``task_seconds`` (seeded: alike in each mode)."""

    def __init__(self, *, jitter: float, seed: int = 7, **knobs: Any) -> None:
        super().__init__(**knobs)
        self._jitter = jitter
        self._draws = random.Random(seed)

    def new_task(self, body: dict[str, Any]) -> FakeTask:
        task = super().new_task(body)
        task.run_seconds = self.task_seconds * (1 + self._draws.uniform(-self._jitter, self._jitter))
        return task


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def one_mode(urls: EngineUrls, workdir: Path, args: argparse.Namespace, mode: str) -> dict[str, Any]:
    async with JitteredLuma(task_seconds=args.task_seconds, jitter=args.jitter) as fake:
        fake.max_running = args.limit
        fake.serve_thumbnail = True  # the orchestrator copies it rather than decoding a frame
        async with wired(urls, workdir, fake, args.limit, **MODES[mode]) as wiring:
            ids = await create(wiring.store, args.generations)
            commands = wiring.commands.count
            started = time.time()
            for n, gid in enumerate(ids):
                await wiring.runners[n % 2].start(gid)
            await wiring.sink.all_of(ids, timeout=args.generations * args.task_seconds * 4 + 120)
            elapsed = max(wiring.sink.at.values()) - started
            commands = wiring.commands.count - commands
            stored = {
                doc["_id"]: doc["provider_task_id"]
                async for doc in wiring.store.generations.find({"_id": {"$in": ids}}, {"provider_task_id": 1})
            }
            handovers = [
                wiring.sink.at[gid] - _wall(fake.tasks[stored[gid]].ended_wall())
                for gid in ids
                if stored.get(gid) in fake.tasks
            ]
            provider_requests = sum(1 for _, path in fake.requests if not path.startswith("/files/"))
            busy = slots_used(list(fake.tasks.values()), args.limit)
            refills = refill_gaps(list(fake.tasks.values()))
            return {
                "generations": len(ids),
                "failed": wiring.sink.failed,
                "seconds": elapsed,
                "ratio": len(ids) / elapsed / (args.limit / args.task_seconds),
                "busy": busy,
                "requests_per_generation": provider_requests / len(ids),
                "refusals_per_generation": fake.capacity_refusals / len(ids),
                "commands_per_generation": commands / len(ids),
                "handover_p50_s": pct(handovers, 0.5),
                "handover_p90_s": pct(handovers, 0.9),
                "handover_mean_s": statistics.fmean(handovers),
                "callbacks": len(fake.callbacks),
                "refill_p50_s": pct(refills, 0.5),
                "refill_mean_s": statistics.fmean(refills),
            }


def slots_used(tasks: list[FakeTask], limit: int) -> float:
    """The share of the provider's slots its tasks held while generations still waited to start there: from
    the first task's create to the last's (after it, nothing waits, and the slots empty as the tasks end)."""
    opened = min(task.created_at for task in tasks)
    closed = max(task.created_at for task in tasks)
    held = sum(max(0.0, min(task.ends_at(), closed) - max(task.created_at, opened)) for task in tasks)
    return held / (limit * (closed - opened))


def refill_gaps(tasks: list[FakeTask]) -> list[float]:
    """For each task that ended while work still waited, how long its slot stood empty: from its end to the
    first create after it (each create refills one end, in order)."""
    closed = max(task.created_at for task in tasks)
    ends = sorted(task.ends_at() for task in tasks if task.ends_at() < closed)
    creates = sorted(task.created_at for task in tasks)
    gaps, i = [], 0
    for end in ends:
        while i < len(creates) and creates[i] < end:
            i += 1
        if i == len(creates):
            break
        gaps.append(creates[i] - end)
        i += 1
    return gaps


def _wall(moment: datetime) -> float:
    return moment.timestamp()


async def run(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-callbacks-") as tmp:
        workdir = Path(tmp)
        async with engines(workdir) as urls:
            results = {mode: await one_mode(urls, workdir, args, mode) for mode in args.modes}
    capacity = args.limit / args.task_seconds
    print(
        f"provider: {args.limit} at once, {args.task_seconds:g} s ± {args.jitter:.0%} a task "
        f"(capacity {capacity:.2f}/s); "
        f"{args.generations} generations per mode, two orchestrator instances"
    )
    print(
        f"{'mode':<12} {'provider req/gen':>16} {'429s/gen':>9} {'store cmd/gen':>14} "
        f"{'hand-over p50':>14} {'p90':>7} {'capacity':>9} {'slots used':>11} {'refill p50':>11} "
        f"{'mean':>7} {'failed':>7}"
    )
    for mode, r in results.items():
        print(
            f"{mode:<12} {r['requests_per_generation']:16.2f} {r['refusals_per_generation']:9.2f} "
            f"{r['commands_per_generation']:14.1f} {r['handover_p50_s']:13.3f}s {r['handover_p90_s']:6.3f}s "
            f"{r['ratio']:9.3f} {r['busy']:11.3f} {r['refill_p50_s']:10.3f}s {r['refill_mean_s']:6.3f}s "
            f"{r['failed']:7d}"
        )
    for mode in ("called back", "standby"):
        if mode in results:
            print(f"callbacks the provider sent ({mode}): {results[mode]['callbacks']}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--limit", type=int, default=8)
    parser.add_argument("--task-seconds", type=float, default=2.0)
    parser.add_argument("--jitter", type=float, default=0.25)
    parser.add_argument("--generations", type=int, default=96)
    parser.add_argument("--modes", nargs="+", choices=list(MODES), default=list(MODES))
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
