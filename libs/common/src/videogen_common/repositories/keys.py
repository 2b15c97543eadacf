"""The ``api_keys`` collection: an account's bearer keys, stored by the hash of the key alone."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pymongo import ASCENDING, IndexModel
from pymongo.asynchronous.collection import AsyncCollection

from videogen_common.records.api_key import ApiKey
from videogen_common.store import Store

Doc = dict[str, Any]

INDEXES: list[IndexModel] = [
    IndexModel([("key_hash", ASCENDING)], name="by_hash", unique=True),
]


class ApiKeyRepository:
    def __init__(self, store: Store) -> None:
        self._store = store

    @property
    def _keys(self) -> AsyncCollection[Doc]:
        # Looked up at each use, so a store whose collections change (tests wrap them) is followed.
        return self._store.api_keys

    async def insert(self, key: ApiKey) -> None:
        """Store a new key; one whose hash is already stored raises ``DuplicateKeyError``."""
        await self._keys.insert_one(key.to_doc())

    async def by_hash(self, key_hash: str) -> ApiKey | None:
        """The key with this hash, revoked or not."""
        doc = await self._keys.find_one({"key_hash": key_hash})
        return None if doc is None else ApiKey.from_doc(doc)

    async def live_by_hash(self, key_hash: str) -> ApiKey | None:
        """The key with this hash, unless it was revoked."""
        doc = await self._keys.find_one({"key_hash": key_hash, "revoked_at": None})
        return None if doc is None else ApiKey.from_doc(doc)

    async def revoke(self, key_id: str, now: datetime) -> bool:
        """Revoke a live key; whether this call revoked it."""
        result = await self._keys.update_one(
            {"_id": key_id, "revoked_at": None}, {"$set": {"revoked_at": now}}
        )
        return result.modified_count == 1
