"""A year of history in a store: N generations over many accounts and providers, written in bulk, with what
the service writes beside them (their events, their webhook deliveries, the accounts' keys, webhooks and audit
trail), so that a benchmark or a test can measure an operation against a store that is not empty.

What is written is made by the records' own types (``new_record`` then the changes the orchestrator makes,
``GenerationRecord.to_doc``, ``terminal_event``, ``pending_delivery``, ``audit_event``…), so the documents
are the ones the service writes. The mix (``Mix``): most generations finished (completed, some failed:
canceled, a provider's refusal, a timeout), a few still under way among the newest, 1% deleted (their
tombstones and a ``video.deleted`` event); created at random moments over ``days`` days back from now; a
tenth of the generations made by one account (``account-000``, the measuring account;
``--measuring-share``), the rest by the others, unevenly; a third with metadata (``batch``: the
account's generations of one six-hour slot; ``customer``). Accounts with a webhook (two in three) have one
delivery per owed event, most succeeded.

Writing: ``insert_many``, unordered, in batches of ``batch`` documents, ``in_flight`` batches at once per
collection. Into an empty database, the documents go in first and the indexes are made after
(``ensure_indexes``, the migration's index step): the embedded store writes about five times as many
documents a second into a collection without secondary indexes, and builds an index over what is there in
one pass. Into a database that already has them, it appends.

    .venv/bin/python -m bench.history --generations 100000 --data-dir .history/100k [--db history]

The data directory keeps the store's files: a later run (or ``bench.history_scaling``) reuses it. Under the
checkout it belongs in ``.history/`` (ignored by git)."""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import random
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pymongo.asynchronous.collection import AsyncCollection

from videogen.engines import free_port, mongo_url, secantus_spec, spawn, stop, wait_for_port
from videogen_common.audit import AuditActorType, AuditEventType, audit_event
from videogen_common.deliveries import FAILED, SUCCEEDED, delivery_body, pending_delivery
from videogen_common.domain import Provider, Status
from videogen_common.event_types import VIDEO_DELETED
from videogen_common.failures import GenerationError
from videogen_common.generations import new_record, terminal_event
from videogen_common.ids import new_id
from videogen_common.records.api_key import ApiKey
from videogen_common.records.delivery import Attempt
from videogen_common.records.event import Event
from videogen_common.records.generation import GenerationRecord, StoredVideo, TimelineStep
from videogen_common.records.webhook import Secret, WebhookEndpoint
from videogen_common.repositories.indexes import ensure_indexes
from videogen_common.store import Durability, Store, connect

Doc = dict[str, Any]

MEASURING_ACCOUNT = "account-000"
PROMPTS = (
    "a red fox running through snow at dawn, slow motion, shallow depth of field",
    "aerial shot of a coastline with waves breaking on black rocks, golden hour",
    "a paper boat drifting down a rain-soaked city street, neon reflections",
    "time-lapse of clouds rolling over a mountain ridge, wide angle",
)
# Providers by share of the generations.
PROVIDERS = ((Provider.MOCK, 0.1), (Provider.RUNWAY, 0.45), (Provider.LUMA, 0.3), (Provider.PIKA, 0.15))
FAILURES = (
    GenerationError("canceled", "Canceled by the client."),
    GenerationError("provider_error", "The provider refused the prompt.", "content_policy"),
    GenerationError("timeout", "The provider did not finish in time.", retriable=True),
)


@dataclass(frozen=True)
class Mix:
    """What share of the generations ends how (the rest completed), how many of the newest are still under
    way, and how many are deleted."""

    failed: float = 0.12
    deleted: float = 0.01
    unfinished: int = 50  # the newest this many are queued or processing
    with_metadata: float = 0.33
    with_webhook: float = 0.67  # share of the accounts
    delivery_failed: float = 0.04
    measuring_share: float = 0.1  # of the generations, made by the measuring account


@dataclass
class Loaded:
    """What a load wrote: documents per collection, and how long it took (indexes included)."""

    docs: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    index_seconds: float = 0.0

    @property
    def total(self) -> int:
        return sum(self.docs.values())

    @property
    def rate(self) -> float:
        return self.total / self.seconds if self.seconds else 0.0

    def line(self) -> str:
        counts = ", ".join(f"{name} {count:,}" for name, count in sorted(self.docs.items()))
        return (
            f"{self.total:,} documents in {self.seconds:.1f} s ({self.rate:,.0f}/s; indexes "
            f"{self.index_seconds:.1f} s of it): {counts}"
        )


@dataclass(frozen=True)
class Account:
    id: str
    key_ids: tuple[str, ...]
    webhook_id: str | None


def make_accounts(accounts: int, start: datetime, seed: int, mix: Mix) -> list[Account]:
    """``accounts`` accounts (``account-000`` on), each with one to three API keys and, most of them (the
    measuring account always), a webhook."""
    rnd = random.Random(seed)
    return [
        Account(
            id=f"account-{n:03d}",
            key_ids=tuple(new_id("key", start) for _ in range(1 + n % 3)),
            webhook_id=new_id("wh", start) if n == 0 or rnd.random() < mix.with_webhook else None,
        )
        for n in range(accounts)
    ]


def _weights(accounts: int, share: float) -> list[float]:
    """The measuring account makes ``share`` of the generations; the others share the rest, unevenly (the
    n-th in proportion to 1/n)."""
    if accounts == 1:
        return [1.0]
    rest = [1 / n for n in range(1, accounts)]
    scale = (1 - share) / sum(rest)
    return [share, *(w * scale for w in rest)]


class History:
    """The documents of a year of history, made batch by batch (``documents``) so that a million never sit
    in memory at once."""

    def __init__(
        self,
        *,
        generations: int,
        accounts: list[Account],
        days: int,
        now: datetime,
        seed: int,
        mix: Mix,
    ) -> None:
        self.generations, self.days, self.now, self.mix = generations, days, now, mix
        self.random = random.Random(seed)
        self.start = now - timedelta(days=days)
        self.accounts = accounts
        self.weights = _weights(len(accounts), mix.measuring_share)
        self.seed = seed

    def setup(self) -> dict[str, list[Doc]]:
        """Each account's keys, its webhook (if it has one) and their audit events."""
        keys: list[Doc] = []
        webhooks: list[Doc] = []
        audit: list[Doc] = []
        for account in self.accounts:
            for n, key_id in enumerate(account.key_ids):
                keys.append(
                    ApiKey(
                        id=key_id,
                        key_hash=f"{account.id}-{n}".ljust(64, "0"),
                        account_id=account.id,
                        created_at=self.start,
                        name=f"key {n}",
                        last_four=f"{n:04d}",
                    ).to_doc()
                )
                audit.append(self._audit(account.id, AuditEventType.API_KEY_CREATED, ("api_key", key_id)))
            if account.webhook_id is not None:
                webhooks.append(
                    WebhookEndpoint(
                        id=account.webhook_id,
                        account_id=account.id,
                        url=f"https://{account.id}.example.com/hooks",
                        events=("video.completed", "video.failed", "video.deleted"),
                        secrets=(Secret(secret="whsec_" + "0" * 32, created_at=self.start),),
                        created_at=self.start,
                        updated_at=self.start,
                    ).to_doc()
                )
                audit.append(
                    self._audit(account.id, AuditEventType.WEBHOOK_CREATED, ("webhook", account.webhook_id))
                )
        return {"api_keys": keys, "webhooks": webhooks, "audit_events": audit}

    def _audit(
        self, account_id: str, kind: AuditEventType, target: tuple[str, str], at: datetime | None = None
    ) -> Doc:
        return audit_event(
            account_id=account_id,
            type=kind,
            actor=(AuditActorType.OPERATOR, None),
            target=target,
            now=at or self.start,
        ).to_doc()

    def documents(self, count: int, offset: int) -> dict[str, list[Doc]]:
        """``count`` generations (the ``offset``-th on, oldest first in creation order of the load) and the
        events, deliveries and audit events they made."""
        out: dict[str, list[Doc]] = {"generations": [], "events": [], "deliveries": [], "audit_events": []}
        for n in range(offset, offset + count):
            account = self.random.choices(self.accounts, self.weights)[0]
            # Under way: the last ``unfinished`` of the load, made in the last minutes.
            unfinished = n >= self.generations - self.mix.unfinished
            if unfinished:
                created = self.now - timedelta(seconds=self.random.uniform(1, 600))
            else:
                created = self.start + timedelta(seconds=self.random.uniform(0, self.days * 86400 - 3600))
            created = created.replace(microsecond=created.microsecond // 1000 * 1000)
            record = self._generation(account, created, unfinished)
            doc_events: list[Event] = []
            if record.status.terminal:
                doc_events.append(terminal_event(record))
                if record.deleted_at is not None:
                    doc_events.append(
                        VIDEO_DELETED.event(record, change=f"deleted_{record.version}", at=record.deleted_at)
                    )
                    out["audit_events"].append(
                        self._audit(
                            account.id,
                            AuditEventType.GENERATION_DELETED,
                            ("generation", record.id),
                            record.deleted_at,
                        )
                    )
            out["generations"].append(record.to_doc())
            for event in doc_events:
                out["events"].append(event.to_doc())
                if account.webhook_id is not None:
                    out["deliveries"].append(self._delivery(event, account.webhook_id, record.id))
        return out

    def _generation(self, account: Account, created: datetime, unfinished: bool) -> GenerationRecord:
        rnd = self.random
        provider = rnd.choices([p for p, _ in PROVIDERS], [w for _, w in PROVIDERS])[0]
        metadata = None
        if rnd.random() < self.mix.with_metadata:
            metadata = {
                # A run of the account's: its generations of one six-hour slot of one day.
                "batch": f"batch-{created:%Y-%m-%d}-{created.hour // 6}",
                "customer": f"customer-{rnd.randrange(200):03d}",
            }
        duration = rnd.choice((3, 5, 5, 5, 10))
        record = new_record(
            generation_id=new_id("gen", created),
            account_id=account.id,
            prompt=rnd.choice(PROMPTS),
            provider=provider,
            duration=duration,
            now=created,
            options={"aspect_ratio": "16:9", "resolution": "720p"} if rnd.random() < 0.5 else None,
            metadata=metadata,
            trace_id=f"{rnd.getrandbits(128):032x}",
            api_key_id=rnd.choice(account.key_ids),
            estimated_cost=round(duration * 0.05, 4),
        )
        if unfinished:
            if rnd.random() < 0.5:
                return replace(
                    record,
                    status=Status.QUEUED,
                    version=2,
                    timeline=(*record.timeline, TimelineStep(Status.QUEUED.value, created)),
                    queue_reason="account_concurrency",
                )
            return record
        started = created + timedelta(seconds=rnd.uniform(0.05, 2))
        took = timedelta(seconds=rnd.uniform(20, 180))
        ended = started + took
        ended = ended.replace(microsecond=ended.microsecond // 1000 * 1000)
        failed = rnd.random() < self.mix.failed
        status = Status.FAILED if failed else Status.COMPLETED
        error = rnd.choice(FAILURES) if failed else None
        submitted = not (failed and error is not None and error.code == "canceled" and rnd.random() < 0.5)
        cost = round(duration * 0.05, 4) if submitted else 0.0
        attempt: Doc = {
            "provider": provider.value,
            "started_at": started,
            "ended_at": ended,
            "error_code": error.code if error is not None else None,
            "cost": cost,
        }
        stored = StoredVideo(
            video_url=f"https://media.example.com/{record.id}/video.mp4",
            video_key=f"{record.id}/video.mp4",
            thumbnail_url=f"https://media.example.com/{record.id}/thumbnail.jpg",
            thumbnail_key=f"{record.id}/thumbnail.jpg",
        )
        done = replace(
            record,
            status=status,
            version=3,
            updated_at=ended,
            status_since=ended,
            progress=100 if not failed else record.progress,
            timeline=(*record.timeline, TimelineStep(status.value, ended)),
            error=error,
            provider_task_id=f"task-{rnd.getrandbits(64):016x}" if submitted else None,
            submit_started_at=started if submitted else None,
            task_started_at=started if submitted else None,
            attempts=1,
            provider_attempts=(attempt,) if submitted else None,
            cost=cost,
            state_seconds={"processing": took.total_seconds()},
            video_url=None if failed else stored.video_url,
            thumbnail_url=None if failed else stored.thumbnail_url,
            video_key=None if failed else stored.video_key,
            thumbnail_key=None if failed else stored.thumbnail_key,
            media_due_at=None if failed else ended + timedelta(days=30),
            budget_hold=None,
        )
        if not failed and done.media_due_at is not None and done.media_due_at < self.now:
            # Past its retention: the sweeper deleted its media then (and it left the due index).
            done = replace(done, media_deleted_at=done.media_due_at, media_due_at=None)
        if rnd.random() < self.mix.deleted:
            deleted = ended + timedelta(days=rnd.uniform(0, 3))
            deleted = min(deleted, self.now).replace(microsecond=0)
            done = done.tombstone(deleted, media_due_at=deleted)
        return done

    def _delivery(self, event: Event, webhook_id: str, generation_id: str) -> Doc:
        rnd = self.random
        body = delivery_body(event.type, event.timestamp, dict(event.data))
        delivery = pending_delivery(
            event_id=event.id,
            event_type=event.type,
            webhook_id=webhook_id,
            account_id=event.account_id,
            body=body,
            now=event.created_at,
            generation_id=generation_id,
            trace_id=event.trace_id,
        )
        sent = event.created_at + timedelta(milliseconds=rnd.uniform(20, 400))
        if rnd.random() < self.mix.delivery_failed:
            attempts = tuple(
                Attempt(at=sent + timedelta(minutes=2**n), status_code=500, latency_ms=120.0)
                for n in range(3)
            )
            done = replace(
                delivery,
                status=FAILED,
                attempts=attempts,
                next_attempt_at=None,
                failure_reason="http_500",
                updated_at=attempts[-1].at,
            )
        else:
            done = replace(
                delivery,
                status=SUCCEEDED,
                attempts=(Attempt(at=sent, status_code=200, latency_ms=rnd.uniform(20, 200)),),
                next_attempt_at=None,
                updated_at=sent,
            )
        return done.to_doc()


async def _insert_all(
    collection: AsyncCollection[Doc], docs: list[Doc], batch: int, in_flight: asyncio.Semaphore
) -> None:
    async def one(part: list[Doc]) -> None:
        async with in_flight:
            await collection.insert_many(part, ordered=False)

    await asyncio.gather(*(one(docs[i : i + batch]) for i in range(0, len(docs), batch)))


def _chunks(total: int, size: int) -> Iterator[tuple[int, int]]:
    for offset in range(0, total, size):
        yield offset, min(size, total - offset)


@dataclass(frozen=True)
class Chunk:
    """What a builder process needs to make one chunk of the history (picklable)."""

    generations: int
    accounts: list[Account]
    days: int
    now: datetime
    seed: int
    mix: Mix
    offset: int
    count: int


def build_chunk(chunk: Chunk) -> dict[str, list[Doc]]:
    """The documents of one chunk: its own random sequence (``seed``), so a load is the same however its
    chunks are spread over processes."""
    history = History(
        generations=chunk.generations,
        accounts=chunk.accounts,
        days=chunk.days,
        now=chunk.now,
        seed=chunk.seed,
        mix=chunk.mix,
    )
    return history.documents(chunk.count, chunk.offset)


async def load(
    store: Store,
    generations: int,
    *,
    accounts: int = 200,
    days: int = 365,
    now: datetime | None = None,
    seed: int = 1,
    batch: int = 1000,
    in_flight: int = 4,
    builders: int = 2,
    mix: Mix | None = None,
    indexes: bool = True,
    progress: bool = False,
) -> Loaded:
    """Write ``generations`` generations of history (and what they made) into ``store``: the documents are
    made by ``builders`` processes (0: this one), chunk by chunk, while the chunks before are written. Into an
    empty database the indexes are made after the documents (``indexes``: make them at all)."""
    now = now or datetime.now(UTC)
    mix = mix or Mix()
    start = now - timedelta(days=days)
    members = make_accounts(accounts, start, seed, mix)
    fresh = await store.generations.estimated_document_count() == 0
    if not fresh and indexes:
        await ensure_indexes(store)
    loaded = Loaded()
    started = time.perf_counter()
    limit = asyncio.Semaphore(in_flight)

    async def write(docs: dict[str, list[Doc]]) -> None:
        await asyncio.gather(
            *(_insert_all(store.db[name], part, batch, limit) for name, part in docs.items() if part)
        )
        for name, part in docs.items():
            loaded.docs[name] = loaded.docs.get(name, 0) + len(part)

    if fresh:
        setup = History(generations=generations, accounts=members, days=days, now=now, seed=seed, mix=mix)
        await write(setup.setup())
    size = max(batch * in_flight, 1)
    chunks = [
        Chunk(generations, members, days, now, seed * 1_000_003 + n, mix, offset, count)
        for n, (offset, count) in enumerate(_chunks(generations, size))
    ]
    loop = asyncio.get_running_loop()
    with contextlib.ExitStack() as stack:
        pool = stack.enter_context(ProcessPoolExecutor(builders)) if builders > 0 else None

        def made(chunk: Chunk) -> asyncio.Future[dict[str, list[Doc]]]:
            if pool is None:
                future: asyncio.Future[dict[str, list[Doc]]] = loop.create_future()
                future.set_result(build_chunk(chunk))
                return future
            return loop.run_in_executor(pool, build_chunk, chunk)

        # Up to two chunks a builder being made while one is written.
        ahead = max(2 * builders, 1)
        building = collections.deque(made(chunk) for chunk in chunks[:ahead])
        for n, chunk in enumerate(chunks):
            docs = await building.popleft()
            if n + ahead < len(chunks):
                building.append(made(chunks[n + ahead]))
            await write(docs)
            if progress:
                print(f"  {chunk.offset + chunk.count:,} generations written", flush=True)
    if indexes:
        index_started = time.perf_counter()
        await ensure_indexes(store)
        loaded.index_seconds = time.perf_counter() - index_started
    loaded.seconds = time.perf_counter() - started
    return loaded


async def run(args: argparse.Namespace) -> None:
    data_dir: Path = args.data_dir
    spec = secantus_spec(free_port(), data_dir / "store")
    proc = await spawn(spec, log=data_dir / "store.log")
    try:
        await wait_for_port(spec.port, timeout=600, proc=proc)  # a large store takes a while to open
        client, store = connect(mongo_url(spec.port), args.db, app_name="history", durability=args.durability)
        try:
            loaded = await load(
                store,
                args.generations,
                accounts=args.accounts,
                days=args.days,
                seed=args.seed,
                batch=args.batch,
                in_flight=args.in_flight,
                builders=args.builders,
                progress=args.progress,
                mix=Mix(measuring_share=args.measuring_share),
            )
        finally:
            await client.close()
    finally:
        await stop(proc)
    print(f"{args.generations:,} generations into {args.db} at {data_dir}: {loaded.line()}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--generations", type=int, default=100_000)
    parser.add_argument("--accounts", type=int, default=200)
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--data-dir", type=lambda raw: Path(raw).absolute(), default=".history/store")
    parser.add_argument("--db", default="history")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--in-flight", type=int, default=4)
    parser.add_argument("--builders", type=int, default=2, help="processes making the documents")
    parser.add_argument(
        "--durability",
        type=Durability,
        default=Durability.MAJORITY,
        choices=list(Durability),
        help="write concern of the load (the journal is not waited for by default: a failed load is rerun)",
    )
    parser.add_argument(
        "--measuring-share",
        type=float,
        default=Mix.measuring_share,
        help="the share of the generations the measuring account makes (0.001 of a million: the tenant of a "
        "10,000 store, at its rate, in a store a hundred times larger)",
    )
    parser.add_argument("--progress", action="store_true")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
