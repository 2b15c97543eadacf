"""The ``provider_health`` collection: one document per provider key (pool id), ``records.health.PoolHealth``,
shared by every orchestrator replica. Outcomes and times to finish are pushed with ``$slice`` (the last
``window`` kept): successes a few at a time, failures each at once (``failed_at``: the last one's time, so
successes written late close no breaker a later failure counts toward). A breaker opens, re-opens and takes
its probe by conditional updates, so two replicas never both open it, nor both take the one probe of a
half-open key."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from pymongo import ASCENDING, IndexModel, ReturnDocument
from pymongo.asynchronous.collection import AsyncCollection

from videogen_common.records.health import PoolHealth
from videogen_common.routing import Breaker
from videogen_common.store import Store

Doc = dict[str, Any]

INDEXES: list[IndexModel] = [
    # The keys of the candidates routing looks at.
    IndexModel([("provider", ASCENDING)], name="by_provider"),
]


class ProviderHealthRepository:
    def __init__(self, store: Store) -> None:
        self._health: AsyncCollection[Doc] = store.provider_health

    async def of_providers(self, providers: list[str]) -> list[PoolHealth]:
        found = self._health.find({"provider": {"$in": providers}})
        return [PoolHealth.from_doc(doc) async for doc in found]

    async def everything(self) -> list[PoolHealth]:
        return [PoolHealth.from_doc(doc) async for doc in self._health.find({})]

    async def get(self, pool_id: str) -> PoolHealth | None:
        doc = await self._health.find_one({"_id": pool_id})
        return None if doc is None else PoolHealth.from_doc(doc)

    async def succeeded(
        self,
        pool_id: str,
        provider: str,
        now: datetime,
        *,
        count: int,
        seconds: list[float],
        last: datetime,
        window: int,
    ) -> Breaker | None:
        """``count`` tasks on the key ended well, the last at ``last`` (``seconds``: the times to finish of
        those that know theirs): their outcomes and times are pushed, and unless the key failed after
        ``last`` (``failed_at``: another replica saw it fail since), its failures in a row end and its breaker
        closes. Returns the breaker as it was when it closed it (one round trip: the update answers the
        document before it), None when it did not (a failure came after; or the key was new)."""
        push: Doc = {"outcomes": {"$each": [True] * min(count, window), "$slice": -window}}
        if seconds:
            push["seconds"] = {"$each": [round(s, 3) for s in seconds[-window:]], "$slice": -window}
        before = await self._health.find_one_and_update(
            {"_id": pool_id, "failed_at": {"$not": {"$gt": last}}},
            {
                "$set": {"failures": 0, "opened_until": None, "probe": None, "probe_until": None},
                "$push": push,
            },
            return_document=ReturnDocument.BEFORE,
        )
        if before is not None:
            return PoolHealth.from_doc(before).breaker(now)
        await self._health.update_one(
            {"_id": pool_id}, {"$push": push, "$setOnInsert": {"provider": provider}}, upsert=True
        )
        return None

    async def failed(
        self, pool_id: str, provider: str, now: datetime, *, threshold: int, cooldown: timedelta, window: int
    ) -> tuple[Breaker, Breaker]:
        """An attempt on the key failed through the provider's fault: one more failure in a row. The breaker
        opens (for ``cooldown``) at ``threshold`` failures in a row, and re-opens when it was half-open (its
        probe failed). Returns the breaker before and after."""
        doc = await self._health.find_one_and_update(
            {"_id": pool_id},
            {
                "$inc": {"failures": 1},
                "$set": {"failed_at": now},
                "$push": {"outcomes": {"$each": [False], "$slice": -window}},
                "$setOnInsert": {"provider": provider},
            },
            upsert=True,
            return_document=ReturnDocument.AFTER,
        )
        if doc is None:  # pragma: no cover - an upsert answers the document it wrote
            return Breaker.CLOSED, Breaker.CLOSED
        current = PoolHealth.from_doc(doc)
        before = current.breaker(now)
        if before is Breaker.OPEN or (before is Breaker.CLOSED and current.failures < threshold):
            return before, before
        opened = await self._health.update_one(
            {"_id": pool_id, "opened_until": current.opened_until},
            {"$set": {"opened_until": now + cooldown, "probe": None, "probe_until": None}},
        )
        return before, Breaker.OPEN if opened.modified_count == 1 else before

    async def take_probe(self, pool_id: str, generation_id: str, now: datetime, lease: timedelta) -> bool:
        """The one probe of a half-open key for ``generation_id`` (its lease is ``lease``): True if taken (or
        already its own)."""
        taken = await self._health.update_one(
            {
                "_id": pool_id,
                "opened_until": {"$lte": now},
                "$or": [{"probe_until": {"$not": {"$gt": now}}}, {"probe": generation_id}],
            },
            {"$set": {"probe": generation_id, "probe_until": now + lease}},
        )
        return taken.modified_count == 1 or (
            await self._health.count_documents({"_id": pool_id, "probe": generation_id}) == 1
        )

    async def release_probe(self, pool_id: str, generation_id: str) -> None:
        """The probe ``generation_id`` held ended without telling (its task never ran there)."""
        await self._health.update_one(
            {"_id": pool_id, "probe": generation_id}, {"$set": {"probe": None, "probe_until": None}}
        )
