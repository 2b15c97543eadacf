"""Whether the api's reads and the workers' operations stay flat as history grows: each read of the
measuring account (``account-000``, a tenth of the generations) timed on stores of ``bench.history`` loaded
with different numbers of generations, each figure beside the first store's, in the same run.

The reads are the repositories' (what each endpoint's handler awaits; no HTTP): ``GET /v1/generations``'s
first page, a page ten pages deep (by the cursor's position), a page filtered by status, by a recent
metadata batch and by one half a year old; ``GET /v1/usage``'s read over the last 30 days (the default
range), of the account and of one key, from the settled days' rows (kept by the first round), and the same
when no day has its row yet (each round removes them first: the first read of each day sums it); ``GET
/v1/events``' and the audit trail's first pages; the delivery log's first page (the account's endpoint).
Each is the median of ``--rounds`` runs, in ms.

Beside the reads, what the workers and the store do per operation, each through the repositories on the same
stores (no broker, no HTTP, no provider): a creation's insert (``insert_one`` of a new generation's document,
p50 and p99 of ``--creations``, removed after); a lease claim (``claim_lease`` of one of the unfinished
generations); a reconciler pass's scans (expired leases, never leased, past their wait deadline, the outbox
due); the retention sweeper's page of due media with nothing due (as of a moment before the history) and
with 1% of the generations due (made due for the measure, then put back); admission's next choice (the
lanes with work at a provider); the notifier's scan of deliveries due; and start-up: the migration step
(``videogen migrate``'s part in the store, ``migrate_store``: new indexes built over the history, the data
migrations) on the loaded store, timed twice: the first run (over a store loaded by an older checkout it
builds what that lacks and runs the migrations over the history; the one-time ones read it whole) and the
next (it finds them made: what every later start-up costs). The lease
claims are put back as the loader left them.

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

from bench.history import MEASURING_ACCOUNT, PROMPTS
from videogen.engines import free_port, mongo_url, secantus_spec, spawn, stop, wait_for_port
from videogen.migrate import migrate_store
from videogen_common.domain import Provider, Status
from videogen_common.generations import new_record
from videogen_common.ids import new_id
from videogen_common.repositories.audit import AuditFilter, AuditRepository
from videogen_common.repositories.deletions import GenerationDeletions
from videogen_common.repositories.deliveries import DeliveryClaims, DeliveryFilter, DeliveryRepository
from videogen_common.repositories.events import EventFilter, EventRepository
from videogen_common.repositories.generation_reads import GenerationFilter, GenerationReads
from videogen_common.repositories.leases import LeaseRepository
from videogen_common.repositories.outbox import OutboxRepository
from videogen_common.repositories.usage import UsageRepository, groups_in, tries_in
from videogen_common.repositories.waiting import WaitingRepository
from videogen_common.store import Store, connect

Doc = dict[str, Any]
PAGE = 51  # what the api asks for a page of 50 (one more: is there a next page)
DEEP = 10  # pages


async def _median_ms(op: Callable[[], Awaitable[object]], rounds: int) -> float:
    """The median of ``rounds`` timed runs of ``op``, after one untimed (the store's caches and plans warmed:
    the first store measured would otherwise pay what the later ones find done)."""
    await op()
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        await op()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


async def usage_unsummed(
    store: Store, usage: UsageRepository, account: str, start: datetime, end: datetime, now: datetime
) -> object:
    """A month's usage read when none of its days has a row yet (the first read of a day sums it)."""
    await store.usage_days.delete_many({"account_id": account})
    return await usage_read(usage, account, start, end, now, None)


async def usage_read(
    usage: UsageRepository, account: str, start: datetime, end: datetime, now: datetime, key: str | None
) -> object:
    """What ``GET /v1/usage`` reads and derives: the range's days, once, then its groups and its tries."""
    days = await usage.days(account, start, end, now)
    return groups_in(days, key), tries_in(days, key)


async def _batch_near(store: Store, account: str, moment: datetime) -> str:
    """The metadata batch of the account's generation made closest before ``moment`` that has one."""
    found = await store.generations.find(
        {"account_id": account, "created_at": {"$gte": moment - timedelta(days=2), "$lt": moment}}
    ).to_list(None)
    with_batch = sorted(
        (doc for doc in found if (doc.get("metadata") or {}).get("batch")), key=lambda d: d["created_at"]
    )
    return str(with_batch[-1]["metadata"]["batch"])


def _percentile(times: list[float], share: float) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def creations(store: Store, count: int, now: datetime) -> tuple[float, float]:
    """p50 and p99 (ms) of ``count`` creations' inserts, one at a time, into the measuring account; the
    generations made are removed after."""
    times: list[float] = []
    made: list[str] = []
    for n in range(count):
        record = new_record(
            generation_id=new_id("gen", now),
            account_id=MEASURING_ACCOUNT,
            prompt=PROMPTS[n % len(PROMPTS)],
            provider=Provider.MOCK,
            duration=5,
            now=now,
            metadata={"batch": "bench", "customer": f"customer-{n % 7}"},
        )
        doc = record.to_doc()
        started = time.perf_counter()
        await store.generations.insert_one(doc)
        times.append((time.perf_counter() - started) * 1000)
        made.append(record.id)
    await store.generations.delete_many({"_id": {"$in": made}})
    return _percentile(times, 0.5), _percentile(times, 0.99)


async def sweep_with_due(store: Store, share: float, now: datetime, rounds: int) -> float:
    """The sweeper's first page (100) of media due, with ``share`` of the generations made due (those with
    media due later), the due times put back after."""
    total = await store.generations.estimated_document_count()
    later = await store.generations.find(
        {"media_due_at": {"$gte": now}}, projection={"media_due_at": 1}
    ).to_list(None)
    picked = later[: int(total * share)]
    for doc in picked:
        await store.generations.update_one(
            {"_id": doc["_id"]}, {"$set": {"media_due_at": now - timedelta(hours=1)}}
        )
    try:
        deletions = GenerationDeletions(store)
        return await _median_ms(lambda: deletions.due(now, 100), rounds)
    finally:
        for doc in picked:
            await store.generations.update_one(
                {"_id": doc["_id"]}, {"$set": {"media_due_at": doc["media_due_at"]}}
            )


async def measure(store: Store, rounds: int, creations_count: int = 200) -> dict[str, float]:
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
        "usage, 30 days": lambda: usage_read(usage, account, start, end, now, None),
        "usage, 30 days, its days not summed yet": lambda: usage_unsummed(
            store, usage, account, start, end, now
        ),
        "usage, 30 days, one key": lambda: usage_read(usage, account, start, end, now, key["_id"]),
        "events, first page": lambda: events.page_of_account(account, EventFilter(), None, PAGE),
        "delivery log, first page": lambda: deliveries.page_of_endpoint(
            webhook["_id"], account, DeliveryFilter(), None, PAGE
        ),
        "audit events, first page": lambda: audit.page_of_account(account, AuditFilter(), None, PAGE),
    }
    results = {name: await _median_ms(op, rounds) for name, op in ops.items()}
    results.update(await workers(store, now, rounds))
    p50, p99 = await creations(store, creations_count, now)
    results["creation's insert, p50"] = p50
    results["creation's insert, p99"] = p99
    return results


async def workers(store: Store, now: datetime, rounds: int) -> dict[str, float]:
    """The workers' operations: a lease claim, a reconciler pass's scans, the sweeper's page, admission's
    choice, the notifier's deliveries due."""
    leases, waiting = LeaseRepository(store), WaitingRepository(store)
    unfinished = await store.generations.find(
        {"status": Status.PROCESSING.value, "lease_expires_at": None}, projection={"_id": 1}
    ).to_list(None)
    claimable = [doc["_id"] for doc in unfinished] or ["none"]
    turn = iter(range(10**9))

    async def claim() -> object:
        # Each claim leaves the lease already expired, so the next round may claim it again.
        gid = claimable[next(turn) % len(claimable)]
        return await leases.claim_lease(gid, "bench", now, now - timedelta(seconds=1), new_id("tok", now))

    async def reconciler_pass() -> object:
        expired = [gid async for gid in leases.expired_leases(now, 100)]
        never = [gid async for gid in leases.never_leased(now - timedelta(minutes=5), 100)]
        late = await waiting.past_deadline(now, 100)
        owed = [event async for event in OutboxRepository(store).due(now, 100)]
        return expired, never, late, owed

    async def deliveries_due() -> object:
        return [delivery async for delivery in DeliveryClaims(store, "bench").due(now)]

    deletions = GenerationDeletions(store)
    ops: dict[str, Callable[[], Awaitable[object]]] = {
        "lease claim": claim,
        "reconciler pass (4 scans)": reconciler_pass,
        "retention sweep page, nothing due": lambda: deletions.due(now - timedelta(days=400), 100),
        "admission's next choice (lanes at a provider)": lambda: waiting.pending_at("runway"),
        "notifier: deliveries due": deliveries_due,
    }
    results = {name: await _median_ms(op, rounds) for name, op in ops.items()}
    results["retention sweep page, 1% due"] = await sweep_with_due(store, 0.01, now, rounds)
    # The claims' leases back as the loader left them (never leased).
    await store.generations.update_many(
        {"_id": {"$in": claimable}}, {"$set": {"lease_owner": None, "lease_expires_at": None}}
    )
    return results


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
                # This checkout's migration step in the store (``videogen migrate``'s: the indexes it adds
                # built here, over the history, and its data migrations).
                started = time.perf_counter()
                await migrate_store(store, 30, datetime.now(UTC))
                first = time.perf_counter() - started
                started = time.perf_counter()
                await migrate_store(store, 30, datetime.now(UTC))
                again = time.perf_counter() - started
                print(f"{db}: migration step {first:.1f} s, again {again:.2f} s", flush=True)
                results[db] = await measure(store, args.rounds, args.creations)
                results[db]["start-up: migration step, first run (s)"] = first * 1000
                results[db]["start-up: migration step, next run (s)"] = again * 1000
            finally:
                await client.close()
    finally:
        await stop(proc)
    first = args.dbs[0]
    others = args.dbs[1:]
    header = " | ".join(f"{db} ({sizes[db]:,})" for db in args.dbs)
    ratios = " | ".join(f"{db} ÷ {first}" for db in others)
    print(f"| read ({datetime.now(UTC):%Y-%m-%d}, median of {args.rounds}, ms) | {header} | {ratios} |")
    print("|---|" + "---|" * (len(args.dbs) + len(others)))
    for name in results[first]:
        scale = 1000 if name.endswith("(s)") else 1
        figures = " | ".join(f"{results[db][name] / scale:.1f}" for db in args.dbs)
        ratio = " | ".join(f"{results[db][name] / results[first][name]:.2f}" for db in others)
        print(f"| {name} | {figures} | {ratio} |")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data-dir", type=lambda raw: Path(raw).absolute(), default=".history/store")
    parser.add_argument("--dbs", nargs="+", default=["h10k", "h100k"])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--creations", type=int, default=200, help="creations' inserts timed (p50, p99)")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
