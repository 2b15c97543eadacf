"""Every collection's indexes (each declared beside the queries it serves) and the migration step that makes
them (``videogen migrate``, and the test fixtures)."""

from __future__ import annotations

from datetime import UTC, datetime

from pymongo import ASCENDING, DESCENDING, IndexModel

from videogen_common.repositories import generations
from videogen_common.repositories.generations import GenerationRepository
from videogen_common.store import Store

INDEXES: dict[str, list[IndexModel]] = {
    "generations": generations.INDEXES,
    "webhooks": [
        IndexModel([("account_id", ASCENDING), ("created_at", ASCENDING)], name="by_account"),
        # Endpoints disabled whose webhook.disabled notice is not yet recorded (the notifier finishes them).
        IndexModel([("notice_pending", ASCENDING)], name="by_notice_pending", sparse=True),
    ],
    # One per (event, endpoint) by their ids alone: a delivery's _id is derived from the pair.
    "deliveries": [
        IndexModel([("status", ASCENDING), ("next_attempt_at", ASCENDING)], name="by_due"),
        IndexModel([("webhook_id", ASCENDING), ("created_at", DESCENDING)], name="by_webhook"),
        # Deliveries waiting for a retry (``retry_at`` is set only then): the retry backlog is counted from
        # this small index. Sparse, so a delivery that never fails costs it nothing.
        IndexModel([("retry_at", ASCENDING)], name="by_retry", sparse=True),
    ],
    "api_keys": [
        IndexModel([("key_hash", ASCENDING)], name="by_hash", unique=True),
    ],
    # One account's audit trail newest first (GET /v1/audit-events); _id breaks ties so the cursor is stable.
    "audit_events": [
        IndexModel(
            [("account_id", ASCENDING), ("created_at", DESCENDING), ("_id", DESCENDING)], name="by_account"
        ),
    ],
    # An upload is forgotten once it expires (a generation made from it has its own reference to the bytes).
    "uploads": [IndexModel([("expires_at", ASCENDING)], name="expire", expireAfterSeconds=0)],
    # A window's count is removed a few minutes after the window ends (the TTL monitor runs every minute).
    "rate_limits": [IndexModel([("expires_at", ASCENDING)], name="expire", expireAfterSeconds=0)],
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
    await GenerationRepository(store).date_unstamped_outbox(datetime.now(UTC))
    for collection, names in RETIRED_INDEXES.items():
        existing = {index["name"] async for index in await store.db[collection].list_indexes()}
        for name in names:
            if name in existing:
                await store.db[collection].drop_index(name)
