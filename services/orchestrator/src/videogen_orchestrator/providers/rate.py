"""A cap on the calls one orchestrator instance makes to one provider's API: a token bucket whose rate is the
deployment's cap (``VIDEOGEN_<PROVIDER>_MAX_REQUESTS_PER_SECOND``) divided among the instances alive (the
reconciler recounts them and calls ``share``). Every call of the provider's adapters, of every key, takes a
token first; without a cap nothing waits."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

Sleep = Callable[[float], Awaitable[None]]


class RateLimiter:
    def __init__(
        self,
        per_second: float,
        *,
        monotonic: Callable[[], float] = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        if per_second <= 0:
            raise ValueError(f"a rate must be above 0, got {per_second}")
        self.deployment_rate = per_second
        self._rate = per_second
        # At most a second's worth of calls at once: a burst after a quiet spell stays within the cap.
        self._tokens = 1.0
        self._monotonic = monotonic
        self._sleep = sleep
        self._last = monotonic()
        self._lock = asyncio.Lock()

    @property
    def rate(self) -> float:
        """Calls a second this instance may make now."""
        return self._rate

    def share(self, instances: int) -> None:
        """``instances`` are alive: this one makes its equal part of the deployment's calls."""
        self._rate = self.deployment_rate / max(1, instances)

    def _refill(self) -> None:
        now = self._monotonic()
        capacity = max(1.0, self._rate)
        self._tokens = min(capacity, self._tokens + (now - self._last) * self._rate)
        self._last = now

    async def acquire(self) -> None:
        """Wait for a token. Callers are served in turn: one waiting for a token holds the others back."""
        async with self._lock:
            self._refill()
            while self._tokens < 1.0:
                await self._sleep((1.0 - self._tokens) / self._rate)
                self._refill()
            self._tokens -= 1.0
