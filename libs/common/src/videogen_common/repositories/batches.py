"""The ``batches`` collection (``records.batch``): a batch written before its items (``validating``), moved to
``in_progress`` once they are all in, counted as they end (``item_ended``, one ``$inc``), and ended once,
by the compare-and-set that finds every item ended (``finish``), carrying its ``batch.completed`` event. Its
items are generations (``repositories.generation_reads`` reads them: ``of_batch``)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from pymongo import ASCENDING, DESCENDING, IndexModel
from pymongo.asynchronous.collection import AsyncCollection

from videogen_common.outbox import OUTBOX_INDEX, owing
from videogen_common.records.batch import (
    CANCELED,
    CANCELING,
    COMPLETED,
    FAILED,
    IN_PROGRESS,
    OUTCOMES,
    VALIDATING,
    BatchRecord,
)
from videogen_common.records.event import Event
from videogen_common.repositories.paging import Position, newest_first
from videogen_common.store import Store

Doc = dict[str, Any]

INDEXES: list[IndexModel] = [
    # One account's batches newest first (GET /v1/batches).
    IndexModel(
        [("account_id", ASCENDING), ("created_at", DESCENDING), ("_id", DESCENDING)], name="by_account"
    ),
    # "{account_id}\n{key}" of the Idempotency-Key it was created under: one batch per key.
    IndexModel([("idem", ASCENDING)], name="one_per_idempotency_key", unique=True, sparse=True),
    OUTBOX_INDEX,
    # The reconciler's range: unfinished batches by when they last changed.
    IndexModel([("status", ASCENDING), ("updated_at", ASCENDING)], name="by_status_updated"),
]


class BatchRepository:
    def __init__(self, store: Store) -> None:
        self._batches: AsyncCollection[Doc] = store.batches

    async def insert(self, batch: BatchRecord) -> None:
        """The new batch (``validating``); a DuplicateKeyError if its Idempotency-Key holds one already."""
        await self._batches.insert_one(batch.to_doc())

    async def get(self, batch_id: str) -> BatchRecord | None:
        doc = await self._batches.find_one({"_id": batch_id})
        return None if doc is None else BatchRecord.from_doc(doc)

    async def get_for_account(self, batch_id: str, account_id: str) -> BatchRecord | None:
        """The batch if it is the account's (a foreign id reads like an unknown one)."""
        doc = await self._batches.find_one({"_id": batch_id, "account_id": account_id})
        return None if doc is None else BatchRecord.from_doc(doc)

    async def by_idempotency_key(self, idem: str) -> BatchRecord | None:
        doc = await self._batches.find_one({"idem": idem})
        return None if doc is None else BatchRecord.from_doc(doc)

    async def newest_first(self, account_id: str, position: Position | None, limit: int) -> list[BatchRecord]:
        docs = await newest_first(self._batches, {"account_id": account_id}, position, limit)
        return [BatchRecord.from_doc(doc) for doc in docs]

    async def items_in(self, batch_id: str, now: datetime) -> bool:
        """Every item is written: ``validating`` becomes ``in_progress``. False if it was not validating."""
        result = await self._batches.update_one(
            {"_id": batch_id, "status": VALIDATING}, {"$set": {"status": IN_PROGRESS, "updated_at": now}}
        )
        return result.modified_count == 1

    async def still_validating(self, batch_id: str, now: datetime) -> bool:
        """A re-send under its Idempotency-Key is writing the ``validating`` batch's items: its ``updated_at``
        moved to now, so the reconciler leaves it alone for another bound. False if it is no longer
        validating (the reconciler settled it first)."""
        result = await self._batches.update_one(
            {"_id": batch_id, "status": VALIDATING}, {"$set": {"updated_at": now}}
        )
        return result.matched_count == 1

    async def stale_validating(self, before: datetime, limit: int) -> list[BatchRecord]:
        """Batches ``validating`` unchanged since ``before``: their api stopped between the batch and the end
        of its items (the reconciler settles them: ``endings.settle_validating``)."""
        docs = self._batches.find({"status": VALIDATING, "updated_at": {"$lt": before}}).limit(limit)
        return [BatchRecord.from_doc(doc) for doc in await docs.to_list(limit)]

    async def written_in_part(
        self, batch: BatchRecord, total: int, error: dict[str, str] | None, now: datetime
    ) -> bool:
        """The ``validating`` batch ``batch`` (as read) holds the ``total`` items written before its api
        stopped: it becomes ``in_progress`` with that total (and ``error`` saying what was lost, if any). A
        compare-and-set on its status and ``updated_at``: False if it moved meanwhile (a re-send)."""
        fields: Doc = {"status": IN_PROGRESS, "total": total, "updated_at": now}
        if error is not None:
            fields["error"] = error
        result = await self._batches.update_one(
            {"_id": batch.id, "status": VALIDATING, "updated_at": batch.updated_at}, {"$set": fields}
        )
        return result.modified_count == 1

    async def none_written(
        self,
        batch: BatchRecord,
        error: dict[str, str],
        event_of: Callable[[BatchRecord], Event],
        now: datetime,
    ) -> BatchRecord | None:
        """The ``validating`` batch ``batch`` (as read) has no item: its api stopped before writing any. It
        ends ``failed`` with ``error`` and no item, its ``batch.completed`` event in its outbox (a
        compare-and-set on its status and ``updated_at``). The batch as it ended, or None if it moved."""
        ended = BatchRecord.from_doc(
            {
                **batch.to_doc(),
                "status": FAILED,
                "total": 0,
                "error": error,
                "finished_at": now,
                "updated_at": now,
            }
        )
        event = event_of(ended)
        fields = {"status": FAILED, "total": 0, "error": error, "finished_at": now, "updated_at": now}
        result = await self._batches.update_one(
            {"_id": batch.id, "status": VALIDATING, "updated_at": batch.updated_at},
            owing({"$set": fields}, event),
        )
        return ended if result.modified_count == 1 else None

    async def canceling(self, batch_id: str, now: datetime) -> bool:
        """A cancel was asked: ``in_progress`` becomes ``canceling``. False if it was not in progress."""
        result = await self._batches.update_one(
            {"_id": batch_id, "status": IN_PROGRESS}, {"$set": {"status": CANCELING, "updated_at": now}}
        )
        return result.modified_count == 1

    async def item_ended(self, batch_id: str, outcome: str, cost: float, now: datetime) -> BatchRecord | None:
        """One of its items ended with ``outcome`` (completed, failed or canceled) having cost ``cost``:
        counted, and the batch as it is after (None if there is no such batch). Called once per item, by
        the winner of the item's terminal compare-and-set (``endings.end_generation``)."""
        if outcome not in OUTCOMES:
            raise ValueError(f"not an outcome: {outcome!r}")
        await self._batches.update_one(
            {"_id": batch_id},
            {"$inc": {"ended": 1, f"outcomes.{outcome}": 1, "cost": cost}, "$set": {"updated_at": now}},
        )
        return await self.get(batch_id)

    async def quiet_unfinished(self, before: datetime, limit: int) -> list[BatchRecord]:
        """Batches in progress (or canceling) that have not changed since ``before``: the reconciler recounts
        them, in case an item's count was lost (its process died between the item's end and its count)."""
        found: list[BatchRecord] = []
        for status in (IN_PROGRESS, CANCELING):  # a range per status (the embedded store's shape)
            docs = self._batches.find({"status": status, "updated_at": {"$lt": before}}).limit(limit)
            found.extend(BatchRecord.from_doc(doc) for doc in await docs.to_list(limit))
        return found

    async def recounted(
        self, batch: BatchRecord, outcomes: dict[str, int], cost: float, now: datetime
    ) -> BatchRecord | None:
        """Its counts set to ``outcomes`` (as counted from its items) where they fell short: a compare-and-set
        on the ``ended`` it was read with, so a count made meanwhile wins. The batch after, or None."""
        ended = sum(outcomes.values())
        if ended <= batch.ended:
            return None
        result = await self._batches.update_one(
            {"_id": batch.id, "ended": batch.ended},
            {"$set": {"ended": ended, "outcomes": outcomes, "cost": cost, "updated_at": now}},
        )
        return await self.get(batch.id) if result.modified_count == 1 else None

    async def finish(
        self, batch: BatchRecord, event_of: Callable[[BatchRecord], Event], now: datetime
    ) -> BatchRecord | None:
        """End the batch whose every item has ended (``batch``: as read after the last one): ``completed``,
        or ``canceled`` if a cancel was asked, with its ``batch.completed`` event (``event_of(ended)``) in its
        outbox. A compare-and-set on its status and ``ended`` reaching ``total``: once per batch, whoever
        calls; None if it is not (yet) the caller's to end."""
        if batch.ended < batch.total or batch.finished:
            return None
        status = CANCELED if batch.status == CANCELING else COMPLETED
        ended = BatchRecord.from_doc(
            {**batch.to_doc(), "status": status, "finished_at": now, "updated_at": now}
        )
        event = event_of(ended)
        result = await self._batches.update_one(
            {"_id": batch.id, "status": {"$in": [IN_PROGRESS, CANCELING]}, "ended": {"$gte": batch.total}},
            owing({"$set": {"status": status, "finished_at": now, "updated_at": now}}, event),
        )
        return ended if result.modified_count == 1 else None
