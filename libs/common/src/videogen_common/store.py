"""MongoDB: the collections every service uses, and their indexes (created by the migration step)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from pymongo import ASCENDING, DESCENDING, AsyncMongoClient, IndexModel, WriteConcern
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.asynchronous.database import AsyncDatabase

Doc = dict[str, Any]


@dataclass(frozen=True)
class Store:
    """Typed handles on videogen's collections."""

    db: AsyncDatabase[Doc]

    @property
    def generations(self) -> AsyncCollection[Doc]:
        return self.db["generations"]

    @property
    def webhooks(self) -> AsyncCollection[Doc]:
        return self.db["webhooks"]

    @property
    def deliveries(self) -> AsyncCollection[Doc]:
        return self.db["deliveries"]

    @property
    def api_keys(self) -> AsyncCollection[Doc]:
        return self.db["api_keys"]

    @property
    def audit_events(self) -> AsyncCollection[Doc]:
        """Changes to each account's keys and webhooks (see videogen_common.audit)."""
        return self.db["audit_events"]

    @property
    def account_slots(self) -> AsyncCollection[Doc]:
        """The orchestrator's per-account count of generations in flight (one document per account)."""
        return self.db["account_slots"]

    @property
    def uploads(self) -> AsyncCollection[Doc]:
        """Images clients uploaded for use as a first frame (the bytes are in media storage)."""
        return self.db["uploads"]

    @property
    def rate_limits(self) -> AsyncCollection[Doc]:
        """The api's per-account request counts, one document per (policy, window, account), all replicas'."""
        return self.db["rate_limits"]


class Durability(StrEnum):
    """How durable a write must be before the store acknowledges it (``VIDEOGEN_MONGO_WRITE_CONCERN``).

    Every write goes through the client ``connect`` makes, so this one choice covers creation (before the
    ``202``), state transitions (before their status event is published), delivery records and attempts
    (before an event's offset is committed), webhooks, keys, leases and account slots."""

    # On a majority of the replica set *and* in its journal: survives the crash of any process, the store's
    # included. The default, and the only choice under which docs/guarantees.md holds.
    MAJORITY_JOURNALED = "majority-journaled"
    # On a majority, journal left to the server (MongoDB journals majority writes unless
    # writeConcernMajorityJournalDefault was turned off; the embedded SecantusDB does not).
    MAJORITY = "majority"
    # The primary's memory only: loses acknowledged writes when the store crashes. For measuring what
    # durability costs, never for a deployment.
    PRIMARY_MEMORY = "primary-memory"


WRITE_CONCERNS: dict[Durability, WriteConcern] = {
    Durability.MAJORITY_JOURNALED: WriteConcern(w="majority", j=True),
    Durability.MAJORITY: WriteConcern(w="majority"),
    Durability.PRIMARY_MEMORY: WriteConcern(w=1, j=False),
}


def connect(
    url: str,
    database: str,
    *,
    app_name: str,
    durability: Durability = Durability.MAJORITY_JOURNALED,
    server_selection_timeout_ms: int | None = None,
) -> tuple[AsyncMongoClient[Doc], Store]:
    """A client whose every write carries ``durability``'s write concern and whose reads see only what a
    majority acknowledged (so a decision is never taken on a write that a crash could still take back).
    Both are given here, explicitly, so they win over the server's defaults and over options in ``url``."""
    concern = WRITE_CONCERNS[durability].document
    options: dict[str, Any] = {"w": concern["w"]}
    if "j" in concern:
        options["journal"] = concern["j"]
    if server_selection_timeout_ms is not None:  # how long a call waits for a store to answer (30 s)
        options["serverSelectionTimeoutMS"] = server_selection_timeout_ms
    client: AsyncMongoClient[Doc] = AsyncMongoClient(
        url, appname=app_name, tz_aware=True, readConcernLevel="majority", **options
    )
    return client, Store(client[database])


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
    await store.generations.update_many(
        {"outbox_pending": True, "outbox_at": {"$exists": False}}, {"$set": {"outbox_at": datetime.now(UTC)}}
    )
    for collection, names in RETIRED_INDEXES.items():
        existing = {index["name"] async for index in await store.db[collection].list_indexes()}
        for name in names:
            if name in existing:
                await store.db[collection].drop_index(name)
