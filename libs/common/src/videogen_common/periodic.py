"""A background pass run every interval (the reconciler, the delivery sweeper): a failing pass is logged and
tried again next time, and stopping cancels it cleanly."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable


class Periodic:
    def __init__(
        self,
        name: str,
        interval_seconds: float,
        run_once: Callable[[], Awaitable[object]],
        log: logging.Logger,
    ) -> None:
        self._name = name
        self._interval = interval_seconds
        self._run_once = run_once
        self._log = log
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._loop(), name=self._name)

    async def stop(self) -> None:
        if self._task is None:
            return
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        self._task = None

    async def _loop(self) -> None:
        while True:
            try:
                await self._run_once()
            except Exception:
                self._log.exception("%s pass failed; will try again", self._name)
            await asyncio.sleep(self._interval)
