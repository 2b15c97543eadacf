"""Time as a dependency: services take a Clock so schedules and leases are testable without sleeping, and wait
through it (``sleep``) so a test's clock sees every pause."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime: ...

    async def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` (a pause between polls, ...)."""
        ...


class SystemClock:
    def now(self) -> datetime:
        # MongoDB keeps milliseconds; truncating here keeps what we return equal to what we store.
        now = datetime.now(UTC)
        return now.replace(microsecond=now.microsecond // 1000 * 1000)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def to_millis(moment: datetime) -> int:
    """Exact milliseconds since the epoch (integer arithmetic: float timestamps sometimes lose one)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (moment - EPOCH) // timedelta(milliseconds=1)


def from_millis(millis: int) -> datetime:
    return EPOCH + timedelta(milliseconds=millis)


def isoformat(moment: datetime) -> str:
    """ISO 8601 UTC with millisecond precision and a ``Z`` suffix, e.g. ``2026-11-21T08:47:00.123Z``."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
