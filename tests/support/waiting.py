"""The one polling helper: for a change no test can await as an event (another process's or task's write to
the store, a count kept in memory), check again and again until it holds."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable


async def eventually(
    check: Callable[[], Awaitable[bool]],
    timeout: float = 10.0,
    what: str = "the condition",
    *,
    interval: float = 0.05,
) -> None:
    """Return once ``check()`` is true; an ``AssertionError`` naming ``what`` if it is not after ``timeout``
    seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not await check():
        if loop.time() > deadline:
            raise AssertionError(f"not true after {timeout:g} s: {what}")
        await asyncio.sleep(interval)
