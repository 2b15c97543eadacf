"""What the api reads of the ``generations`` collection: one generation of an account, several by id, in full
or only their keys (the status feed's recheck), and an account's listing newest first, filtered
(``GenerationFilter``); records out. The writes, leases and the account slot queue are
``repositories.generations``'."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pymongo import ASCENDING, DESCENDING, IndexModel
from pymongo.asynchronous.collection import AsyncCollection

from videogen_common.domain import Status
from videogen_common.failures import ErrorCode
from videogen_common.records.generation import METADATA_PAIRS, GenerationRecord, metadata_pair
from videogen_common.repositories.paging import Position, created_between, merged, newest_first
from videogen_common.store import Store

Doc = dict[str, Any]

INDEXES: list[IndexModel] = [
    # One account's generations newest first; _id breaks ties so the cursor is stable. Also the usage
    # aggregation's range (repositories.usage).
    IndexModel(
        [("account_id", ASCENDING), ("created_at", DESCENDING), ("_id", DESCENDING)], name="by_account"
    ),
    # Listing filtered by status (GET /v1/generations?status=…), newest first.
    IndexModel(
        [("account_id", ASCENDING), ("status", ASCENDING), ("created_at", DESCENDING), ("_id", DESCENDING)],
        name="by_account_status",
    ),
    # Listing filtered by metadata (?metadata[KEY]=VALUE), newest first: one of the pairs asked for, an
    # element of the generation's ``metadata_pairs`` (a multikey index: one key per pair). Generations
    # without metadata have no pairs, and no key here but the account's.
    IndexModel(
        [
            ("account_id", ASCENDING),
            (METADATA_PAIRS, ASCENDING),
            ("created_at", DESCENDING),
            ("_id", DESCENDING),
        ],
        name="by_account_metadata",
    ),
    # A batch's items in the order given (their ids are made so): its listing, results and cancel.
    IndexModel([("batch_id", ASCENDING), ("_id", ASCENDING)], name="by_batch"),
]


# What ``GenerationFilter.keeps`` reads of a generation.
KEPT_BY = ("deleted_at", "provider", "metadata", "status")


@dataclass(frozen=True)
class GenerationFilter:
    """What a listing of an account's generations keeps: each given condition must hold (statuses and
    providers: any of those listed; created strictly between the bounds; every metadata pair present)."""

    statuses: Sequence[Status] = ()
    providers: Sequence[str] = ()
    created_after: datetime | None = None
    created_before: datetime | None = None
    metadata: Mapping[str, str] = field(default_factory=dict)

    def clause(self) -> Doc:
        """As a store query; empty without conditions."""
        clause: Doc = {f"metadata.{key}": value for key, value in self.metadata.items()}
        if self.statuses:
            clause["status"] = {"$in": [status.value for status in self.statuses]}
        if self.providers:
            clause["provider"] = {"$in": list(self.providers)}
        return {**clause, **created_between(self.created_after, self.created_before)}

    def keeps(self, doc: Doc) -> bool:
        """Whether a generation's document, read from a window of an index range (which says its account and
        time, and its status or one metadata pair), is one the listing shows: not deleted, of the statuses and
        providers and with the metadata asked for."""
        if doc.get("deleted_at") is not None:
            return False
        if self.providers and doc.get("provider") not in self.providers:
            return False
        if self.statuses and doc.get("status") not in {status.value for status in self.statuses}:
            return False
        if self.metadata:
            metadata = doc.get("metadata") or {}
            return all(metadata.get(key) == value for key, value in self.metadata.items())
        return True


class GenerationReads:
    def __init__(self, store: Store) -> None:
        self._generations: AsyncCollection[Doc] = store.generations

    async def get_for_account(self, generation_id: str, account_id: str) -> GenerationRecord | None:
        """The generation if it is the account's (a foreign id reads like an unknown one)."""
        doc = await self._generations.find_one({"_id": generation_id, "account_id": account_id})
        return None if doc is None else GenerationRecord.from_doc(doc)

    async def was_deleted(self, generation_id: str) -> bool:
        """Whether there is such a generation and it was deleted (its media links answer 410 Gone)."""
        found = await self._generations.find_one(
            {"_id": generation_id, "deleted_at": {"$ne": None}}, projection={"_id": 1}
        )
        return found is not None

    async def get_many(self, generation_ids: list[str]) -> AsyncIterator[GenerationRecord]:
        """The generations of these ids that exist."""
        async for doc in self._generations.find({"_id": {"$in": generation_ids}}):
            yield GenerationRecord.from_doc(doc)

    async def keys_of(self, generation_ids: list[str]) -> dict[str, tuple[int, int]]:
        """Each existing generation's version and progress (-1 without one), read alone: what orders its
        changes, for the status feed's recheck to tell which changed."""
        keys = {}
        async for doc in self._generations.find(
            {"_id": {"$in": generation_ids}}, {"version": True, "progress": True}
        ):
            progress = doc.get("progress")
            keys[doc["_id"]] = (doc.get("version") or 0, progress if isinstance(progress, int) else -1)
        return keys

    async def newest_first(
        self, account_id: str, kept: GenerationFilter, position: Position | None, limit: int
    ) -> list[GenerationRecord]:
        """Up to ``limit`` of the account's generations that ``kept`` keeps, newest first, after ``position``
        (the last item of the previous page) if given; deleted ones are left out. Read window by window
        (``paging``) of ``by_account_metadata`` for one metadata pair asked for (the first by key), or of
        ``by_account_status`` for each status asked for (the pages merged), or else of ``by_account``; what
        the index does not say (deleted, providers, the other pairs or statuses) is checked on what the
        windows return."""
        created = created_between(kept.created_after, kept.created_before)
        keep = kept.keeps
        if kept.metadata:
            key = min(kept.metadata)
            docs = await newest_first(
                self._generations,
                {
                    "account_id": account_id,
                    METADATA_PAIRS: metadata_pair(key, kept.metadata[key]),
                    **created,
                },
                position,
                limit,
                keep=keep,
                reads=KEPT_BY,
            )
        elif kept.statuses:
            pages = [
                await newest_first(
                    self._generations,
                    {"account_id": account_id, "status": status.value, **created},
                    position,
                    limit,
                    keep=keep,
                    reads=KEPT_BY,
                )
                for status in dict.fromkeys(kept.statuses)
            ]
            docs = merged(pages, limit)
        else:
            docs = await newest_first(
                self._generations,
                {"account_id": account_id, **created},
                position,
                limit,
                keep=keep,
                reads=KEPT_BY,
            )
        return [GenerationRecord.from_doc(doc) for doc in docs]

    async def of_batch(
        self,
        account_id: str,
        batch_id: str,
        *,
        statuses: Sequence[Status] = (),
        custom_id: str | None = None,
        after: str | None = None,
        limit: int,
    ) -> list[GenerationRecord]:
        """Up to ``limit`` of the batch's items in the order they were given (their ids are), after the item
        ``after``; only those in ``statuses`` and with ``custom_id`` where given."""
        query: Doc = {"batch_id": batch_id, "account_id": account_id}
        if statuses:
            query["status"] = {"$in": [status.value for status in statuses]}
        if custom_id is not None:
            query["custom_id"] = custom_id
        if after is not None:
            query["_id"] = {"$gt": after}
        found = self._generations.find(query).sort([("batch_id", ASCENDING), ("_id", ASCENDING)]).limit(limit)
        return [GenerationRecord.from_doc(doc) for doc in await found.to_list(limit)]

    async def all_of_batch(
        self, account_id: str, batch_id: str, batch_size: int = 1000
    ) -> AsyncIterator[GenerationRecord]:
        """Every item of the batch in the order given, read with one cursor (its results file)."""
        found = self._generations.find({"batch_id": batch_id, "account_id": account_id})
        async for doc in found.sort([("batch_id", ASCENDING), ("_id", ASCENDING)]).batch_size(batch_size):
            yield GenerationRecord.from_doc(doc)

    async def ended_in_batch(self, batch_id: str) -> tuple[dict[str, int], float]:
        """The batch's ended items counted by outcome (completed, failed, canceled) and their cost summed,
        from the items themselves (the reconciler's recount)."""
        outcomes = {"completed": 0, "failed": 0, "canceled": 0}
        cost = 0.0
        found = self._generations.find(
            {"batch_id": batch_id, "status": {"$in": [Status.COMPLETED.value, Status.FAILED.value]}},
            projection={"status": 1, "error": 1, "cost": 1},
        )
        async for doc in found:
            failed = doc["status"] == Status.FAILED.value
            canceled = failed and (doc.get("error") or {}).get("code") == ErrorCode.CANCELED
            outcomes["canceled" if canceled else doc["status"]] += 1
            cost += float(doc.get("cost") or 0.0)
        return outcomes, cost

    async def count_in_batch(self, batch_id: str) -> int:
        """How many of the batch's items are written (the reconciler's look at a batch left validating)."""
        return await self._generations.count_documents({"batch_id": batch_id})

    async def queued_in_batch(self, batch_id: str) -> int:
        """How many of the batch's items wait explicitly (``queued``): the one count of a batch not kept on
        its document (its items move in and out of the state often)."""
        return await self._generations.count_documents({"batch_id": batch_id, "status": Status.QUEUED.value})
