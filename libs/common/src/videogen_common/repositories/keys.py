"""The ``api_keys`` collection: an account's bearer keys, stored by the hash of the key alone."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pymongo import ASCENDING, DESCENDING, IndexModel
from pymongo.asynchronous.collection import AsyncCollection

from videogen_common.budgets import Limits
from videogen_common.records.api_key import ApiKey
from videogen_common.repositories.paging import Position, newest_first
from videogen_common.store import Store

Doc = dict[str, Any]

INDEXES: list[IndexModel] = [
    IndexModel([("key_hash", ASCENDING)], name="by_hash", unique=True),
    # One account's keys newest first (GET /v1/api-keys); _id breaks ties so the cursor is stable.
    IndexModel(
        [("account_id", ASCENDING), ("created_at", DESCENDING), ("_id", DESCENDING)], name="by_account"
    ),
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
        """The key with this hash, unless it was revoked (whether it has expired is the caller's to ask)."""
        doc = await self._keys.find_one({"key_hash": key_hash, "revoked_at": None})
        return None if doc is None else ApiKey.from_doc(doc)

    async def owned(self, key_id: str, account_id: str) -> ApiKey | None:
        """The account's key ``key_id``; another account's reads like an unknown one."""
        doc = await self._keys.find_one({"_id": key_id, "account_id": account_id})
        return None if doc is None else ApiKey.from_doc(doc)

    async def page_of_account(self, account_id: str, position: Position | None, limit: int) -> list[ApiKey]:
        """Up to ``limit`` of the account's keys, newest first, after ``position``."""
        docs = await newest_first(self._keys, {"account_id": account_id}, position, limit)
        return [ApiKey.from_doc(doc) for doc in docs]

    async def revoke(self, key_id: str, now: datetime) -> bool:
        """Revoke a live key; whether this call revoked it."""
        result = await self._keys.update_one(
            {"_id": key_id, "revoked_at": None}, {"$set": {"revoked_at": now}}
        )
        return result.modified_count == 1

    async def change(self, key: ApiKey, *, name: str | None = None, budgets: Limits | None = None) -> bool:
        """Set the key's name and budgets (those given), unless it was revoked meanwhile."""
        changes: Doc = {}
        if name is not None:
            changes["name"] = name
        if budgets is not None:
            changes["budgets"] = budgets.to_doc()
        if not changes:
            return True
        result = await self._keys.update_one({"_id": key.id, "revoked_at": None}, {"$set": changes})
        return result.matched_count == 1

    async def used_at(self, key_id: str, minute: datetime) -> None:
        """The key was used in ``minute``: record it unless a later or equal minute already is (a conditional
        write, so replicas never move it backwards and a repeat changes nothing)."""
        await self._keys.update_one(
            {"_id": key_id, "last_used_at": {"$not": {"$gte": minute}}}, {"$set": {"last_used_at": minute}}
        )
