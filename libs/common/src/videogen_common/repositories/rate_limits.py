"""The ``rate_limits`` collection: the api's shared per-account request counts, one document per (policy,
window, account) counter, all replicas' (see ``videogen_api.ratelimit``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from pymongo import ASCENDING, IndexModel, UpdateOne
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.errors import BulkWriteError

from videogen_common.store import DUPLICATE_KEY, Store

Doc = dict[str, Any]


# A window's count is removed a few minutes after the window ends (the TTL monitor runs every minute).
INDEXES: list[IndexModel] = [IndexModel([("expires_at", ASCENDING)], name="expire", expireAfterSeconds=0)]


class RateLimitRepository:
    def __init__(self, store: Store) -> None:
        self._store = store

    @property
    def _counts(self) -> AsyncCollection[Doc]:
        # Looked up at each use, so a store whose collections change (tests wrap them) is followed.
        return self._store.rate_limits

    async def add(self, deltas: Mapping[tuple[str, str, datetime], int]) -> None:
        """Add each delta to its counter, keyed (counter id, account id, when the counter may be removed):
        ``$inc`` upserts, all in one unordered batch."""
        if not deltas:
            return
        ops = [
            UpdateOne(
                {"_id": counter_id},
                {
                    "$inc": {"count": delta},
                    "$setOnInsert": {"account_id": account_id, "expires_at": expires_at},
                },
                upsert=True,
            )
            for (counter_id, account_id, expires_at), delta in deltas.items()
        ]
        try:
            await self._counts.bulk_write(ops, ordered=False)
        except BulkWriteError as exc:
            # Two replicas upserting the same new counter at once: one insert loses. The document exists now,
            # so the same update applied again increments it.
            lost = [e["index"] for e in exc.details.get("writeErrors", []) if e.get("code") == DUPLICATE_KEY]
            if len(lost) != len(exc.details.get("writeErrors", [])):
                raise
            await self._counts.bulk_write([ops[i] for i in lost], ordered=False)

    async def totals(self, counter_ids: Iterable[str]) -> dict[str, int]:
        """The counts of the counters that exist among ``counter_ids``."""
        ids = list(counter_ids)
        if not ids:
            return {}
        found = self._counts.find({"_id": {"$in": ids}}, projection={"count": 1})
        return {doc["_id"]: int(doc["count"]) async for doc in found}
