"""For the tests that kill parts of a stack under load: the settings that make repairs quick, and generations
created at a steady pace, whatever answers."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from typing import Any

import aiohttp

# Settings for a stack whose processes a test kills: short periods, so what a kill leaves behind is repaired
# within the test's time.
QUICK_REPAIRS = {
    "VIDEOGEN_MOCK_LATENCY_MS": "400",
    "VIDEOGEN_LEASE_SECONDS": "5",
    "VIDEOGEN_RECONCILE_INTERVAL_SECONDS": "1",
    "VIDEOGEN_DISPATCH_GRACE_SECONDS": "3",
    "VIDEOGEN_WEBHOOK_RETRY_SCHEDULE": ",".join(["1"] * 12),
    "VIDEOGEN_BREAKER_COOLDOWN_SECONDS": "2",
    "VIDEOGEN_DELIVERY_HOLD_SECONDS": "8",
    "VIDEOGEN_API_KEY_CACHE_SECONDS": "0",
}


async def create_steadily(
    session: aiohttp.ClientSession,
    bases: list[str],
    key: str,
    account: str,
    accepted: list[str],
    stop: asyncio.Event,
    *,
    rate: float,
    body: Mapping[str, Any] | None = None,
) -> int:
    """Create generations at ``rate`` a second until ``stop``, through each api of ``bases`` in turn (a mock
    video of 3 s, or ``body``'s request with a prompt of its own); the ids answered 202 go to ``accepted``.
    Returns how many requests were refused or failed (while a process was down)."""
    refused = 0
    n = 0
    while not stop.is_set():
        n += 1
        request = {"provider": "mock", "duration": 3, **(body or {}), "prompt": f"load {account} {n}"}
        try:
            async with session.post(
                f"{bases[n % len(bases)]}/v1/generate",
                json=request,
                headers={"Authorization": f"Bearer {key}"},
                timeout=aiohttp.ClientTimeout(total=10),
            ) as response:
                answer = await response.json(content_type=None)
                if response.status == 202:
                    accepted.append(answer["id"])
                else:
                    refused += 1
        except (aiohttp.ClientError, TimeoutError):
            refused += 1
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 1 / rate)  # the pace of the load
    return refused
