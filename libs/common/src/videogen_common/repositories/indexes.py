"""Every collection's indexes (each declared beside the queries it serves) and the migration step that makes
them (``videogen migrate``, and the test fixtures)."""

from __future__ import annotations

from datetime import UTC, datetime

from pymongo import ASCENDING, DESCENDING, IndexModel

from videogen_common.repositories import audit, deliveries, keys, rate_limits, uploads, webhooks
from videogen_common.store import Store

INDEXES: dict[str, list[IndexModel]] = {
    "generations": [
        # One account's generations newest first; _id breaks ties so the cursor is stable.
        IndexModel(
            [("account_id", ASCENDING), ("created_at", DESCENDING), ("_id", DESCENDING)], name="by_account"
        ),
        # The reconciler: unfinished generations whose lease expired (or was never taken).
        IndexModel([("status", ASCENDING), ("lease_expires_at", ASCENDING)], name="by_lease"),
        # Terminal generations whose status event the notifier has not taken in yet (transactional outbox),
        # by when it was last put on Kafka. Sparse: a settled generation leaves it.
        IndexModel([("outbox_at", ASCENDING)], name="by_outbox_at", sparse=True),
        # Idempotency-Key: "{account_id}\n{key}", set only when the client sent a key. Unique, so creating a
        # generation under a key is one atomic insert; sparse, so generations without a key are not indexed.
        IndexModel([("idem", ASCENDING)], name="one_per_idempotency_key", unique=True, sparse=True),
        # Listing filtered by status (GET /v1/generations?status=…), newest first.
        IndexModel(
            [
                ("account_id", ASCENDING),
                ("status", ASCENDING),
                ("created_at", DESCENDING),
                ("_id", DESCENDING),
            ],
            name="by_account_status",
        ),
        # Generations waiting for one of their account's in-flight slots: "{account_id}\n{id}", set only while
        # waiting, so one account's queue is an ordered range of this small index (ids are time-ordered).
        IndexModel([("slot_wait", ASCENDING)], name="by_slot_wait", sparse=True),
    ],
    "webhooks": webhooks.INDEXES,
    "deliveries": deliveries.INDEXES,
    "api_keys": keys.INDEXES,
    "audit_events": audit.INDEXES,
    "uploads": uploads.INDEXES,
    "rate_limits": rate_limits.INDEXES,
}


# Indexes earlier versions made that nothing uses any more: each costs every write to its collection.
RETIRED_INDEXES: dict[str, list[str]] = {
    # Replaced by deliveries' derived ids. Deliveries made before keep their random ids: a status event
    # redelivered across the upgrade may be delivered once more (at-least-once allows it).
    "deliveries": ["one_per_event_endpoint"],
    # Replaced by by_outbox_at when the notifier, rather than the broker's acknowledgement, began settling
    # the outbox.
    "generations": ["by_outbox"],
}


async def ensure_indexes(store: Store) -> None:
    for collection, models in INDEXES.items():
        await store.db[collection].create_indexes(models)
    # Generations left pending by a version without outbox_at are owed their event as of now (before the
    # retired by_outbox index goes, so MongoDB finds them through it).
    await store.generations.update_many(
        {"outbox_pending": True, "outbox_at": {"$exists": False}}, {"$set": {"outbox_at": datetime.now(UTC)}}
    )
    for collection, names in RETIRED_INDEXES.items():
        existing = {index["name"] async for index in await store.db[collection].list_indexes()}
        for name in names:
            if name in existing:
                await store.db[collection].drop_index(name)
