"""API key administration. Keys are shown once; only their hash is stored."""

from __future__ import annotations

from datetime import datetime

from pymongo.errors import DuplicateKeyError

from videogen_common.clock import SystemClock
from videogen_common.ids import new_id
from videogen_common.signing import hash_api_key, new_api_key
from videogen_common.store import Store


async def create_key(
    store: Store, account: str, *, key: str | None = None, now: datetime | None = None
) -> str:
    """Create a key for ``account`` (a fixed ``key`` is accepted for the dev stack); idempotent for a fixed
    key that already belongs to the same account."""
    key = key or new_api_key()
    now = now or SystemClock().now()
    try:
        await store.api_keys.insert_one(
            {
                "_id": new_id("key", now),
                "key_hash": hash_api_key(key),
                "account_id": account,
                "created_at": now,
                "revoked_at": None,
            }
        )
    except DuplicateKeyError:
        existing = await store.api_keys.find_one({"key_hash": hash_api_key(key)})
        if existing is None or existing["account_id"] != account:
            raise ValueError("that key already belongs to another account") from None
    return key


async def revoke_key(store: Store, key: str, *, now: datetime | None = None) -> bool:
    result = await store.api_keys.update_one(
        {"key_hash": hash_api_key(key), "revoked_at": None},
        {"$set": {"revoked_at": now or SystemClock().now()}},
    )
    return result.modified_count == 1
