"""The ``orchestrators`` collection: each orchestrator instance's last heartbeat, so the instances alive can
be counted (they share each provider's request rate between them)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pymongo import ASCENDING, IndexModel
from pymongo.asynchronous.collection import AsyncCollection

from videogen_common.store import Store

Doc = dict[str, Any]

INDEXES: list[IndexModel] = [
    # Instances gone for a day are forgotten.
    IndexModel([("seen_at", ASCENDING)], name="forget_gone", expireAfterSeconds=86_400),
]


class InstanceRepository:
    def __init__(self, store: Store) -> None:
        self._instances: AsyncCollection[Doc] = store.orchestrators

    async def beat(self, instance: str, now: datetime) -> None:
        await self._instances.update_one({"_id": instance}, {"$set": {"seen_at": now}}, upsert=True)

    async def gone(self, instance: str) -> None:
        """The instance stopped: it no longer counts."""
        await self._instances.delete_one({"_id": instance})

    async def alive(self, seen_since: datetime) -> int:
        """How many instances have beaten since ``seen_since`` (at least 1: the one asking)."""
        return max(1, await self._instances.count_documents({"seen_at": {"$gte": seen_since}}))
