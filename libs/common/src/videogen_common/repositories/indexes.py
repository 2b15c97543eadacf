"""Every collection's indexes (each declared beside the queries it serves) and the migration step that makes
them (``videogen migrate``, and the test fixtures), with the data migrations it runs
(``requeue_account_waits``) and the indexes it retires."""

from __future__ import annotations

from datetime import UTC, datetime

from pymongo import IndexModel

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
    waiting,
    webhooks,
)
from videogen_common.repositories.generations import ACTIVE
from videogen_common.store import Store

# An expiry long past: the reconciler resumes such a generation at its next pass.
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

INDEXES: dict[str, list[IndexModel]] = {
    "generations": [
        *generations.INDEXES,
        *leases.INDEXES,
        *generation_reads.INDEXES,
        *idempotency.INDEXES,
        *deletions.INDEXES,
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
}


# Indexes earlier versions made that nothing uses any more: each costs every write to its collection.
RETIRED_INDEXES: dict[str, list[str]] = {
    # Replaced by deliveries' derived ids. Deliveries made before keep their random ids: a status event
    # redelivered across the upgrade may be delivered once more (at-least-once allows it).
    "deliveries": ["one_per_event_endpoint"],
    # Replaced by by_outbox_at when the notifier, rather than the broker's acknowledgement, began settling
    # the outbox.
    "generations": ["by_outbox"],
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
    for collection, names in RETIRED_INDEXES.items():
        existing = {index["name"] async for index in await store.db[collection].list_indexes()}
        for name in names:
            if name in existing:
                await store.db[collection].drop_index(name)


async def requeue_account_waits(store: Store) -> int:
    """Migration: generations a version before admission left waiting in their account's queue (``slot_wait``
    of ``account\nid``) are handed to the reconciler, which puts them in line at their provider (their lease
    expires at the epoch, like a handed-back one). Returns how many."""
    moved = await store.generations.update_many(
        {"slot_wait": {"$regex": "^[^\n]*\n[^\n]*$"}, "status": {"$in": ACTIVE}},
        {"$unset": {"slot_wait": ""}, "$set": {"lease_expires_at": _EPOCH}},
    )
    return moved.modified_count
