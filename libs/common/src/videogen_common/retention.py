"""How long a generation's media is kept: ``VIDEOGEN_MEDIA_RETENTION_DAYS``, shortened by its account's
override (``videogen retention``) and by the ``retention_days`` its request asked for, whichever is shortest.
Its links are signed for that long, and the retention sweeper deletes the media when it has passed."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timedelta

from videogen_common.records.generation import GenerationRecord
from videogen_common.repositories.account_settings import AccountSettingsRepository
from videogen_common.store import Store


class RetentionPolicy:
    """Each generation's retention; the accounts' overrides cached for ``ttl_seconds`` (an operator's change
    reaches every replica within it)."""

    def __init__(
        self,
        store: Store,
        default_days: int,
        ttl_seconds: float = 60.0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._settings = AccountSettingsRepository(store)
        self._default = default_days
        self._ttl = ttl_seconds
        self._monotonic = monotonic
        self._cache: dict[str, tuple[int | None, float]] = {}

    async def _account_days(self, account_id: str) -> int | None:
        hit = self._cache.get(account_id)
        if hit is not None and hit[1] > self._monotonic():
            return hit[0]
        days = await self._settings.retention_days(account_id)
        self._cache[account_id] = (days, self._monotonic() + self._ttl)
        return days

    async def retention(self, record: GenerationRecord) -> timedelta:
        """How long the generation's media is kept from when it is stored."""
        asked = (self._default, await self._account_days(record.account_id), record.retention_days)
        return timedelta(days=min(days for days in asked if days is not None))

    async def due_at(self, record: GenerationRecord, stored_at: datetime) -> datetime:
        return stored_at + await self.retention(record)
