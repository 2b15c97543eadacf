"""The ``uploads`` collection: images clients uploaded for use as a first frame (the bytes are in media
storage)."""

from __future__ import annotations

from typing import Any

from pymongo import ASCENDING, IndexModel
from pymongo.asynchronous.collection import AsyncCollection

from videogen_common.store import Store

Doc = dict[str, Any]

# An upload is forgotten once it expires (a generation made from it has its own reference to the bytes).
INDEXES: list[IndexModel] = [IndexModel([("expires_at", ASCENDING)], name="expire", expireAfterSeconds=0)]


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
