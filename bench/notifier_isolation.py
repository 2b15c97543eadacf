"""Deliveries per second of one notifier process to 10 healthy endpoints, alone and with 10 black-hole
endpoints beside them (endpoints that never answer), through the real path: events on Kafka → the notifier's
agent → delivery records → signed POSTs. The second figure should be at least 90% of the first.

A third run is the control: the other account's 10 endpoints are healthy instead (they answer at once, and
are not counted). It carries the same events, so it shows what the neighbour's traffic costs the shared
store whatever its endpoints do; the black holes cost the healthy endpoints nothing more if the second
figure is at least the third.

    .venv/bin/python -m bench.notifier_isolation [--events N] [--rounds N] [--no-control]
        [--write-concerns A,B]

The machine is shared and noisy, so the figure is the median ratio of ``--rounds`` pairs of runs, each pair
measured back to back. With more than one of ``--write-concerns`` (default: the durable one alone), each round
measures its pair once per write concern (the notifier and the benchmark's own client both use it), so the
cost of the durable path is stated beside a faster one measured in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
from aiokafka import AIOKafkaProducer

from bench.common import EngineUrls, cpu_seconds, engines, migrated_store, python_process
from videogen.engines import free_port, wait_for_http
from videogen.keys import create_key
from videogen_common.clock import SystemClock
from videogen_common.domain import Provider, Status
from videogen_common.events import event_message
from videogen_common.generations import new_generation, terminal_event
from videogen_common.ids import new_id
from videogen_common.records.event import Event
from videogen_common.records.generation import GenerationRecord
from videogen_common.store import Durability
from videogen_common.topics import Topics

HEALTHY, NEIGHBOURS = 10, 10
# The other account's endpoints, by run: none, black holes (/hole), or healthy but not counted (/twin).
ALONE, HOLES, TWINS = None, "hole", "twin"
LABELS = {
    ALONE: "10 healthy endpoints alone",
    HOLES: "10 healthy beside 10 black holes",
    TWINS: "10 healthy beside 10 healthy (control)",
}


async def add_endpoints(
    session: aiohttp.ClientSession, api: str, key: str, base: str, kind: str, count: int
) -> None:
    """Register ``count`` endpoints through the api's ``POST /v1/webhooks`` (the real creation, so the
    endpoint documents the notifier reads are the ones the service writes)."""
    for n in range(count):
        async with session.post(
            f"{api}/v1/webhooks",
            json={"url": f"{base}/{kind}/{n}", "events": ["video.completed"]},
            headers={"Authorization": f"Bearer {key}"},
        ) as response:
            if response.status != 201:
                raise RuntimeError(f"POST /v1/webhooks: HTTP {response.status}: {await response.text()}")


@contextlib.asynccontextmanager
async def endpoints_api(env: dict[str, str], workdir: Path, run: str) -> AsyncIterator[str]:
    """An api process on the benchmark's database for the setup only: it is stopped before the notifier
    starts, so it costs the measured run nothing."""
    port = free_port()
    api_env = {**env, "VIDEOGEN_API_PORT": str(port), "VIDEOGEN_WEBHOOK_ALLOW_HTTP": "true"}
    async with python_process(["-m", "videogen_api.main"], api_env, workdir / f"api-{run}.log"):
        await wait_for_http(f"http://127.0.0.1:{port}/healthz")
        yield f"http://127.0.0.1:{port}"


def completed_event(account: str) -> Event:
    """A ``video.completed`` event as the orchestrator publishes it (the bench does not store it: the
    notifier's settling finds no record, as it found no generation before events were records)."""
    now = SystemClock().now()
    doc = new_generation(
        generation_id=new_id("gen", now),
        account_id=account,
        prompt="bench",
        provider=Provider.MOCK,
        duration=3,
        now=now,
    )
    doc.update(status=Status.COMPLETED.value, version=3)
    return terminal_event(GenerationRecord.from_doc(doc))


async def measure(
    urls: EngineUrls,
    workdir: Path,
    events: int,
    beside: str | None,
    run_no: int,
    concern: Durability = Durability.MAJORITY_JOURNALED,
) -> float:
    """Deliveries/s to the healthy endpoints, from the first measured event published (once a warm-up event
    has been delivered) to the last healthy delivery; ``beside``: the other account's endpoints, if any."""
    db = f"bench_{beside or 'alone'}_{run_no}"
    prefix = f"b{int(time.time())}{beside or 'alone'}{run_no}."
    client, store = await migrated_store(urls, workdir, db, prefix, durability=concern)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    async with python_process(
        ["-m", "bench.receivers_app", str(port)], {}, workdir / "receivers.log"
    ) as receivers:
        await wait_for_http(f"{base}/healthz")
        env = {
            "VIDEOGEN_KAFKA_BOOTSTRAP": urls.kafka,
            "VIDEOGEN_MONGO_URL": urls.mongo,
            "VIDEOGEN_MONGO_DB": db,
            "VIDEOGEN_TOPIC_PREFIX": prefix,
            "VIDEOGEN_DATA_DIR": str(workdir / "data"),
            "VIDEOGEN_NOTIFIER_GROUP": f"bench-{prefix}",
            "VIDEOGEN_WEBHOOK_ALLOW_CIDRS": "127.0.0.0/8",
            "VIDEOGEN_NOTIFIER_PORT": "0",  # its probes and metrics server, on any free port
            "VIDEOGEN_LOG_LEVEL": "WARNING",
            "VIDEOGEN_MONGO_WRITE_CONCERN": concern.value,
        }
        async with endpoints_api(env, workdir, db) as api, aiohttp.ClientSession() as session:
            await add_endpoints(session, api, await create_key(store, "healthy"), base, "ok", HEALTHY)
            if beside is not None:
                await add_endpoints(session, api, await create_key(store, "other"), base, beside, NEIGHBOURS)
        async with (
            python_process(["-m", "videogen_notifier.main"], env, workdir / f"notifier-{db}.log") as notifier,
            aiohttp.ClientSession() as session,
        ):
            pids = {
                "store": urls.store_pid,
                "broker": urls.broker_pid,
                "notifier": notifier.pid,
                "receivers": receivers.pid,
                "bench": None,
            }
            producer = AIOKafkaProducer(bootstrap_servers=urls.kafka, enable_idempotence=False, linger_ms=5)
            await producer.start()
            topic = Topics(prefix).events

            async def publish(account: str) -> None:
                event = completed_event(account)
                await producer.send(topic, event_message(event), key=event.subject_id.encode())

            async def delivered(count: int) -> None:
                done = 0
                while done < count:  # the receivers count, so polling costs the store nothing
                    await asyncio.sleep(0.05)
                    async with session.get(f"{base}/count") as response:
                        done = int(await response.text())

            # One event delivered before the clock starts: the notifier has joined its consumer group and
            # is sending, so the figure is its delivery rate, not its start-up (some 5-7 s here).
            await publish("healthy")
            await producer.flush()
            await delivered(HEALTHY)
            target = events * HEALTHY
            started = time.perf_counter()
            cpu_before = {name: cpu_seconds(pid) for name, pid in pids.items()}
            for i in range(events):
                for account in ("healthy",) if beside is None else ("healthy", "other"):
                    await publish(account)
                if i % 100 == 0:
                    await producer.flush()
            await producer.flush()
            await delivered(HEALTHY + target)
            elapsed = time.perf_counter() - started
            cpu = {name: cpu_seconds(pid) - cpu_before[name] for name, pid in pids.items()}
            await producer.stop()
    await client.close()  # the store's files go with the temporary directory
    rate = target / elapsed
    print(
        f"{LABELS[beside]} [{concern.value}]: {rate:.0f} deliveries/s ({target} in {elapsed:.1f} s)",
        flush=True,
    )
    # CPU each process used while the clock ran, per healthy delivery: where the time went.
    shares = ", ".join(f"{name} {seconds / target * 1000:.2f}" for name, seconds in cpu.items())
    print(f"  CPU ms per healthy delivery: {shares}", flush=True)
    return rate


@dataclass
class Figures:
    """One write concern's runs: the ratio of each pair, and the rates alone and beside the black holes."""

    ratios: list[float] = field(default_factory=list)
    alone: list[float] = field(default_factory=list)
    beside_holes: list[float] = field(default_factory=list)


async def run(
    events: int, rounds: int, control: bool, concerns: list[Durability]
) -> tuple[dict[Durability, Figures], float | None]:
    """``rounds`` pairs of runs (alone, beside black holes) per write concern, the pair's order alternating so
    that a drift in the machine's speed favours neither; then the control, once, with the first concern.
    Returns each concern's figures and the control's rate."""
    figures = {concern: Figures() for concern in concerns}
    for n in range(rounds):
        for concern in concerns if n % 2 == 0 else concerns[::-1]:
            # Fresh engines for each pair: one run's data does not weigh on the next's store.
            with tempfile.TemporaryDirectory(prefix="vg-bench-") as tmp:
                async with engines(Path(tmp)) as urls:
                    order = (ALONE, HOLES) if n % 2 == 0 else (HOLES, ALONE)
                    rates = {
                        beside: await measure(urls, Path(tmp), events, beside, n, concern) for beside in order
                    }
            fig = figures[concern]
            fig.ratios.append(rates[HOLES] / rates[ALONE])
            fig.alone.append(rates[ALONE])
            fig.beside_holes.append(rates[HOLES])
            print(f"round {n + 1} [{concern.value}]: ratio {fig.ratios[-1]:.2f}", flush=True)
    twins = None
    if control:
        with tempfile.TemporaryDirectory(prefix="vg-bench-") as tmp:
            async with engines(Path(tmp)) as urls:
                twins = await measure(urls, Path(tmp), events, TWINS, rounds, concerns[0])
    return figures, twins


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--events",
        type=int,
        default=600,
        help="events per account and run (x10 deliveries); enough that the black holes' attempts "
        "time out and their breakers open within the measurement",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="pairs of runs (alone, beside black holes); the figure is the median of their ratios",
    )
    parser.add_argument("--no-control", action="store_true", help="skip the control run")
    parser.add_argument(
        "--write-concerns",
        default=Durability.MAJORITY_JOURNALED.value,
        help="comma-separated write concerns to measure in turn, the first one the figure "
        f"(choices: {', '.join(c.value for c in Durability)})",
    )
    args = parser.parse_args()
    concerns = [Durability(name.strip()) for name in args.write_concerns.split(",") if name.strip()]
    figures, twins = asyncio.run(run(args.events, args.rounds, not args.no_control, concerns))
    for concern, fig in figures.items():
        listed = ", ".join(f"{r:.2f}" for r in fig.ratios)
        print(
            f"[{concern.value}] ratio: {statistics.median(fig.ratios):.2f} "
            f"(median of {listed}; target >= 0.90); "
            f"alone {statistics.median(fig.alone):.0f}/s, beside black holes "
            f"{statistics.median(fig.beside_holes):.0f}/s (medians)"
        )
    first = figures[concerns[0]]
    for concern in concerns[1:]:
        cost = statistics.median(first.alone) / statistics.median(figures[concern].alone)
        print(f"alone, {concerns[0].value} / {concern.value}: {cost:.2f}")
    if twins is not None:
        control = statistics.median(first.beside_holes) / twins
        print(f"beside black holes / beside healthy (control): {control:.2f}")


if __name__ == "__main__":
    main()
