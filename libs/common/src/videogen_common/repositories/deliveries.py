"""The ``deliveries`` collection: every query, claim and compare-and-set on webhook deliveries.

``DeliveryRepository`` is what the api and the notifier's creation of deliveries use (store new ones, read
and list an account's, re-queue, fail an endpoint's pending ones, the metrics' counts). ``DeliveryClaims``
adds the notifier's claims: the three ways an attempt comes to hold a delivery (it was created claimed, it is
claimed when due, or a claim that ran short is renewed), handing claims back, and recording what an attempt
did. A claim is the delivery's ``next_attempt_at`` pushed past the attempt's deadline, with the claiming
instance's token in ``claim``: no other instance takes the delivery until it ends.

Query shapes and the embedded store: it answers findAndModify, and any condition on several fields beside the
``by_due`` range, with a scan of every delivery ever made, and reads every due document whatever the limit.
So ``due`` reads the due range alone (``due_range``; the caller skips what it does not want), which costs
MongoDB 7 no more than a narrower query would, and a claim is a conditional ``update_one`` by id
(``claim_filter``), which on MongoDB is also a findAndModify when the claim must read the delivery
(``claim_due``, chosen by ``Store.engine()``)."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

import orjson
from pymongo import ASCENDING, DESCENDING, IndexModel, ReturnDocument, UpdateOne
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.errors import BulkWriteError

from videogen_common.deliveries import FAILED, PENDING, RETRY_AT
from videogen_common.records.delivery import Attempt, Delivery
from videogen_common.repositories.paging import Position, ceil_ms, created_between, newest_first
from videogen_common.store import DUPLICATE_KEY, Engine, Store

Doc = dict[str, Any]


# One per (event, endpoint) by their ids alone: a delivery's _id is derived from the pair.
# How long a delivery is kept (the delivery log): the retention sweeper removes older ones (``expire_before``)
# through ``by_created``. Retries give up within hours, so none of them is still pending by then.
KEPT = timedelta(days=30)

INDEXES: list[IndexModel] = [
    IndexModel([("status", ASCENDING), ("next_attempt_at", ASCENDING)], name="by_due"),
    IndexModel([("webhook_id", ASCENDING), ("created_at", DESCENDING)], name="by_webhook"),
    # The delivery log of one status (?status=failed): those are a few of an endpoint's deliveries, so
    # reading by_webhook for them would read its history (``page_of_endpoint``).
    IndexModel(
        [("webhook_id", ASCENDING), ("status", ASCENDING), ("created_at", DESCENDING), ("_id", DESCENDING)],
        name="by_webhook_status",
    ),
    # Deliveries waiting for a retry (``retry_at`` is set only then): the retry backlog is counted from
    # this small index. Sparse, so a delivery that never fails costs it nothing.
    IndexModel([(RETRY_AT, ASCENDING)], name="by_retry", sparse=True),
    # A generation's deliveries, whatever their endpoint (one since deleted too): a delete erases their
    # bodies.
    IndexModel([("generation_id", ASCENDING)], name="by_generation"),
    # Its expiry: everything made before a moment (``expire_before``).
    IndexModel([("created_at", ASCENDING), ("_id", ASCENDING)], name="by_created"),
]


def due_range(now: datetime) -> Doc:
    """The sweep's query: the due range of ``by_due`` and nothing beside it. On MongoDB 7 it could also leave
    busy endpoints out (``webhook_id: {"$nin": [...]}``); the embedded store answers any such condition with
    a scan of every delivery ever made, so the dispatcher skips those itself."""
    return {"status": PENDING, "next_attempt_at": {"$lte": now}}


def claim_filter(delivery_id: str, now: datetime, known_attempts: int | None) -> Doc:
    """The condition of a claim, for a conditional ``update_one`` by id: the delivery is still due (and, when
    the claimer read it, has the attempts it read). MongoDB 7 would claim with findAndModify and get the
    document back in the same round trip; the embedded store serves findAndModify with a scan of the
    collection, so the claim is an update and the document is read back by id when not already known."""
    query: Doc = {"_id": delivery_id, "status": PENDING, "next_attempt_at": {"$lte": now}}
    if known_attempts is not None:
        query["attempts"] = {"$size": known_attempts}
    return query


def _requeue(now: datetime) -> Doc:
    """The update that makes a delivery due now: the sweeper sends it on its next pass."""
    return {
        "$set": {
            "status": PENDING,
            "next_attempt_at": now,
            RETRY_AT: now,
            "failure_reason": None,
            "updated_at": now,
        }
    }


@dataclass(frozen=True)
class DeliveryFilter:
    """What a listing of an endpoint's deliveries keeps: each given condition must hold."""

    status: str | None = None
    event_type: str | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None

    def clause(self) -> Doc:
        """As a store query; empty without conditions."""
        clause: Doc = {}
        if self.status is not None:
            clause["status"] = self.status
        if self.event_type is not None:
            clause["event_type"] = self.event_type
        return {**clause, **created_between(self.created_after, self.created_before)}

    def keeper(self, account_id: str) -> Callable[[Doc], bool]:
        """Whether a delivery read from a window of ``by_webhook`` is the account's and one this keeps."""

        def keeps(doc: Doc) -> bool:
            return (
                doc.get("account_id") == account_id
                and (self.status is None or doc.get("status") == self.status)
                and (self.event_type is None or doc.get("event_type") == self.event_type)
            )

        return keeps


class DeliveryRepository:
    def __init__(self, store: Store) -> None:
        self._store = store

    async def expire_before(self, cutoff: datetime) -> int:
        """Remove every delivery made before ``cutoff`` (a range of ``by_created``); returns how many."""
        removed = await self._store.deliveries.delete_many({"created_at": {"$lt": cutoff}})
        return removed.deleted_count

    @property
    def _deliveries(self) -> AsyncCollection[Doc]:
        # Looked up at each use, so a store whose collections change (tests wrap them) is followed.
        return self._store.deliveries

    # Creating.

    async def insert_new(self, deliveries: list[Delivery]) -> list[Delivery]:
        """Store ``deliveries`` in one unordered batch and return those that were new. One whose (event,
        endpoint) pair is already stored (the event was seen before) is skipped, not an error: the ``_id``
        index decides, so a repeat creates nothing. Any other write error is raised."""
        if not deliveries:
            return []
        try:
            await self._deliveries.insert_many([d.to_doc() for d in deliveries], ordered=False)
        except BulkWriteError as exc:
            errors = exc.details.get("writeErrors", [])
            if any(error.get("code") != DUPLICATE_KEY for error in errors) or exc.details.get(
                "writeConcernErrors"
            ):
                raise
            duplicates = {error["index"] for error in errors}
            return [d for index, d in enumerate(deliveries) if index not in duplicates]
        return deliveries

    async def insert(self, delivery: Delivery) -> None:
        """Store one new delivery; a repeat of its (event, endpoint) pair raises ``DuplicateKeyError``."""
        await self._deliveries.insert_one(delivery.to_doc())

    async def erase_generation(self, generation_id: str, fields: Mapping[str, Any]) -> int:
        """Replace ``fields`` in the ``data`` of the stored body of every delivery of the generation's events
        (a delete): the delivery log then shows the erased body, and an attempt still to come sends it. One
        read on ``by_generation``, one batch of writes; returns how many bodies changed."""
        changes = []
        async for doc in self._deliveries.find({"generation_id": generation_id}, projection={"body": 1}):
            body = doc.get("body")
            if not body:
                continue
            payload = orjson.loads(body)
            data = payload.get("data")
            if not isinstance(data, dict) or all(data.get(k) == v for k, v in fields.items()):
                continue
            payload["data"] = {**data, **fields}
            changes.append(UpdateOne({"_id": doc["_id"]}, {"$set": {"body": orjson.dumps(payload).decode()}}))
        if not changes:
            return 0
        written = await self._deliveries.bulk_write(changes, ordered=False)
        return written.modified_count

    # An account's deliveries (the api).

    async def owned(self, delivery_id: str, account_id: str) -> Delivery | None:
        doc = await self._deliveries.find_one({"_id": delivery_id, "account_id": account_id})
        return None if doc is None else Delivery.from_doc(doc)

    async def page_of_endpoint(
        self, webhook_id: str, account_id: str, kept: DeliveryFilter, position: Position | None, limit: int
    ) -> list[Delivery]:
        """Up to ``limit`` of one endpoint's deliveries that ``kept`` keeps, newest first, after
        ``position``: read window by window (``paging``) of ``by_webhook``, or of ``by_webhook_status`` when a
        status is asked for, the account and event type checked on what each window returns."""
        query: Doc = {"webhook_id": webhook_id}
        if kept.status is not None:
            query["status"] = kept.status
        query.update(created_between(kept.created_after, kept.created_before))
        docs = await newest_first(
            self._deliveries,
            query,
            position,
            limit,
            keep=kept.keeper(account_id),
            reads=("account_id", "status", "event_type"),
        )
        return [Delivery.from_doc(doc) for doc in docs]

    async def requeue_finished(self, delivery_id: str, account_id: str, now: datetime) -> Delivery | None:
        """Make a succeeded or failed delivery due now; the delivery as it then is, or None if it was
        pending (re-queued by a concurrent request) or is not the account's."""
        doc = await self._deliveries.find_one_and_update(
            {"_id": delivery_id, "account_id": account_id, "status": {"$ne": PENDING}},
            _requeue(now),
            return_document=ReturnDocument.AFTER,
        )
        return None if doc is None else Delivery.from_doc(doc)

    async def requeue_failed_since(
        self, webhook_id: str, account_id: str, since: datetime, now: datetime
    ) -> int:
        """Make every failed delivery of the endpoint created at or after ``since`` (to the store's
        millisecond, rounded up) due now; how many."""
        result = await self._deliveries.update_many(
            {
                "webhook_id": webhook_id,
                "account_id": account_id,
                "status": FAILED,
                "created_at": {"$gte": ceil_ms(since)},
            },
            _requeue(now),
        )
        return result.modified_count

    async def fail_pending_of_endpoint(
        self, webhook_id: str, account_id: str, reason: str, now: datetime
    ) -> None:
        """Fail every pending delivery of a deleted endpoint with ``reason``."""
        await self._deliveries.update_many(
            {"webhook_id": webhook_id, "account_id": account_id, "status": PENDING},
            {
                "$set": {
                    "status": FAILED,
                    "next_attempt_at": None,
                    "failure_reason": reason,
                    "updated_at": now,
                }
            },
        )

    # The notifier's gauges, store-wide.

    async def count_waiting_for_retry(self) -> int:
        """From the sparse index of deliveries waiting for a retry: a count of those alone."""
        return await self._deliveries.count_documents({RETRY_AT: {"$exists": True}})

    async def count_overdue(self, now: datetime, overdue_after: timedelta) -> int:
        return await self._deliveries.count_documents(
            {"status": PENDING, "next_attempt_at": {"$lt": now - overdue_after}}
        )


class DeliveryClaims(DeliveryRepository):
    """The notifier's claims and writes on deliveries, under the claim token ``owner`` (one per instance).

    Every write is one conditional ``update_one`` by id and every read is by id or the due range of the
    ``by_due`` index (``claim_filter``, ``due_range``)."""

    def __init__(self, store: Store, owner: str) -> None:
        super().__init__(store)
        # The claim token of this instance: on the deliveries it creates already claimed, and on its claims.
        self.owner = owner

    # Created claimed.

    def mark_claimed(self, delivery: Delivery, until: datetime) -> Delivery:
        """A delivery not yet stored (as ``pending_delivery`` built it), claimed by this instance until
        ``until`` once it is stored."""
        return replace(delivery, next_attempt_at=until, claim=self.owner)

    async def stored_claimed(self, delivery_id: str) -> Delivery | None:
        """The delivery, if it is stored pending and claimed by this instance (a ``create`` that failed may
        have stored it all the same). Read by id: it happens only after a store failure."""
        doc = await self._deliveries.find_one({"_id": delivery_id})
        stored = None if doc is None else Delivery.from_doc(doc)
        if stored is not None and stored.status == PENDING and stored.claim == self.owner:
            return stored
        return None

    # Claimed when due.

    async def due(self, now: datetime) -> AsyncGenerator[Delivery, None]:
        """The due deliveries, oldest first, without their bodies (a claimed delivery's is read with it).
        The due range of the ``by_due`` index and nothing else (``due_range``): the caller skips what it
        does not want, such as busy endpoints' deliveries, and closes the iterator when it has enough."""
        found = self._deliveries.find(due_range(now), projection={"body": 0}).sort("next_attempt_at", 1)
        try:
            async for doc in found:
                yield Delivery.from_doc(doc)
        finally:
            await found.close()

    async def claim_due(
        self, delivery_id: str, known: Delivery | None, until: datetime, now: datetime
    ) -> Delivery | None:
        """Push the delivery's next attempt to ``until`` (past this attempt's deadline), if it is still due
        (a conditional update: ``claim_filter``). With the document already known, the update also requires
        its attempts to be the ones known, so the known document is the one claimed; the claim's end, with
        this instance's token, tells us the document read back by id (when it is not known, or known without
        its body) is the one we claimed. On MongoDB, a claim that must read the document gets it from the same
        findAndModify instead."""
        query = claim_filter(delivery_id, now, None if known is None else len(known.attempts))
        update: Doc = {"$set": {"next_attempt_at": until, "claim": self.owner}}
        must_read = known is None or known.body is None
        if must_read and await self._store.engine() is Engine.MONGODB:
            doc = await self._deliveries.find_one_and_update(
                query, update, return_document=ReturnDocument.AFTER
            )
            return None if doc is None else Delivery.from_doc(doc)
        claimed = await self._deliveries.update_one(query, update)
        if claimed.modified_count != 1:
            return None
        if known is not None and known.body is not None:
            return known
        doc = await self._deliveries.find_one({"_id": delivery_id})
        delivery = None if doc is None else Delivery.from_doc(doc)
        if delivery is None or delivery.claim != self.owner or delivery.next_attempt_at != until:
            return None
        return delivery

    # A claim renewed, or handed back.

    async def renew_claim(self, delivery_id: str, until: datetime) -> bool:
        """Extend this instance's claim to ``until``, unless another instance took the delivery after the
        claim ended."""
        renewed = await self._deliveries.update_one(
            {"_id": delivery_id, "status": PENDING, "claim": self.owner},
            {"$set": {"next_attempt_at": until}},
        )
        return renewed.modified_count == 1

    async def hand_back(self, delivery_id: str, claimed_until: datetime, now: datetime) -> None:
        """Make a delivery this instance created claimed due now, only if still as this instance made it. By
        id, one at a time (a condition on several fields, or a list of ids, costs the embedded store a scan
        of every delivery)."""
        await self._deliveries.update_one(
            {"_id": delivery_id, "status": PENDING, "claim": self.owner, "next_attempt_at": claimed_until},
            {"$set": {"next_attempt_at": now}},
        )

    async def postpone(self, delivery_id: str, until: datetime, now: datetime) -> None:
        """Make a claimed delivery due at ``until`` with no attempt made: it keeps its place in the retry
        schedule."""
        await self._deliveries.update_one(
            {"_id": delivery_id, "status": PENDING},
            {"$set": {"next_attempt_at": until, "updated_at": now}},
        )

    # What an attempt did.

    async def schedule_retry(
        self, delivery_id: str, attempt: Attempt, next_at: datetime, now: datetime
    ) -> None:
        await self._deliveries.update_one(
            {"_id": delivery_id, "status": PENDING},
            {
                "$push": {"attempts": attempt.to_doc()},
                "$set": {"next_attempt_at": next_at, RETRY_AT: next_at, "updated_at": now},
            },
        )

    async def close(
        self, delivery: Delivery, status: str, reason: str | None, attempt: Attempt | None, now: datetime
    ) -> bool:
        """Finish a pending delivery with ``status`` (and the attempt, if one was made); whether this call
        finished it."""
        update: Doc = {
            "$set": {
                "status": status,
                "next_attempt_at": None,
                "failure_reason": reason,
                "updated_at": now,
            }
        }
        if attempt is not None:
            update["$push"] = {"attempts": attempt.to_doc()}
        if delivery.attempts or delivery.waiting_for_retry:
            update["$unset"] = {RETRY_AT: ""}  # it was waiting for a retry
        closed = await self._deliveries.update_one({"_id": delivery.id, "status": PENDING}, update)
        return bool(closed.modified_count)
