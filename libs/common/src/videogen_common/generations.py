"""Generation documents: creation, the public view, the status message that reports a state change, and the
webhook events a change makes (the queries and compare-and-set transitions are
``videogen_common.repositories.generations``)."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from videogen_common.clock import isoformat
from videogen_common.domain import Provider, Status
from videogen_common.event_types import (
    VIDEO_COMPLETED,
    VIDEO_FAILED,
    VIDEO_PROCESSING,
    VIDEO_PROGRESS,
    EventType,
)
from videogen_common.events import STATUS, Envelope, status_event_id
from videogen_common.records.event import Event
from videogen_common.records.generation import GenerationRecord, Image, TimelineStep
from videogen_common.tracing import current_traceparent

Doc = dict[str, Any]

# What a request asks of the video beyond prompt, provider and duration, kept as given (absent: not asked).
VIDEO_OPTIONS = ("aspect_ratio", "resolution", "seed", "negative_prompt")


class QueueReason(StrEnum):
    """Why a ``queued`` generation waits, when we know (``generation.queue_reason``)."""

    ACCOUNT_CONCURRENCY = "account_concurrency"  # the account's cap on generations in flight
    PROVIDER_CAPACITY = "provider_capacity"  # our share of the provider's concurrency is all in use
    PROVIDER = "provider"  # the provider's own queue or throttling


# The owed event a terminal state makes.
TERMINAL_EVENT_TYPES: dict[Status, EventType[GenerationRecord]] = {
    Status.COMPLETED: VIDEO_COMPLETED,
    Status.FAILED: VIDEO_FAILED,
}


class TransitionError(ValueError):
    """A transition the state machine forbids (e.g. out of a terminal state)."""


def new_record(
    *,
    generation_id: str,
    account_id: str,
    prompt: str,
    provider: Provider,
    duration: int,
    now: datetime,
    options: Doc | None = None,
    metadata: dict[str, str] | None = None,
    image_key: str | None = None,
    image_type: str | None = None,
    deadline_at: datetime | None = None,
    trace_id: str | None = None,
    api_key_id: str | None = None,
    traceparent: str | None = None,
    priority: str | None = None,
    budget_hold: Doc | None = None,
    route: Doc | None = None,
    estimated_cost: float | None = None,
    retention_days: int | None = None,
    batch_id: str | None = None,
    custom_id: str | None = None,
    item_events: bool | None = None,
    model: str | None = None,
) -> GenerationRecord:
    """A new generation. ``options``: the request's ``VIDEO_OPTIONS`` (and ``image``) that were given;
    ``metadata``: the client's own keys and values. Neither is stored when empty, so a spec-minimum request is
    stored as before they existed. The rest are internal: where the first frame's bytes are, the client's
    deadline, the creating request's id, key and trace, what it reserved of its budgets, and the days its
    media is to be kept if the request shortened them. ``route``: its candidates and why
    (``videogen_common.routing``), when the request asked for routing; ``estimated_cost``: what its first
    candidate charges for it."""
    given = options or {}
    image = given.get("image")
    return GenerationRecord(
        id=generation_id,
        account_id=account_id,
        # The spec shows `processing` at creation; `queued` is reserved for explicit waiting.
        status=Status.PROCESSING,
        prompt=prompt,
        provider=provider.value,
        duration=duration,
        created_at=now,
        updated_at=now,
        timeline=(TimelineStep(Status.PROCESSING.value, now),),
        image=Image(image.get("url"), image.get("upload_id")) if image else None,
        aspect_ratio=given.get("aspect_ratio"),
        resolution=given.get("resolution"),
        seed=given.get("seed"),
        negative_prompt=given.get("negative_prompt"),
        model=model,
        metadata=dict(metadata) if metadata else None,
        image_key=image_key,
        image_type=image_type,
        deadline_at=deadline_at,
        trace_id=trace_id,
        api_key_id=api_key_id,
        traceparent=traceparent,
        # Stored only when it orders something: ``normal`` is the default.
        priority=priority if priority != "normal" else None,
        budget_hold=budget_hold,
        route=route,
        estimated_cost=estimated_cost,
        retention_days=retention_days,
        batch_id=batch_id,
        custom_id=custom_id,
        # Stored only when it holds something: events are sent by default.
        item_events=False if item_events is False else None,
    )


def new_generation(
    *,
    generation_id: str,
    account_id: str,
    prompt: str,
    provider: Provider,
    duration: int,
    now: datetime,
    options: Doc | None = None,
    metadata: dict[str, str] | None = None,
) -> Doc:
    """The document of a new generation (see ``new_record``)."""
    return new_record(
        generation_id=generation_id,
        account_id=account_id,
        prompt=prompt,
        provider=provider,
        duration=duration,
        now=now,
        options=options,
        metadata=metadata,
    ).to_doc()


def public_view(doc: Doc) -> Doc:
    """What clients see of the generation stored as ``doc`` (``GenerationRecord.public_view``)."""
    return GenerationRecord.from_doc(doc).public_view()


def status_envelope(
    record: GenerationRecord, now: datetime, trace_id: str | None = None, *, progress: bool = False
) -> Envelope:
    """The ``generation.status`` message for the state ``record`` is in. Its id is deterministic, so whoever
    publishes it (the orchestrator, or the api after a cancel) publishes the same message. ``progress``: it
    reports the progress the generation holds, within its state (an id of its own, and the time it is
    reported at)."""
    event_id = status_event_id(record.id, record.status.value, record.version)
    if progress:
        event_id += f"_progress_{record.progress}"
    return Envelope(
        event_id=event_id,
        type=STATUS,
        occurred_at=isoformat(now if progress else record.updated_at),
        account_id=record.account_id,
        generation=record.public_view(),
        version=record.version,
        trace_id=trace_id or record.trace_id,
        traceparent=current_traceparent() or record.traceparent,
    )


def terminal_event(record: GenerationRecord, trace_id: str | None = None) -> Event:
    """The owed event of a generation's terminal state (``video.completed`` or ``video.failed``), as of its
    ``updated_at``. Its id is its status message's (``evt_{id}_{status}_{version}``): the transition that
    makes the state stores it, and whoever publishes it publishes the same event."""
    event_type = TERMINAL_EVENT_TYPES.get(record.status)
    if event_type is None:
        raise ValueError(f"a {record.status} generation owes no event")
    return event_type.event(
        record,
        change=f"{record.status.value}_{record.version}",
        at=record.updated_at,
        trace_id=trace_id or record.trace_id,
        traceparent=current_traceparent() or record.traceparent,
    )


def notice_event(record: GenerationRecord, now: datetime, *, progress: bool = False) -> Event:
    """The best-effort event of a generation that is not finished: ``video.processing`` (the provider took
    the task; as of its ``updated_at``), or with ``progress`` ``video.progress`` (how far it is, at ``now``).
    Its id is its status message's."""
    change = f"{record.status.value}_{record.version}"
    event_type, at = (VIDEO_PROGRESS, now) if progress else (VIDEO_PROCESSING, record.updated_at)
    if progress:
        change += f"_progress_{record.progress}"
    return event_type.event(
        record,
        change=change,
        at=at,
        trace_id=record.trace_id,
        traceparent=current_traceparent() or record.traceparent,
    )
