"""Every repository query that grows with history is served by an index: each is run against a store holding
some history (``bench.history``: 2,000 generations over a year, half of them the measuring account's, with
their events, deliveries and audit trail), every command it sends to the store is recorded, and each is then
explained on the real store server. A command fails when its winning plan holds a collection scan
(``COLLSCAN``) over a collection that grows with history, or when it reads more than ``FLAT`` documents:
what a read of the whole account (a thousand generations) would exceed, and a read of one index range
(a window of a listing, a month of usage) does not. It runs twice: the repositories with MongoDB's query
shapes and with the embedded store's (``Store.known_engine``), both explained on the embedded server. The
retention sweeper's expiries run last (they remove part of the history): a delete is explained after it ran,
so what it holds them to is their index, not how many they read.

What the embedded store's explain says, as measured (SecantusDB 0.7): ``queryPlanner.winningPlan`` is
mongod's tree (``SORT``/``LIMIT`` over ``FETCH`` over ``IXSCAN``, or ``COLLSCAN``), for ``find``, for an
``aggregate`` (its leading ``$match``, the part the server lifts into its index lookup) and for ``count``.
It reports ``COLLSCAN`` for a filter whose fields are not exactly an index's leading equalities then one
range (``paging``); executing such a filter it may still look up one clause alone by an index (every
generation of the account, for a condition beside ``account_id``), so a ``COLLSCAN`` here is a read the
history makes longer either way. Its ``executionStats.totalDocsExamined`` counts, for an index scan, every
document the filter matches, limit or not (it reads them all before it limits), and for a scan the
collection: so it is the measure of ``FLAT``. MongoDB's explain has the same fields (its ``totalDocsExamined``
stops at the limit), so the test reads either. Updates and deletes are explained as the ``find`` of their
filter; a ``findAndModify`` as the ``find`` of its query, though the embedded store scans for it whatever the
plan (``Store.engine()`` routes around it: see ``repositories.leases`` and ``deliveries``).

The listings' shape reads window by window (``repositories.paging``): a walk of the same history page by page
is checked against one read of the whole account, so the windows' edges neither skip nor repeat."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from bench.history import MEASURING_ACCOUNT, Mix, load
from pymongo.monitoring import CommandFailedEvent, CommandListener, CommandStartedEvent, CommandSucceededEvent

from videogen.migrate import migrate_store
from videogen_common.domain import Status
from videogen_common.earlier_outboxes import adopt_owed_events
from videogen_common.repositories.audit import KEPT as AUDIT_KEPT
from videogen_common.repositories.audit import AuditFilter, AuditRepository
from videogen_common.repositories.deletions import GenerationDeletions
from videogen_common.repositories.deliveries import KEPT as DELIVERIES_KEPT
from videogen_common.repositories.deliveries import DeliveryClaims, DeliveryFilter, DeliveryRepository
from videogen_common.repositories.events import KEPT as EVENTS_KEPT
from videogen_common.repositories.events import EventFilter, EventRepository
from videogen_common.repositories.generation_reads import GenerationFilter, GenerationReads
from videogen_common.repositories.indexes import (
    METADATA_PAIRS_MIGRATION,
    MIGRATIONS,
    fill_metadata_pairs,
    requeue_account_waits,
)
from videogen_common.repositories.leases import LeaseRepository
from videogen_common.repositories.outbox import OutboxRepository
from videogen_common.repositories.usage import UsageRepository
from videogen_common.repositories.waiting import WaitingRepository
from videogen_common.settings import CommonSettings
from videogen_common.store import Engine, Store, connect

Doc = dict[str, Any]

# Collections that grow with the generations made (and are kept: their retention is a later change).
GROWING = frozenset({"generations", "events", "deliveries", "audit_events", "uploads", "usage_days"})
# At most this many documents read by one command: a window of a listing, a month of usage, a sweep's batch.
# The measuring account holds about 1,000 generations, 1,000 events and 1,000 deliveries, so a read of it
# whole fails.
FLAT = 250
PAGE = 51
GENERATIONS = 2000
EXPLAINED = frozenset({"find", "aggregate", "count", "distinct", "update", "delete", "findAndModify"})

# (operation, collection) → why its collection scan or long read is allowed. Keep it short. None today: the
# metadata filter reads ``by_account_metadata`` (a stored list of the pairs), the scan for never-leased
# generations ``by_lease_created``.
ALLOWED: dict[tuple[str, str], str] = {}


class Recorder(CommandListener):
    """The commands a client sends, as sent (a copy of each)."""

    def __init__(self) -> None:
        self.commands: list[Doc] = []
        self.recording = False

    def started(self, event: CommandStartedEvent) -> None:
        if self.recording and event.command_name in EXPLAINED:
            self.commands.append(dict(event.command))

    def succeeded(self, event: CommandSucceededEvent) -> None:
        return None

    def failed(self, event: CommandFailedEvent) -> None:
        return None


def explainable(command: Doc) -> Iterator[tuple[str, Doc]]:
    """The collection and the read command(s) whose plan is the command's: a write's filter as a find."""
    name = next(iter(command))
    collection = command[name]
    if name == "find":
        read: Doc = {
            key: command[key]
            for key in ("find", "filter", "sort", "limit", "projection", "hint")
            if key in command
        }
        yield collection, read
    elif name == "aggregate":
        yield collection, {"aggregate": collection, "pipeline": command["pipeline"], "cursor": {}}
    elif name == "count" and command.get("query"):
        # (A count without a query is ``estimated_document_count``: the collection's size from its metadata,
        # no document read, though explain calls it a scan.)
        yield collection, {"count": collection, "query": command["query"]}
    elif name == "distinct":
        yield collection, {"distinct": collection, "key": command["key"], "query": command.get("query") or {}}
    elif name == "update":
        for update in command["updates"]:
            yield collection, {"find": collection, "filter": update["q"]}
    elif name == "delete":
        for delete in command["deletes"]:
            yield collection, {"find": collection, "filter": delete["q"]}
    elif name == "findAndModify":
        read = {"find": collection, "filter": command.get("query") or {}}
        if "sort" in command:
            read["sort"] = command["sort"]
        yield collection, read


def stages(plan: Any) -> Iterator[str]:
    """Every stage name in a plan tree (mongod's and the embedded store's: inputStage, inputStages,
    queryPlan, and aggregate's $cursor wrapper)."""
    if isinstance(plan, dict):
        if isinstance(plan.get("stage"), str):
            yield plan["stage"]
        for value in plan.values():
            yield from stages(value)
    elif isinstance(plan, list):
        for item in plan:
            yield from stages(item)


@dataclass(frozen=True)
class Plan:
    stages: list[str]
    docs_examined: int | None

    @classmethod
    def of(cls, reply: Doc) -> Plan:
        planners = [reply.get("queryPlanner")] + [
            stage.get("$cursor", {}).get("queryPlanner") for stage in reply.get("stages") or []
        ]
        winning = [planner.get("winningPlan") for planner in planners if planner]
        found = [stage for plan in winning for stage in stages(plan)]
        stats = reply.get("executionStats") or next(
            (
                stage["$cursor"]["executionStats"]
                for stage in reply.get("stages") or []
                if "executionStats" in stage.get("$cursor", {})
            ),
            None,
        )
        examined = None if stats is None else int(stats.get("totalDocsExamined", 0))
        return cls(found, examined)


@pytest.fixture
async def history(common_settings: CommonSettings, request: pytest.FixtureRequest) -> Any:
    """A store with a year of history, its client recording the commands sent while ``recording``; its
    repositories using the query shapes of the engine a test names (``indirect``; the real server is the
    embedded one, and MongoDB's shapes are explained there too), else the embedded store's."""
    recorder = Recorder()
    client, connected = connect(
        common_settings.mongo_url, common_settings.mongo_db, app_name="tests", event_listeners=[recorder]
    )
    store = Store(connected.db, known_engine=getattr(request, "param", Engine.SECANTUSDB))
    now = datetime.now(UTC).replace(microsecond=0)
    mix = Mix(measuring_share=0.5)
    await load(store, GENERATIONS, accounts=4, now=now, builders=0, mix=mix)
    try:
        yield store, recorder, now, client
    finally:
        await client.drop_database(common_settings.mongo_db)
        await client.close()


async def _operations(store: Store, now: datetime) -> dict[str, Callable[[], Awaitable[object]]]:
    account = MEASURING_ACCOUNT
    reads = GenerationReads(store)
    first = await reads.newest_first(account, GenerationFilter(), None, PAGE)
    position = (first[-1].created_at, first[-1].id)
    batch = next(record.metadata["batch"] for record in first if record.metadata)
    subject = first[0].id
    webhook = await store.webhooks.find_one({"account_id": account})
    assert webhook is not None
    key = await store.api_keys.find_one({"account_id": account})
    assert key is not None
    month = (now - timedelta(days=30), now)
    usage, events = UsageRepository(store), EventRepository(store)
    # The migration step's first run: the one-time backfill of media due times reads every generation, once.
    await migrate_store(store, 30, now)
    deliveries, audit = DeliveryRepository(store), AuditRepository(store)
    leases, waiting = LeaseRepository(store), WaitingRepository(store)

    async def drain(found: Any) -> list[object]:
        return [item async for item in found]

    async def walk_again() -> object:
        # The migration's first run over the whole history (its mark forgotten), a week at most a window.
        await store.db[MIGRATIONS].delete_many({"_id": METADATA_PAIRS_MIGRATION})
        return await fill_metadata_pairs(store, batch=100, widest=timedelta(days=7), now=now)

    return {
        "listing, first page": lambda: reads.newest_first(account, GenerationFilter(), None, PAGE),
        "listing, cursor page": lambda: reads.newest_first(account, GenerationFilter(), position, PAGE),
        "listing, metadata filter": lambda: reads.newest_first(
            account, GenerationFilter(metadata={"batch": batch}), None, PAGE
        ),
        "listing, metadata and status filter": lambda: reads.newest_first(
            account, GenerationFilter(metadata={"batch": batch}, statuses=[Status.COMPLETED]), None, PAGE
        ),
        "listing, a pair nobody has": lambda: reads.newest_first(
            account, GenerationFilter(metadata={"batch": "none"}), None, PAGE
        ),
        "listing, status filter": lambda: reads.newest_first(
            account, GenerationFilter(statuses=[Status.FAILED, Status.COMPLETED]), None, PAGE
        ),
        "listing, created before": lambda: reads.newest_first(
            account, GenerationFilter(created_before=now - timedelta(days=100)), None, PAGE
        ),
        "usage, a month": lambda: usage.groups(account, *month, None, now=now),
        "usage by provider, a month": lambda: usage.by_provider(account, *month, None, now=now),
        "usage of a key, a month": lambda: usage.groups(account, *month, key["_id"], now=now),
        "budgets' month charged, by day": lambda: usage.charged_by_day(account, None, *month, now=now),
        "budgets' month charged of a key, by day": lambda: usage.charged_by_day(
            account, key["_id"], *month, now=now
        ),
        "events, first page": lambda: events.page_of_account(account, EventFilter(), None, PAGE),
        "events of a type": lambda: events.page_of_account(
            account, EventFilter(types=["video.failed"]), None, PAGE
        ),
        "events of a subject": lambda: events.page_of_account(
            account, EventFilter(subject_id=subject), None, PAGE
        ),
        "delivery log": lambda: deliveries.page_of_endpoint(
            webhook["_id"], account, DeliveryFilter(), None, PAGE
        ),
        "delivery log, failed": lambda: deliveries.page_of_endpoint(
            webhook["_id"], account, DeliveryFilter(status="failed"), None, PAGE
        ),
        "audit listing": lambda: audit.page_of_account(account, AuditFilter(), None, PAGE),
        "lease scan: expired": lambda: drain(leases.expired_leases(now, 100)),
        "lease scan: never leased": lambda: drain(leases.never_leased(now, 100)),
        "reconciler: past their wait deadline": lambda: waiting.past_deadline(now, 100),
        "reconciler: outbox due": lambda: drain(OutboxRepository(store).due(now, 100)),
        "retention sweep": lambda: GenerationDeletions(store).due(now, 100),
        "deliveries due": lambda: drain(DeliveryClaims(store, "t").due(now)),
        "admission: lanes pending": lambda: waiting.pending_at("runway"),
        "migration: metadata pairs": walk_again,
        "migration: events owed by earlier versions": lambda: adopt_owed_events(store, now),
        "migration step, a next run (videogen migrate)": lambda: migrate_store(store, 30, now),
        "migration: account queues to the providers' lines": lambda: requeue_account_waits(store),
        # The retention sweeper's removal of the history past its keeping (last: it removes some of it).
        "expiry: events": lambda: events.expire_before(now - EVENTS_KEPT),
        "expiry: deliveries": lambda: deliveries.expire_before(now - DELIVERIES_KEPT),
        "expiry: audit": lambda: audit.expire_before(now - AUDIT_KEPT),
    }


@pytest.mark.parametrize("history", list(Engine), indirect=True)
async def test_no_query_that_grows_with_history_scans_or_reads_the_history(history: Any) -> None:
    store, recorder, now, client = history
    operations = await _operations(store, now)
    db = client[store.db.name]
    problems: list[str] = []
    checked: dict[str, int] = {}
    for name, operation in operations.items():
        recorder.commands.clear()
        recorder.recording = True
        await operation()
        recorder.recording = False
        assert recorder.commands, f"{name} sent no command"
        for command in recorder.commands:
            for collection, read in explainable(command):
                if collection not in GROWING:
                    continue
                checked[name] = checked.get(name, 0) + 1
                plan = Plan.of(await db.command({"explain": read, "verbosity": "executionStats"}))
                assert plan.stages, f"{name}: no plan in the explain of {read}"
                why = ALLOWED.get((name, collection))
                if why is not None:
                    continue
                if "COLLSCAN" in plan.stages:
                    problems.append(f"{name}: a collection scan of {collection}: {read}")
                elif plan.docs_examined is not None and plan.docs_examined > FLAT:
                    problems.append(f"{name}: {plan.docs_examined} documents of {collection} read: {read}")
    assert not problems, "\n".join(problems)
    # Every operation was explained over a growing collection (a renamed collection would pass silently).
    assert set(checked) == set(operations) - {"admission: lanes pending"}


@pytest.mark.parametrize(
    "kept",
    [
        GenerationFilter(),
        GenerationFilter(statuses=[Status.FAILED, Status.COMPLETED]),
        GenerationFilter(providers=["runway"], created_before=datetime.now(UTC) - timedelta(days=30)),
    ],
    ids=["all", "two statuses", "provider and before"],
)
async def test_a_walk_over_a_year_of_windows_neither_skips_nor_repeats(
    history: Any, kept: GenerationFilter
) -> None:
    # The windows of a listing are read back in time and sized as they go: walked page by page over a year
    # of history, the pages are exactly what one read of the whole account, filtered and sorted, gives.
    store = history[0]
    docs = await store.generations.find({"account_id": MEASURING_ACCOUNT}).to_list(None)
    expected = [
        doc["_id"]
        for doc in sorted(docs, key=lambda doc: (doc["created_at"], doc["_id"]), reverse=True)
        if kept.keeps(doc)
        and (not kept.statuses or doc["status"] in {status.value for status in kept.statuses})
        and (kept.created_before is None or doc["created_at"] < kept.created_before)
    ]
    assert len(expected) > 300
    reads = GenerationReads(store)
    walked: list[str] = []
    position: tuple[datetime, str] | None = None
    while True:
        page = await reads.newest_first(MEASURING_ACCOUNT, kept, position, 37)
        walked.extend(record.id for record in page)
        if len(page) < 37:
            break
        position = (page[-1].created_at, page[-1].id)
    assert walked == expected


async def test_a_metadata_filter_lists_exactly_the_generations_with_those_pairs(history: Any) -> None:
    # Read through by_account_metadata (one pair; the rest checked on what it returns), page by page: the
    # pages are what one read of the whole account, filtered by the metadata itself, gives.
    store = history[0]
    docs = await store.generations.find({"account_id": MEASURING_ACCOUNT}).to_list(None)
    with_metadata = [doc for doc in docs if doc.get("metadata") and doc.get("deleted_at") is None]
    newest = max(with_metadata, key=lambda doc: doc["created_at"])
    customer = newest["metadata"]["customer"]
    filters = [
        GenerationFilter(metadata={"batch": newest["metadata"]["batch"]}),
        GenerationFilter(metadata={"customer": customer}),
        GenerationFilter(metadata=dict(newest["metadata"])),
        GenerationFilter(metadata={"customer": customer}, statuses=[Status.COMPLETED]),
        GenerationFilter(metadata={"customer": "nobody"}),
    ]
    reads = GenerationReads(store)
    listed: list[list[str]] = []
    for kept in filters:
        expected = [
            doc["_id"]
            for doc in sorted(docs, key=lambda doc: (doc["created_at"], doc["_id"]), reverse=True)
            if kept.keeps(doc)
        ]
        walked: list[str] = []
        position: tuple[datetime, str] | None = None
        while True:
            page = await reads.newest_first(MEASURING_ACCOUNT, kept, position, 2)
            walked.extend(record.id for record in page)
            if len(page) < 2:
                break
            position = (page[-1].created_at, page[-1].id)
        assert walked == expected, kept
        listed.append(walked)
    # The newest generation with metadata is found by each of its pairs and by both; nobody has "nobody".
    assert all(newest["_id"] in walked for walked in listed[:3])
    assert listed[-1] == []
