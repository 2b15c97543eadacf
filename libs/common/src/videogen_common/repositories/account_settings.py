"""The ``account_settings`` collection: what an operator set for one account (``_id`` the account), today the
media retention shorter than the deployment's (``videogen retention``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pymongo.asynchronous.collection import AsyncCollection

from videogen_common.store import Store

Doc = dict[str, Any]


class AccountSettingsRepository:
    def __init__(self, store: Store) -> None:
        self._settings: AsyncCollection[Doc] = store.db["account_settings"]

    async def retention_days(self, account_id: str) -> int | None:
        """The days the account's media is kept, if an operator shortened them."""
        doc = await self._settings.find_one({"_id": account_id}, projection={"media_retention_days": 1})
        days = None if doc is None else doc.get("media_retention_days")
        return int(days) if days is not None else None

    async def set_retention_days(self, account_id: str, days: int | None, now: datetime) -> None:
        """Keep the account's media ``days`` (None: as long as the deployment does)."""
        update: Doc = (
            {"$set": {"media_retention_days": days, "updated_at": now}}
            if days is not None
            else {"$unset": {"media_retention_days": ""}, "$set": {"updated_at": now}}
        )
        await self._settings.update_one({"_id": account_id}, update, upsert=True)
