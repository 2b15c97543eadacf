"""Whether the api's reads stay flat as history grows: each read of the measuring account (``account-000``, a
tenth of the generations) timed on stores of ``bench.history`` loaded with different numbers of generations,
each figure beside the first store's, in the same run.

The reads are the repositories' (what each endpoint's handler awaits; no HTTP): ``GET /v1/generations``'s
first page, a page ten pages deep (by the cursor's position), a page filtered by status, by a recent
metadata batch and by one half a year old; ``GET /v1/usage``'s two aggregations over the last 30 days (the
default range), of the account and of one key; ``GET /v1/events``' and the audit trail's first pages; the
delivery log's first page (the account's endpoint). Each is the median of ``--rounds`` runs, in ms.

This is the start of the issue's scaling bench: the reads only, on stores loaded beforehand (the loader takes
minutes a 100,000 generations on the embedded store), not yet creation, the workers' passes or start-up.

    .venv/bin/python -m bench.history --generations 10000 --db h10k --data-dir .history/store
    .venv/bin/python -m bench.history --generations 100000 --db h100k --data-dir .history/store
    .venv/bin/python -m bench.history_scaling --data-dir .history/store --dbs h10k h100k
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.history import MEASURING_ACCOUNT
from videogen.engines import free_port, mongo_url, secantus_spec, spawn, stop, wait_for_port
from videogen_common.domain import Status
from videogen_common.repositories.audit import AuditFilter, AuditRepository
from videogen_common.repositories.deliveries import DeliveryFilter, DeliveryRepository
from videogen_common.repositories.events import EventFilter, EventRepository
from videogen_common.repositories.generation_reads import GenerationFilter, GenerationReads
from videogen_common.repositories.indexes import ensure_indexes
from videogen_common.repositories.usage import UsageRepository
from videogen_common.store import Store, connect

Doc = dict[str, Any]
PAGE = 51  # what the api asks for a page of 50 (one more: is there a next page)
DEEP = 10  # pages


async def _median_ms(op: Callable[[], Awaitable[object]], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        await op()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


async def _batch_near(store: Store, account: str, moment: datetime) -> str:
    """The metadata batch of the account's generation made closest before ``moment`` that has one."""
    found = await store.generations.find(
        {"account_id": account, "created_at": {"$gte": moment - timedelta(days=2), "$lt": moment}}
    ).to_list(None)
    with_batch = sorted(
        (doc for doc in found if (doc.get("metadata") or {}).get("batch")), key=lambda d: d["created_at"]
    )
    return str(with_batch[-1]["metadata"]["batch"])


async def measure(store: Store, rounds: int) -> dict[str, float]:
    account = MEASURING_ACCOUNT
    reads = GenerationReads(store)
    newest = (
        await store.generations.find({"account_id": account}, {"created_at": 1})
        .sort("created_at", -1)
        .limit(1)
        .to_list(1)
    )
    now = newest[0]["created_at"] + timedelta(minutes=1)
    webhook = await store.webhooks.find_one({"account_id": account})
    assert webhook is not None, "the measuring account has a webhook"
    key = await store.api_keys.find_one({"account_id": account})
    assert key is not None
    # The position ten pages deep: walked once, page by page, before the timing.
    position = None
    for _ in range(DEEP - 1):
        page = await reads.newest_first(account, GenerationFilter(), position, PAGE - 1)
        position = (page[-1].created_at, page[-1].id)
    recent = await _batch_near(store, account, now - timedelta(days=1))
    older = await _batch_near(store, account, now - timedelta(days=182))
    usage = UsageRepository(store)
    start, end = now - timedelta(days=30), now
    events, audit, deliveries = EventRepository(store), AuditRepository(store), DeliveryRepository(store)
    ops: dict[str, Callable[[], Awaitable[object]]] = {
        "generations, first page": lambda: reads.newest_first(account, GenerationFilter(), None, PAGE),
        f"generations, page {DEEP} (cursor)": lambda: reads.newest_first(
            account, GenerationFilter(), position, PAGE
        ),
        "generations ?status=failed": lambda: reads.newest_first(
            account, GenerationFilter(statuses=[Status.FAILED]), None, PAGE
        ),
        "generations ?metadata[batch]= (a day old)": lambda: reads.newest_first(
            account, GenerationFilter(metadata={"batch": recent}), None, PAGE
        ),
        "generations ?metadata[batch]= (half a year old)": lambda: reads.newest_first(
            account, GenerationFilter(metadata={"batch": older}), None, PAGE
        ),
        "usage, 30 days (groups + providers)": lambda: asyncio.gather(
            usage.groups(account, start, end, None), usage.by_provider(account, start, end, None)
        ),
        "usage, 30 days, one key": lambda: asyncio.gather(
            usage.groups(account, start, end, key["_id"]), usage.by_provider(account, start, end, key["_id"])
        ),
        "events, first page": lambda: events.page_of_account(account, EventFilter(), None, PAGE),
        "delivery log, first page": lambda: deliveries.page_of_endpoint(
            webhook["_id"], account, DeliveryFilter(), None, PAGE
        ),
        "audit events, first page": lambda: audit.page_of_account(account, AuditFilter(), None, PAGE),
    }
    return {name: await _median_ms(op, rounds) for name, op in ops.items()}


async def run(args: argparse.Namespace) -> None:
    data_dir: Path = args.data_dir
    spec = secantus_spec(free_port(), data_dir / "store")
    proc = await spawn(spec, log=data_dir / "store.log")
    results: dict[str, dict[str, float]] = {}
    sizes: dict[str, int] = {}
    try:
        await wait_for_port(spec.port, timeout=600, proc=proc)  # a large store takes a while to open
        for db in args.dbs:
            client, store = connect(mongo_url(spec.port), db, app_name="history-scaling")
            try:
                sizes[db] = await store.generations.estimated_document_count()
                # The indexes of this checkout (those it adds are built here, over the history).
                started = time.perf_counter()
                await ensure_indexes(store)
                print(f"{db}: ensure_indexes {time.perf_counter() - started:.1f} s", flush=True)
                results[db] = await measure(store, args.rounds)
            finally:
                await client.close()
    finally:
        await stop(proc)
    first = args.dbs[0]
    header = " | ".join(f"{sizes[db]:,} generations" for db in args.dbs)
    print(f"| read ({datetime.now(UTC):%Y-%m-%d}, median of {args.rounds}, ms) | {header} | ratio |")
    print("|---|" + "---|" * len(args.dbs) + "---|")
    for name in results[first]:
        figures = " | ".join(f"{results[db][name]:.1f}" for db in args.dbs)
        ratio = results[args.dbs[-1]][name] / results[first][name]
        print(f"| {name} | {figures} | {ratio:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data-dir", type=lambda raw: Path(raw).absolute(), default=".history/store")
    parser.add_argument("--dbs", nargs="+", default=["h10k", "h100k"])
    parser.add_argument("--rounds", type=int, default=5)
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
