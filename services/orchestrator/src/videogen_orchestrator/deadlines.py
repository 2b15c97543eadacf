"""When an actor polls a generation's task (and for how long one poll may take), when the generation must
stop, and stopping its task at the provider.

Each generation has a deadline (``generation_deadline_seconds`` after it was admitted: time spent waiting in
our own queue does not count), and may have its client's own (``deadline_at``, from ``deadline_seconds`` or
``Cancel-After``): past either, it fails (``late``), and its provider's task is canceled, best effort
(``cancel_task``)."""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timedelta

from opentelemetry.trace import SpanKind

from videogen_common.failures import ErrorCode, GenerationError
from videogen_common.records.generation import GenerationRecord
from videogen_common.repositories.generations import GenerationRepository
from videogen_common.tracing import annotate, tracer
from videogen_orchestrator.providers.base import Job, ProviderAdapter, TaskState
from videogen_orchestrator.settings import OrchestratorSettings

log = logging.getLogger(__name__)

# A best-effort cancel at the provider is not worth holding an actor (or a shutdown) longer than this.
CANCEL_TIMEOUT_SECONDS = 15.0


def poll_pause(
    settings: OrchestratorSettings, record: GenerationRecord, now: datetime, *, contended: bool = False
) -> float:
    """Seconds until the next poll of the generation's task: a fraction of the task's age, at least the base
    interval and at most the maximum, so a long video costs few polls and a short one is seen at once. While
    work waits for the provider's capacity (``contended``), the base interval: the slot a finished task frees
    is someone's, and a poll that comes late keeps it idle."""
    base = settings.poll_interval_seconds
    started = record.task_started_at or record.submit_started_at
    if started is None or contended:
        return base
    age = max(0.0, (now - started).total_seconds())
    return max(base, min(settings.poll_max_interval_seconds, age * settings.poll_age_fraction))


def late(settings: OrchestratorSettings, record: GenerationRecord, now: datetime) -> GenerationError | None:
    """Why the generation must stop now, if it is past a deadline: the client's own (``deadline_at``, from
    ``deadline_seconds`` or ``Cancel-After``), or the deployment's for every generation."""
    client: datetime | None = record.deadline_at
    if client is not None and now >= client:
        return GenerationError(
            ErrorCode.DEADLINE_EXCEEDED,
            "the video was not finished by the deadline the request set",
            retriable=True,
        )
    # Time spent waiting in our own queue for capacity does not count.
    admitted: datetime = record.admitted_at or record.created_at
    seconds = settings.generation_deadline_seconds
    if now >= admitted + timedelta(seconds=seconds):
        return GenerationError(
            ErrorCode.PROVIDER_TIMEOUT,
            f"the provider did not finish the video within {seconds:g} s of its start",
            retriable=True,
        )
    return None


def until_client_deadline(record: GenerationRecord, now: datetime) -> float | None:
    """Seconds left before the client's deadline (0 once past); None without one."""
    client: datetime | None = record.deadline_at
    if client is None:
        return None
    return max(0.0, (client - now).total_seconds())


def task_seconds(record: GenerationRecord, now: datetime) -> float | None:
    """Seconds since the provider accepted the generation's task."""
    if record.task_started_at is None:
        return None
    return max(0.0, (now - record.task_started_at).total_seconds())


async def poll_within(
    seconds_left: float | None, adapter: ProviderAdapter, task_id: str, job: Job
) -> TaskState | None:
    """The task's state, or None if the client's deadline (``seconds_left``) cut the poll short (a client's
    deadline is kept to the poll, not to the next one)."""
    deadline = asyncio.timeout(seconds_left)
    try:
        with tracer.start_as_current_span("provider.poll", kind=SpanKind.CLIENT):
            async with deadline:
                state = await adapter.poll(task_id, job)
            annotate(provider=adapter.name, task_status=state.status.value)
    except TimeoutError:
        if not deadline.expired():
            raise  # not the client's deadline: someone else's timeout
        return None
    return state


async def cancel_if_canceled(
    generations: GenerationRepository, adapter: ProviderAdapter, task_id: str | None, generation_id: str
) -> None:
    """After its actor lost the generation: if that is because its client canceled it, cancel the
    provider's task (a takeover by another instance leaves the task alone: the new owner polls it)."""
    if task_id is None or not adapter.can_cancel:
        return
    if await generations.was_canceled(generation_id):
        await cancel_task(adapter, task_id, generation_id, reason="canceled")


async def cancel_task(adapter: ProviderAdapter, task_id: str, generation_id: str, *, reason: str) -> None:
    """Cancel the generation's task at its provider, where the provider allows it (best effort: the
    generation is already final)."""
    if not adapter.can_cancel:
        return
    extra = {"generation_id": generation_id, "provider": adapter.name, "reason": reason}
    try:
        async with asyncio.timeout(CANCEL_TIMEOUT_SECONDS):
            with tracer.start_as_current_span("provider.cancel", kind=SpanKind.CLIENT):
                await adapter.cancel(task_id)
        log.info("canceled the provider's task", extra=extra)
    except Exception as exc:
        log.warning("could not cancel the provider's task", extra={**extra, "error": str(exc)})
