"""Generation documents: creation, the public view, and the status event that reports a state change (the
queries and compare-and-set transitions are ``videogen_common.repositories.generations``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from videogen_common.clock import isoformat
from videogen_common.domain import EventType, Provider, Status
from videogen_common.events import STATUS, Envelope, status_event_id
from videogen_common.records.generation import GenerationRecord, Image, TimelineStep
from videogen_common.tracing import current_traceparent

Doc = dict[str, Any]

# What a request asks of the video beyond prompt, provider and duration, kept as given (absent: not asked).
VIDEO_OPTIONS = ("aspect_ratio", "resolution", "seed", "negative_prompt")


class QueueReason:
    """Why a ``queued`` generation waits, when we know."""

    ACCOUNT_CONCURRENCY = "account_concurrency"  # the account's cap on generations in flight
    PROVIDER_CAPACITY = "provider_capacity"  # our share of the provider's concurrency is all in use
    PROVIDER = "provider"  # the provider's own queue or throttling


def canceled_error() -> Doc:
    """The ``error`` of a generation its client canceled (POST /v1/generations/{id}/cancel)."""
    return {
        "code": "canceled",
        "message": "canceled by the client",
        "provider_code": None,
        "retriable": False,
    }


# When the pending status event was last put on Kafka (set by the terminal transition, moved on by each
# republish): the reconciler republishes what has waited longer than its grace.
OUTBOX_AT = "outbox_at"


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
) -> GenerationRecord:
    """A new generation. ``options``: the request's ``VIDEO_OPTIONS`` (and ``image``) that were given;
    ``metadata``: the client's own keys and values. Neither is stored when empty, so a spec-minimum request is
    stored as before they existed. The rest are internal: where the first frame's bytes are, the client's
    deadline, the creating request's id, key and trace, what it reserved of its budgets."""
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
    record: GenerationRecord,
    now: datetime,
    trace_id: str | None = None,
    *,
    progress: bool = False,
    notice: EventType | None = None,
) -> Envelope:
    """The ``generation.status`` event for the state ``record`` is in. Its id
    is deterministic, so whoever publishes it (the orchestrator, its reconciler, or the api after a cancel)
    publishes the same event. ``progress``: the event reports the progress the generation holds, within its
    state (an id of its own, and the time it is reported at). ``notice``: the webhook event it is also
    delivered as (non-terminal events)."""
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
        notice=notice.value if notice is not None else None,
    )
