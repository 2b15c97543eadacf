"""The actor's wait between two reads of its provider's task: polling at the provider's cadence, or, with
provider callbacks on (``provider_callbacks``) and a provider that calls back (``calls_back``: Luma, fal),
waiting for the provider's callback and reading the task once it comes, with a slow poll
(``provider_callback_poll_seconds``) as the safety net for a callback lost.

A callback reaches this instance as a wake-up (``videogen_common.provider_callbacks``: the api checked its
token and put it on the callbacks topic; ``callback_feed`` reads every partition of it here). The wake-up
only says "read the task now": the actor reads it from the provider and acts on what the provider answers,
never on what the callback said. A generation's wake-ups are taken from the moment its actor starts
(``watching``), before its submit, so one that comes before the submit's answer is even stored (a fast task,
or a provider calling back at once) is remembered and ends the actor's first wait at once. A wake-up for a
generation not running here (another instance's, or one already finished) is dropped."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import replace

from videogen_common.clock import Clock
from videogen_common.provider_callbacks import WakeUp, attempt_of, callback_url
from videogen_common.records.generation import GenerationRecord
from videogen_orchestrator.deadlines import poll_pause, until_client_deadline
from videogen_orchestrator.providers.base import Job, ProviderAdapter
from videogen_orchestrator.settings import OrchestratorSettings


class TaskWatch:
    """The waits of this instance's actors: each generation's wake-up, and the pause before the next read of
    its task. ``contended``: whether work waits for a provider's capacity (admission's view: its tasks are
    polled sooner)."""

    def __init__(
        self,
        settings: OrchestratorSettings,
        clock: Clock,
        contended: Callable[[str], bool] | None = None,
    ) -> None:
        self._settings = settings
        self._clock = clock
        self._contended = contended
        self._callbacks = settings.provider_callbacks
        self._safety_net = settings.provider_callback_poll_seconds
        # Each generation whose actor runs here: set when a callback woke it, until its actor reads its task.
        self._woken: dict[str, asyncio.Event] = {}
        # Wake-ups taken (for a generation running here) and dropped (for none), for the tests and benches.
        self.taken = 0
        self.dropped = 0

    def called_back(self, adapter: ProviderAdapter) -> bool:
        """Whether the adapter's tasks are followed by callbacks (polled only as a safety net)."""
        return self._callbacks and adapter.calls_back

    def with_callback(self, job: Job, record: GenerationRecord, adapter: ProviderAdapter) -> Job:
        """The job, naming where the provider is to call back about its task, if it will."""
        if not self.called_back(adapter):
            return job
        url = callback_url(
            self._settings.public_base_url,
            self._settings.media_signing_key.get_secret_value(),
            adapter.name,
            record.id,
            attempt_of(record.provider_attempts),
        )
        return replace(job, callback_url=url)

    def watch(self, generation_id: str) -> None:
        """Take the generation's wake-ups from now on (its actor starts)."""
        self._woken.setdefault(generation_id, asyncio.Event())

    def unwatch(self, generation_id: str) -> None:
        """Its actor ended: its wake-ups are dropped from now on."""
        self._woken.pop(generation_id, None)

    def wake(self, wake: WakeUp) -> bool:
        """A provider called back about the generation's task: its actor reads it now (or as soon as it next
        waits). False if no actor here runs that generation."""
        event = self._woken.get(wake.generation_id)
        if event is None:
            self.dropped += 1
            return False
        self.taken += 1
        event.set()
        return True

    async def pause(
        self, record: GenerationRecord, adapter: ProviderAdapter, *, unanswered: bool = False
    ) -> None:
        """Wait until the task is to be read again: the polling cadence (a fraction of the task's age, the
        provider's own least interval, sooner while the provider is contended), or, for a provider that calls
        back, until its callback wakes the generation or the safety net's interval passes — the polling
        cadence instead when the last read went ``unanswered`` (the callback that woke it is spent). Never
        past the client's deadline or the generation's."""
        now = self._clock.now()
        if self.called_back(adapter) and not unanswered:
            pause = min(self._safety_net, self._until_deadline(record))
        else:
            contended = self._contended is not None and self._contended(record.provider)
            pause = poll_pause(self._settings, record, now, contended=contended)
            pause = max(pause, adapter.poll_interval_seconds)  # the provider's own cadence
        left = until_client_deadline(record, now)
        pause = pause if left is None else min(pause, left)
        woken = self._woken.get(record.id)
        if woken is None or not self.called_back(adapter):
            await self._clock.sleep(pause)
            return
        if not woken.is_set():
            sleeping = asyncio.ensure_future(self._clock.sleep(pause))
            waking = asyncio.ensure_future(woken.wait())
            try:
                await asyncio.wait((sleeping, waking), return_when=asyncio.FIRST_COMPLETED)
            finally:
                for waiter in (sleeping, waking):
                    waiter.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await waiter
        woken.clear()  # a wake-up that comes while the task is read is kept for the next wait

    def _until_deadline(self, record: GenerationRecord) -> float:
        """Seconds until the deployment's deadline for the generation (0 once past)."""
        admitted = record.admitted_at or record.created_at
        left = self._settings.generation_deadline_seconds - (self._clock.now() - admitted).total_seconds()
        return max(0.0, left)
