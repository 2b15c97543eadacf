"""Deliveries per second of one notifier process to 10 healthy endpoints, alone and with 10 black-hole
endpoints beside them (endpoints that never answer), through the real path: status events on Kafka → the
notifier's agent → delivery records → signed POSTs. The second figure should be at least 90% of the first.

    .venv/bin/python -m bench.notifier_isolation [--events N]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

import aiohttp
from aiokafka import AIOKafkaProducer

from bench.common import EngineUrls, engines, python_process
from videogen.engines import free_port, wait_for_http
from videogen.migrate import migrate
from videogen_common.clock import SystemClock, isoformat
from videogen_common.domain import Provider, Status
from videogen_common.events import STATUS, Envelope, status_event_id
from videogen_common.generations import new_generation, public_view
from videogen_common.ids import new_id
from videogen_common.settings import CommonSettings
from videogen_common.signing import new_webhook_secret
from videogen_common.store import Store, connect
from videogen_common.topics import Topics

HEALTHY, HOLES = 10, 10


async def add_endpoints(store: Store, account: str, base: str, kind: str, count: int) -> None:
    now = SystemClock().now()
    await store.webhooks.insert_many(
        [
            {
                "_id": new_id("wh", now),
                "account_id": account,
                "url": f"{base}/{kind}/{n}",
                "events": ["video.completed"],
                "secrets": [{"secret": new_webhook_secret(), "created_at": now, "expires_at": None}],
                "active": True,
                "created_at": now,
                "updated_at": now,
            }
            for n in range(count)
        ]
    )


def completed_event(account: str) -> Envelope:
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
    return Envelope(
        event_id=status_event_id(doc["_id"], "completed", 3),
        type=STATUS,
        occurred_at=isoformat(now),
        account_id=account,
        generation=public_view(doc),
    )


async def measure(urls: EngineUrls, workdir: Path, events: int, with_holes: bool) -> float:
    """Deliveries/s to the healthy endpoints, from the first event published to the last healthy delivery."""
    db = f"bench_{'holes' if with_holes else 'alone'}"
    prefix = f"b{int(time.time())}{'h' if with_holes else 'a'}."
    settings = CommonSettings(
        kafka_bootstrap=urls.kafka,
        mongo_url=urls.mongo,
        mongo_db=db,
        topic_prefix=prefix,
        data_dir=workdir / "data",
    )
    await migrate(settings)
    client, store = connect(urls.mongo, db, app_name="bench")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    async with python_process(["-m", "bench.receivers_app", str(port)], {}, workdir / "receivers.log"):
        await wait_for_http(f"{base}/healthz")
        await add_endpoints(store, "healthy", base, "ok", HEALTHY)
        if with_holes:
            await add_endpoints(store, "dead", base, "hole", HOLES)
        env = {
            "VIDEOGEN_KAFKA_BOOTSTRAP": urls.kafka,
            "VIDEOGEN_MONGO_URL": urls.mongo,
            "VIDEOGEN_MONGO_DB": db,
            "VIDEOGEN_TOPIC_PREFIX": prefix,
            "VIDEOGEN_DATA_DIR": str(workdir / "data"),
            "VIDEOGEN_NOTIFIER_GROUP": f"bench-{prefix}",
            "VIDEOGEN_WEBHOOK_ALLOW_CIDRS": "127.0.0.0/8",
            "VIDEOGEN_LOG_LEVEL": "WARNING",
        }
        async with python_process(["-m", "videogen_notifier.main"], env, workdir / f"notifier-{db}.log"):
            producer = AIOKafkaProducer(bootstrap_servers=urls.kafka, enable_idempotence=False, linger_ms=5)
            await producer.start()
            topic = Topics(prefix).status
            target = events * HEALTHY
            started = time.perf_counter()
            for i in range(events):
                for account in ("healthy", "dead") if with_holes else ("healthy",):
                    envelope = completed_event(account)
                    await producer.send(topic, envelope.to_json(), key=envelope.generation_id.encode())
                if i % 100 == 0:
                    await producer.flush()
            await producer.flush()
            done = 0
            async with aiohttp.ClientSession() as session:
                while done < target:  # the receivers count, so polling costs the store nothing
                    await asyncio.sleep(0.05)
                    async with session.get(f"{base}/count") as response:
                        done = int(await response.text())
            elapsed = time.perf_counter() - started
            await producer.stop()
    await client.close()  # the store's files go with the temporary directory
    rate = target / elapsed
    print(
        f"{'10 healthy beside 10 black holes' if with_holes else '10 healthy endpoints alone'}: "
        f"{rate:.0f} deliveries/s ({target} in {elapsed:.1f} s)",
        flush=True,
    )
    return rate


async def run(events: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory(prefix="vg-bench-") as tmp:
        workdir = Path(tmp)
        async with engines(workdir) as urls:
            alone = await measure(urls, workdir, events, with_holes=False)
            beside = await measure(urls, workdir, events, with_holes=True)
    return alone, beside


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--events", type=int, default=300, help="status events per run (x10 healthy deliveries)"
    )
    args = parser.parse_args()
    alone, beside = asyncio.run(run(args.events))
    print(f"ratio: {beside / alone:.2f}  (target >= 0.90)")


if __name__ == "__main__":
    main()
