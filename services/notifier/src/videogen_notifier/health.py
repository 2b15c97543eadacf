"""An endpoint's health, kept on its webhook document (``health``) so every notifier instance sees the same
run of failures: it opens the endpoint's circuit breaker and, if it goes on long enough, disables it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from pymongo.asynchronous.collection import AsyncCollection

Doc = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Health:
    consecutive_failures: int = 0
    # The first failure since the last success (or since the endpoint was created); None while healthy.
    failing_since: datetime | None = None
    last_success_at: datetime | None = None
    last_failure_at: datetime | None = None

    @classmethod
    def of(cls, endpoint: Doc) -> Health:
        health = endpoint.get("health") or {}
        return cls(
            consecutive_failures=int(health.get("consecutive_failures") or 0),
            failing_since=health.get("failing_since"),
            last_success_at=health.get("last_success_at"),
            last_failure_at=health.get("last_failure_at"),
        )

    def paused_until(self, failures: int, cooldown: timedelta) -> datetime | None:
        """When the breaker lets attempts through again, if ``failures`` in a row have opened it. Derived
        from the stored health alone, so it holds across instances and restarts: after the cooldown, the
        next attempts go out, and each further failure starts a new cooldown."""
        if self.consecutive_failures < failures or self.last_failure_at is None:
            return None
        return self.last_failure_at + cooldown

    def needs_success_recorded(self, now: datetime, refresh: timedelta = timedelta(minutes=1)) -> bool:
        """A success must be written when it ends a run of failures; on an already healthy endpoint only its
        ``last_success_at`` would change, so that is refreshed at most once per ``refresh``. Writing every
        success made concurrent attempts contend on one hot document in the store."""
        if self.consecutive_failures or self.failing_since is not None:
            return True
        return self.last_success_at is None or now - self.last_success_at >= refresh

    def failing_for(self, now: datetime) -> timedelta:
        return now - self.failing_since if self.failing_since is not None else timedelta(0)


async def record_success(webhooks: AsyncCollection[Doc], webhook_id: str, now: datetime) -> None:
    await webhooks.update_one(
        {"_id": webhook_id},
        {
            "$set": {
                "health.consecutive_failures": 0,
                "health.failing_since": None,
                "health.last_success_at": now,
            }
        },
    )


async def record_failure(webhooks: AsyncCollection[Doc], webhook_id: str, now: datetime) -> Health:
    """Count one more failure and return the health it leaves. One atomic update, so concurrent attempts
    (from this lane or another instance) neither lose a count nor move ``failing_since`` later; then a read by
    id (findAndModify would cost the embedded store a scan of every webhook), which may already include
    failures counted since: the count only grows until a success."""
    await webhooks.update_one(
        {"_id": webhook_id},
        [
            {
                "$set": {
                    "health.consecutive_failures": {
                        "$add": [{"$ifNull": ["$health.consecutive_failures", 0]}, 1]
                    },
                    "health.failing_since": {"$ifNull": ["$health.failing_since", now]},
                    "health.last_failure_at": now,
                }
            }
        ],
    )
    doc = await webhooks.find_one({"_id": webhook_id}, projection={"health": 1})
    return Health.of(doc or {})
