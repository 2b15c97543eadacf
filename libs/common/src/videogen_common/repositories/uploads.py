"""The ``uploads`` collection: images clients uploaded for use as a first frame (the bytes are in media
storage). An upload is usable until ``expires_at``; then the retention sweeper deletes its bytes and the
document (by the ``by_expiry`` index), as a client's delete does at once."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pymongo import ASCENDING, IndexModel
from pymongo.asynchronous.collection import AsyncCollection

from videogen_common.store import Store

Doc = dict[str, Any]

# Uploads by expiry: the sweeper's pages (the document goes only once its bytes have gone, so no TTL index).
INDEXES: list[IndexModel] = [IndexModel([("expires_at", ASCENDING), ("_id", ASCENDING)], name="by_expiry")]


class UploadRepository:
    def __init__(self, store: Store) -> None:
        self._store = store

    @property
    def _uploads(self) -> AsyncCollection[Doc]:
        # Looked up at each use, so a store whose collections change (tests wrap them) is followed.
        return self._store.uploads

    async def insert(self, doc: Doc) -> None:
        await self._uploads.insert_one(doc)

    async def owned(self, upload_id: str, account_id: str) -> Doc | None:
        return await self._uploads.find_one({"_id": upload_id, "account_id": account_id})

    async def expire_owned(self, upload_id: str, account_id: str, now: datetime) -> bool:
        """The account's upload expires now (a delete: unusable from here, and due to the sweeper should the
        deleter stop before it is gone); False if there is no such upload."""
        found = await self._uploads.update_one(
            {"_id": upload_id, "account_id": account_id}, {"$min": {"expires_at": now}}
        )
        return found.matched_count == 1

    async def due(self, now: datetime, limit: int, passed: Sequence[str] = ()) -> list[tuple[str, str]]:
        """(id, media key) of up to ``limit`` uploads expired at ``now``, oldest expiry first, but for those
        ``passed`` over: one range of ``by_expiry`` (those forgotten leave it)."""
        query: dict[str, Any] = {"expires_at": {"$lte": now}}
        if passed:
            query["_id"] = {"$nin": list(passed)}
        found = (
            self._uploads.find(query, projection={"key": 1})
            .sort([("expires_at", ASCENDING), ("_id", ASCENDING)])
            .limit(limit)
        )
        return [(doc["_id"], doc["key"]) async for doc in found]

    async def forget(self, upload_ids: Sequence[str], now: datetime) -> int:
        """Remove these uploads' documents, their bytes deleted (only those expired by ``now``)."""
        if not upload_ids:
            return 0
        removed = await self._uploads.delete_many(
            {"_id": {"$in": list(upload_ids)}, "expires_at": {"$lte": now}}
        )
        return removed.deleted_count
