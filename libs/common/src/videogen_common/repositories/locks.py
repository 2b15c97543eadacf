"""The ``locks`` collection: leased locks, so that a job runs in one place at a time across replicas (the
retention sweeper). A lock is one document, ``_id`` its name, held by ``owner`` until ``expires_at``; its
holder renews it while it works, and a holder that dies without letting go loses it when its lease ends."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pymongo.asynchronous.collection import AsyncCollection

from videogen_common.store import DuplicateKeyError, Store

Doc = dict[str, Any]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class LockRepository:
    def __init__(self, store: Store) -> None:
        self._locks: AsyncCollection[Doc] = store.db["locks"]

    async def hold(self, name: str, owner: str, now: datetime, until: datetime) -> bool:
        """Take or renew the lock ``name`` for ``owner`` until ``until``: whether ``owner`` holds it now.
        Renewed if ``owner`` holds it, taken if its lease ran out, made if there is none; each step one
        conditional write (no ``$or``, which the embedded store answers with a scan)."""
        renewed = await self._locks.update_one({"_id": name, "owner": owner}, {"$set": {"expires_at": until}})
        if renewed.matched_count == 1:
            return True
        taken = await self._locks.update_one(
            {"_id": name, "expires_at": {"$lt": now}},
            {"$set": {"owner": owner, "expires_at": until, "taken_at": now}},
        )
        if taken.matched_count == 1:
            return True
        try:
            await self._locks.insert_one({"_id": name, "owner": owner, "expires_at": until, "taken_at": now})
        except DuplicateKeyError:
            return False  # another holds it
        return True

    async def release(self, name: str, owner: str) -> None:
        """Let go of the lock, if ``owner`` holds it: anyone may take it at once."""
        await self._locks.update_one({"_id": name, "owner": owner}, {"$set": {"expires_at": _EPOCH}})

    async def holder(self, name: str) -> Doc | None:
        """The lock's document (its owner, and until when), if anyone ever held it."""
        return await self._locks.find_one({"_id": name})
