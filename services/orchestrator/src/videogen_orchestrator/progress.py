"""How far a generation's provider task is, as its actor learns it: written to the generation at most every
``every`` seconds, and published as a status message, so a client streaming the generation's events sees it
move; at most every ``notice_every`` seconds it is also published as a ``video.progress`` event for webhooks
(the actor holds the generation's lease, so one process throttles each generation; a takeover starts over).

A progress write changes no state, so it does not bump the generation's version: it is conditional on the
version the actor holds (and on the lease), which leaves the actor's own compare-and-set writes undisturbed,
and a progress report that comes after the generation moved on writes nothing."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable
from dataclasses import replace
from datetime import datetime

from videogen_common.clock import Clock
from videogen_common.domain import Status
from videogen_common.records.generation import GenerationRecord
from videogen_common.repositories.generations import GenerationRepository
from videogen_common.store import Store
from videogen_orchestrator.status_events import EventSink, publish_status

log = logging.getLogger(__name__)


class ProgressReporter:
    def __init__(
        self, *, store: Store, sink: EventSink, clock: Clock, owner: str, every: float, notice_every: float
    ) -> None:
        self._generations = GenerationRepository(store)
        self._sink = sink
        self._clock = clock
        self._owner = owner
        self._every = every
        self._notice_every = notice_every
        self._noticed_at: datetime | None = None
        self._record: GenerationRecord | None = None
        self._written: int = -1
        self._written_at: datetime | None = None
        self._task: asyncio.Task[None] | None = None

    def follow(self, record: GenerationRecord) -> None:
        """The generation as the actor holds it now (after each of its writes)."""
        self._record = record

    def started(self, record: GenerationRecord) -> None:
        """The provider took the task (its id is saved in ``record``): published in the background, with its
        ``video.processing`` event, so a broker that is slow to answer does not hold up the task's polls."""
        self.follow(record)
        if record.status is Status.PROCESSING:
            sending = publish_status(self._sink, record, self._clock.now(), notice=True)
            self._task = asyncio.create_task(_ignore_result(sending), name="processing-notice")

    def seen(self, progress: int) -> None:
        """The task is ``progress`` % done: written now, unless a write was made less than ``every`` seconds
        ago (or is still under way), or it is not more than what was written."""
        record = self._record
        if record is None or record.status is not Status.PROCESSING or progress <= self._written:
            return
        now = self._clock.now()
        recent = self._written_at is not None and (now - self._written_at).total_seconds() < self._every
        if recent or (self._task is not None and not self._task.done()):
            return
        self._written, self._written_at = progress, now
        self._task = asyncio.create_task(self._write(record, min(progress, 100), now), name="progress")

    async def settled(self) -> None:
        """Wait for the write under way, if any."""
        if self._task is not None:
            await asyncio.shield(self._task)

    async def close(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _write(self, record: GenerationRecord, progress: int, now: datetime) -> None:
        try:
            written = await self._generations.write_progress(record, self._owner, progress)
        except Exception as exc:  # progress is best effort: the generation goes on
            log.warning("progress not written", extra={"generation_id": record.id, "error": repr(exc)})
            return
        if not written:
            return
        notice = self._noticed_at is None or (now - self._noticed_at).total_seconds() >= self._notice_every
        if notice:
            self._noticed_at = now
        await publish_status(
            self._sink, replace(record, progress=progress), now, progress=True, notice=notice
        )


async def _ignore_result(work: Awaitable[object]) -> None:
    await work
