"""Stand-ins for the orchestrator's collaborators that are not under test: a clock the test moves by hand, an
event sink that records what would have gone to Kafka, a provider adapter that counts submissions, and one
whose tasks have always finished already."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta

from videogen_common.events import Envelope
from videogen_common.records.event import Event
from videogen_orchestrator.providers.base import (
    AdapterDefaults,
    Job,
    Output,
    ProviderAdapter,
    TaskState,
    TaskStatus,
)


def _millis(moment: datetime) -> datetime:
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


class ManualClock:
    """A ``Clock`` that stands still until the test moves it: tz-aware UTC, millisecond precision (what
    MongoDB keeps), so a time read back from the store equals the time written. With ``ticking`` it also
    moves as real time does (for pauses the code under test must see end: a provider's Retry-After), and the
    test may still move it on by hand."""

    def __init__(
        self,
        start: datetime = datetime(2026, 11, 21, 8, 47, 0, 123000, tzinfo=UTC),
        *,
        ticking: bool = False,
    ) -> None:
        if start.tzinfo is None:
            raise ValueError("ManualClock needs a timezone-aware start")
        self._now = _millis(start.astimezone(UTC))
        self._ticking_since = time.monotonic() if ticking else None
        # Every pause asked of this clock, in seconds, in order.
        self.slept: list[float] = []

    def now(self) -> datetime:
        if self._ticking_since is None:
            return self._now
        return _millis(self._now + timedelta(seconds=time.monotonic() - self._ticking_since))

    async def sleep(self, seconds: float) -> None:
        """Recorded in ``slept``, then waited in real time; the time ``now`` reads still moves only when the
        test moves it (a poll loop's pauses do not age leases and deadlines behind the test's back)."""
        self.slept.append(seconds)
        await asyncio.sleep(seconds)

    def advance(self, delta: timedelta) -> datetime:
        self._now = _millis(self._now + delta)
        return self.now()

    def set(self, moment: datetime) -> None:
        self._now = _millis(moment.astimezone(UTC))
        if self._ticking_since is not None:
            self._ticking_since = time.monotonic()


class RecordingSink:
    """An ``EventSink`` that records what it is given: ``envelopes`` and ``attempts`` count the terminal
    status messages, ``progress`` the status messages of a state that is not terminal (processing, queued,
    progress); ``events`` and ``event_attempts`` the owed events put on the events topic, ``notices`` the
    best-effort ones.
    Set ``failure`` to make ``send`` and ``send_event`` raise it, as a producer does when the broker does not
    acknowledge."""

    def __init__(self) -> None:
        self.envelopes: list[Envelope] = []
        self.progress: list[Envelope] = []
        self.events: list[Event] = []
        self.notices: list[Event] = []
        self.failure: Exception | None = None
        self.attempts = 0
        self.event_attempts = 0

    async def send(self, envelope: Envelope) -> None:
        terminal = envelope.generation.get("status") in ("completed", "failed")
        self.attempts += terminal
        if self.failure is not None:
            raise self.failure
        (self.envelopes if terminal else self.progress).append(envelope)

    async def send_event(self, event: Event) -> None:
        self.event_attempts += event.owed
        if self.failure is not None:
            raise self.failure
        (self.events if event.owed else self.notices).append(event)

    def for_generation(self, generation_id: str) -> list[Envelope]:
        return [e for e in self.envelopes if e.generation_id == generation_id]

    def events_of(self, subject_id: str) -> list[Event]:
        return [e for e in self.events if e.subject_id == subject_id]


class CountingProvider(AdapterDefaults):
    """Wraps a ``ProviderAdapter`` and records every ``submit`` and ``poll`` that reaches it. Only those two
    are passed on: it declares the defaults (no cancel, a submit that is paid for, no plan)."""

    def __init__(self, inner: ProviderAdapter) -> None:
        self.inner = inner
        self.name = inner.name
        self.submitted: list[str] = []
        self.polled: list[str] = []

    async def submit(self, job: Job) -> str:
        self.submitted.append(job.generation_id)
        return await self.inner.submit(job)

    async def poll(self, task_id: str, job: Job) -> TaskState:
        self.polled.append(task_id)
        return await self.inner.poll(task_id, job)


class FinishedProvider(AdapterDefaults):
    """Stands in for the ``mock`` provider: every task it is given has already finished with ``output``."""

    name = "mock"

    def __init__(self, output: Output) -> None:
        self.output = output

    async def submit(self, job: Job) -> str:
        return f"task_{job.generation_id}"

    async def poll(self, task_id: str, job: Job) -> TaskState:
        return TaskState(TaskStatus.SUCCEEDED, output=self.output)
