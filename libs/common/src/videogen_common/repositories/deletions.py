"""Deleting generations and their media: a client's delete (the generation becomes a tombstone, its write
carrying ``video.deleted``), and what the retention sweeper pages through and marks: generations whose media
is due to be deleted, by the sparse ``media_due_at`` index (set while a generation has media to delete: at
completion, when a first frame is kept, and by a delete).

A tombstone keeps the id, account, provider, duration, status, error, options, timestamps and what budgets
charged, and has ``deleted_at``; its prompt, metadata, negative prompt, first frame, links, what the provider
was sent, its Idempotency-Key's saved reply and its media keys are erased (``GenerationRecord.tombstone``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from pymongo import ASCENDING, IndexModel, UpdateOne
from pymongo.asynchronous.collection import AsyncCollection

from videogen_common.outbox import OUTBOX, OUTBOX_AT, owing
from videogen_common.records.event import Event
from videogen_common.records.generation import ERASED_FIELDS, GenerationRecord
from videogen_common.repositories.generations import FINISHED
from videogen_common.store import Store

Doc = dict[str, Any]

MEDIA_DUE_AT = "media_due_at"
# The smallest datetime: ``media_due_at`` at or after it is any (an indexed range, unlike $exists).
_EVER = datetime.min.replace(tzinfo=UTC)

INDEXES: list[IndexModel] = [
    # Generations with media to delete, by when it is due: the sweeper's pages. Sparse: a generation leaves
    # it once its media is deleted.
    IndexModel([(MEDIA_DUE_AT, ASCENDING)], name="by_media_due", sparse=True),
]


def erased_data(data: Doc) -> Doc:
    """A generation event's ``data`` with what a delete erases erased (``ERASED_FIELDS``)."""
    return {**data, **ERASED_FIELDS}


@dataclass(frozen=True, slots=True)
class DueMedia:
    """A generation whose media is due to be deleted: the keys it knows of in its own folder (an upload it
    was made from is not its to delete), and whether it is a deleted generation (then its whole folder
    goes, and its stored events and deliveries are erased again) that still owes events to the notifier."""

    id: str
    account_id: str
    due_at: datetime
    keys: tuple[str, ...]
    deleted: bool
    owes_events: bool


def _due_media(doc: Doc) -> DueMedia:
    folder = f"{doc['_id']}/"
    known = (doc.get(name) for name in ("video_key", "thumbnail_key", "image_key"))
    return DueMedia(
        id=doc["_id"],
        account_id=doc["account_id"],
        due_at=doc[MEDIA_DUE_AT],
        keys=tuple(key for key in known if isinstance(key, str) and key.startswith(folder)),
        deleted=doc.get("deleted_at") is not None,
        owes_events=bool(doc.get(OUTBOX)),
    )


class GenerationDeletions:
    def __init__(self, store: Store) -> None:
        self._generations: AsyncCollection[Doc] = store.generations

    async def delete(self, record: GenerationRecord, deleted: GenerationRecord, *, owes: Event) -> bool:
        """Make the finished generation ``record`` the tombstone ``deleted`` (``record.tombstone``), owing
        ``owes`` (its ``video.deleted``): a compare-and-set on its version, so a second delete, or one racing
        another, writes once. The events it still owes the notifier stay owed, their data erased. (A settle
        of one of those between the read and the write is undone: the notifier takes the erased copy in as
        the event it recorded already, and settles it again.)"""
        doc = await self._generations.find_one({"_id": record.id}, projection={OUTBOX: 1})
        if doc is None:
            return False
        carried = [{**entry, "data": erased_data(entry["data"])} for entry in doc.get(OUTBOX) or ()]
        written = await self._generations.update_one(
            {"_id": record.id, "version": record.version, "status": {"$in": FINISHED}, "deleted_at": None},
            owing(deleted.tombstone_update(), owes, rewritten=carried),
        )
        return written.modified_count == 1

    # -- the sweeper --------------------------------------------------------------------------------------

    async def due(self, now: datetime, limit: int) -> list[DueMedia]:
        """Up to ``limit`` generations whose media is due at ``now``, due longest first: one range of the
        sparse ``by_media_due`` index (those swept leave it, so the next call reads the next ones)."""
        found = (
            self._generations.find(
                {MEDIA_DUE_AT: {"$gte": _EVER, "$lte": now}},
                projection={
                    "account_id": 1,
                    MEDIA_DUE_AT: 1,
                    "video_key": 1,
                    "thumbnail_key": 1,
                    "image_key": 1,
                    "deleted_at": 1,
                    OUTBOX_AT: 1,
                    OUTBOX: 1,
                },
            )
            .sort(MEDIA_DUE_AT, ASCENDING)
            .limit(limit)
        )
        return [_due_media(doc) async for doc in found]

    async def swept(self, generation_ids: Sequence[str], now: datetime) -> int:
        """Their media is deleted (as of ``now``): each leaves the index, stamped ``media_deleted_at`` (the
        record of what was removed). One command for the batch; those no longer due are left alone."""
        if not generation_ids:
            return 0
        marked = await self._generations.update_many(
            {"_id": {"$in": list(generation_ids)}, MEDIA_DUE_AT: {"$lte": now}},
            {"$unset": {MEDIA_DUE_AT: ""}, "$set": {"media_deleted_at": now}},
        )
        return marked.modified_count

    async def due_again(self, generation_ids: Sequence[str], at: datetime) -> None:
        """Look at these again at ``at`` (a deleted generation whose events are still on their way)."""
        if generation_ids:
            await self._generations.update_many(
                {"_id": {"$in": list(generation_ids)}, MEDIA_DUE_AT: {"$gte": _EVER}},
                {"$set": {MEDIA_DUE_AT: at}},
            )

    async def shorten_retention(self, account_id: str, days: int) -> int:
        """The account's media is kept at most ``days`` after its generation's last change (its completion):
        every due time of the account's later than that comes forward. An operator's command, once per
        change: it reads the account's generations by the listing's index."""
        found = self._generations.find(
            {"account_id": account_id, MEDIA_DUE_AT: {"$gte": _EVER}},
            projection={MEDIA_DUE_AT: 1, "updated_at": 1},
        )
        changes = []
        async for doc in found:
            due = doc["updated_at"] + timedelta(days=days)
            if due < doc[MEDIA_DUE_AT]:
                changes.append(
                    UpdateOne({"_id": doc["_id"], MEDIA_DUE_AT: {"$gt": due}}, {"$set": {MEDIA_DUE_AT: due}})
                )
        if not changes:
            return 0
        result = await self._generations.bulk_write(changes, ordered=False)
        return result.modified_count

    async def backfill(self, days: int) -> int:
        """Migration: completed generations an earlier version stored media for, which no due time covers,
        are due ``days`` after they finished. One command (a scan of the collection, once per migration)."""
        added = await self._generations.update_many(
            {
                "video_key": {"$type": "string"},
                MEDIA_DUE_AT: None,
                "media_deleted_at": None,
                "deleted_at": None,
            },
            [{"$set": {MEDIA_DUE_AT: {"$add": ["$updated_at", days * 86_400_000]}}}],
        )
        return added.modified_count
