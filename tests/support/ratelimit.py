"""Shared rate-limit counts in memory, for unit tests of the limiter's algorithm. The same contract test runs
on it and on the MongoDB counts (tests/integration/test_api_rate_limit.py), so the two cannot drift."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping

from videogen_api.ratelimit import WindowKey


class MemoryCounts:
    """``SharedCounts`` in a dict. Each call yields to the event loop first, as a store round trip would, so
    requests and other syncs interleave with it. Set ``failure`` to make every call raise it."""

    def __init__(self) -> None:
        self.counts: dict[WindowKey, int] = {}
        self.failure: Exception | None = None
        self.reads: list[set[WindowKey]] = []

    async def add(self, deltas: Mapping[WindowKey, int]) -> None:
        await asyncio.sleep(0)
        if self.failure is not None:
            raise self.failure
        for key, delta in deltas.items():
            self.counts[key] = self.counts.get(key, 0) + delta

    async def totals(self, keys: Iterable[WindowKey]) -> dict[WindowKey, int]:
        await asyncio.sleep(0)
        if self.failure is not None:
            raise self.failure
        wanted = set(keys)
        self.reads.append(wanted)
        return {key: self.counts[key] for key in wanted if key in self.counts}
