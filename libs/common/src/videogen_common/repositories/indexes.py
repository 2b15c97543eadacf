"""Every collection's indexes (each declared beside the queries it serves) and the migration step that makes
them (``videogen migrate``, and the test fixtures), with the data migrations it runs
(``requeue_account_waits``, ``fill_metadata_pairs``) and the indexes it retires."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from pymongo import ASCENDING, IndexModel

from videogen_common.records.generation import METADATA_PAIRS
from videogen_common.repositories import (
    audit,
    batches,
    budgets,
    deletions,
    deliveries,
    events,
    generation_reads,
    generations,
    idempotency,
    instances,
    keys,
    leases,
    provider_health,
    provider_pools,
    rate_limits,
    uploads,
    usage,
    waiting,
    webhooks,
)
from videogen_common.repositories.generations import ACTIVE
from videogen_common.repositories.paging import FLOOR
from videogen_common.store import Store

Doc = dict[str, Any]

# An expiry long past: the reconciler resumes such a generation at its next pass.
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

# The generations by creation time alone: the data migrations' walk (``fill_metadata_pairs``) reads them
# window by window of this range, the one shape the embedded store serves without reading the collection (it
# answers an ``_id`` range with a scan).
MIGRATION_INDEXES = [
    IndexModel([("created_at", ASCENDING), ("_id", ASCENDING)], name="by_created"),
    # The events an earlier version left owed (``earlier_outboxes.adopt_owed_events``): nothing writes the
    # field any more, so the index holds only what is still to adopt (none, after the first migrate).
    IndexModel([("outbox_pending", ASCENDING)], name="by_outbox_pending", sparse=True),
]

INDEXES: dict[str, list[IndexModel]] = {
    "generations": [
        *generations.INDEXES,
        *leases.INDEXES,
        *generation_reads.INDEXES,
        *idempotency.INDEXES,
        *deletions.INDEXES,
        *MIGRATION_INDEXES,
    ],
    "webhooks": webhooks.INDEXES,
    "deliveries": deliveries.INDEXES,
    "events": events.INDEXES,
    "api_keys": keys.INDEXES,
    "audit_events": audit.INDEXES,
    "uploads": uploads.INDEXES,
    "rate_limits": rate_limits.INDEXES,
    "provider_pools": provider_pools.INDEXES,
    "provider_health": provider_health.INDEXES,
    "waiting_lanes": waiting.INDEXES,
    "orchestrators": instances.INDEXES,
    "budget_counters": budgets.COUNTER_INDEXES,
    "batches": batches.INDEXES,
    "usage_days": usage.INDEXES,
}


# Indexes earlier versions made that nothing uses any more: each costs every write to its collection.
RETIRED_INDEXES: dict[str, list[str]] = {
    # Replaced by deliveries' derived ids. Deliveries made before keep their random ids: a status event
    # redelivered across the upgrade may be delivered once more (at-least-once allows it).
    "deliveries": ["one_per_event_endpoint"],
    # by_outbox: replaced by by_outbox_at when the notifier, rather than the broker's acknowledgement, began
    # settling the outbox. by_lease: by by_lease_created (the same two fields, then the creation time the
    # reconciler's scan for never-leased generations reads a range of).
    "generations": ["by_outbox", "by_lease"],
    # The webhook.disabled notices owed are events in the webhook's outbox now (by_outbox_at; the migration
    # moves what was owed: videogen_common.earlier_outboxes).
    "webhooks": ["by_notice_pending"],
    # A TTL index removed an upload's document when it expired, but not its bytes: the retention sweeper
    # removes both now (by_expiry).
    "uploads": ["expire"],
}


async def ensure_indexes(store: Store) -> None:
    for collection, models in INDEXES.items():
        await store.db[collection].create_indexes(models)
    # Generations waiting in an account's queue (before admission's lines at the providers) join those lines.
    await requeue_account_waits(store)
    # Generations stored before their metadata's pairs were get them (the listing's metadata filter).
    await fill_metadata_pairs(store)
    for collection, names in RETIRED_INDEXES.items():
        existing = {index["name"] async for index in await store.db[collection].list_indexes()}
        for name in names:
            if name in existing:
                await store.db[collection].drop_index(name)


async def requeue_account_waits(store: Store) -> int:
    """Migration: generations a version before admission left waiting in their account's queue (``slot_wait``
    of ``account\nid``) are handed to the reconciler, which puts them in line at their provider (their lease
    expires at the epoch, like a handed-back one). Returns how many."""
    # The waiting generations are a range of the sparse by_slot_wait (what waits now, not the history); an
    # account queue's key has one separator, a provider lane's two.
    waiting = store.generations.find({"slot_wait": {"$gte": ""}}, projection={"slot_wait": 1, "status": 1})
    legacy = [
        doc["_id"] async for doc in waiting if doc["slot_wait"].count("\n") == 1 and doc["status"] in ACTIVE
    ]
    if not legacy:
        return 0
    moved = await store.generations.update_many(
        {"_id": {"$in": legacy}, "slot_wait": {"$regex": "^[^\n]*\n[^\n]*$"}, "status": {"$in": ACTIVE}},
        {"$unset": {"slot_wait": ""}, "$set": {"lease_expires_at": _EPOCH}},
    )
    return moved.modified_count


# A generation's metadata as its pairs, computed by the store from what the document holds when the update
# runs (a generation deleted meanwhile has no metadata, and gets no pairs): ``records.generation.to_doc``'s.
_PAIRS_OF_METADATA: Doc = {
    "$cond": [
        {"$eq": [{"$type": "$metadata"}, "object"]},
        {
            "$map": {
                "input": {"$objectToArray": "$metadata"},
                "as": "p",
                "in": {"$concat": ["$$p.k", "=", "$$p.v"]},
            }
        },
        "$$REMOVE",
    ]
}
# What the walk has done, in the ``migrations`` collection: ``through``, the creation time up to which every
# generation has been looked at.
MIGRATIONS = "migrations"
METADATA_PAIRS_MIGRATION = "metadata_pairs"
# The walk starts again this far before where it stopped: generations a replica of the version before wrote
# meanwhile (a rolling update) with a creation time a little earlier than the mark.
_OVERLAP = timedelta(hours=1)


@dataclass
class Walked:
    """What ``fill_metadata_pairs`` did: windows read, generations read, generations given their pairs."""

    windows: int = 0
    read: int = 0
    filled: int = 0


async def fill_metadata_pairs(
    store: Store,
    *,
    batch: int = 1000,
    widest: timedelta = timedelta(days=30),
    now: datetime | None = None,
) -> Walked:
    """Migration: every generation with metadata and no ``metadata_pairs`` gets them. The walk reads the
    generations window by window of ``by_created`` (only the fields it needs), about ``batch`` a window (each
    window sized from the last: at most ``widest``), and updates those that lack their pairs by id, one
    command a window; after each window it records how far it got (``migrations``), so it resumes there if
    stopped, and a later run (the next ``videogen migrate``) reads only what was made since (less
    ``_OVERLAP``). Idempotent: a generation that has its pairs is not written."""
    now = now or datetime.now(UTC)
    walked = Walked()
    marks = store.db["migrations"]
    mark = await marks.find_one({"_id": METADATA_PAIRS_MIGRATION})
    if mark is None and await store.generations.estimated_document_count() == 0:
        # A new store: every generation it will hold is written with its pairs.
        await _mark(store, now)
        return walked
    start: datetime | None = None if mark is None else mark["through"].replace(tzinfo=UTC) - _OVERLAP
    reach = timedelta(days=1)
    while start is None or start < now:
        # The first window of a first run takes whatever is older than the floor of the listings' windows.
        end = FLOOR if start is None else min(start + reach, now)
        window: Doc = {"$lt": end} if start is None else {"$gte": start, "$lt": end}
        found = await store.generations.find(
            {"created_at": window}, projection={"created_at": 1, "metadata": 1, METADATA_PAIRS: 1}
        ).to_list(None)
        walked.windows += 1
        walked.read += len(found)
        lacking = [doc["_id"] for doc in found if doc.get("metadata") and METADATA_PAIRS not in doc]
        if lacking:
            filled = await store.generations.update_many(
                {"_id": {"$in": lacking}}, [{"$set": {METADATA_PAIRS: _PAIRS_OF_METADATA}}]
            )
            walked.filled += filled.modified_count
        await _mark(store, end)
        if start is not None:
            # The next window holds about ``batch``, at the rate this one had (twice as wide after none).
            rate = len(found) / max((end - start).total_seconds(), 1.0)
            wanted = timedelta(seconds=batch / rate) if rate else reach * 2
            reach = max(min(wanted, reach * 2, widest), timedelta(seconds=1))
        start = end
    return walked


async def once(store: Store, name: str, migration: Callable[[], Awaitable[object]], now: datetime) -> bool:
    """Run a one-time data migration (idempotent: interrupted, it runs again), unless ``migrations`` records
    it done; True if it ran. For what only documents an earlier version wrote can need, and no shape of the
    store finds without reading every generation (a field they lack): a new store is marked done at once."""
    if await store.db["migrations"].find_one({"_id": name}) is not None:
        return False
    if await store.generations.estimated_document_count() > 0:
        await migration()
    await store.db["migrations"].update_one({"_id": name}, {"$set": {"done_at": now}}, upsert=True)
    return True


async def _mark(store: Store, through: datetime) -> None:
    await store.db["migrations"].update_one(
        {"_id": METADATA_PAIRS_MIGRATION}, {"$set": {"through": through}}, upsert=True
    )
