"""Generation documents: creation, the public view, and the status event that reports a state change (the
queries and compare-and-set transitions are ``videogen_common.repositories.generations``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from videogen_common.clock import isoformat
from videogen_common.domain import EventType, Provider, Status
from videogen_common.events import STATUS, Envelope, status_event_id
from videogen_common.tracing import current_traceparent

Doc = dict[str, Any]

# What clients see of a generation, in this order: ``public_view`` makes exactly these (a test holds it and
# the api's response model to this list), and webhook data carries them too (``deliveries.DATA_FIELDS``).
PUBLIC_FIELDS = (
    "id",
    "status",
    "prompt",
    "provider",
    "duration",
    "video_url",
    "thumbnail_url",
    "error",
    "progress",
    "queue_reason",
    "timeline",
    "aspect_ratio",
    "resolution",
    "seed",
    "negative_prompt",
    "metadata",
    "image",
    "created_at",
    "updated_at",
)
# What a request asks of the video beyond prompt, provider and duration, kept as given (absent: not asked).
VIDEO_OPTIONS = ("aspect_ratio", "resolution", "seed", "negative_prompt")


class QueueReason:
    """Why a ``queued`` generation waits, when we know."""

    ACCOUNT_CONCURRENCY = "account_concurrency"  # the account's cap on generations in flight
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
    """A new generation. ``options``: the request's ``VIDEO_OPTIONS`` that were given; ``metadata``: the
    client's own keys and values. Neither is stored when empty, so a spec-minimum request is stored as before
    they existed."""
    extra: Doc = {name: value for name, value in (options or {}).items() if value is not None}
    if metadata:
        extra["metadata"] = dict(metadata)
    return {
        "_id": generation_id,
        "account_id": account_id,
        # The spec shows `processing` at creation; `queued` is reserved for explicit waiting.
        "status": Status.PROCESSING.value,
        "prompt": prompt,
        "provider": provider.value,
        "duration": duration,
        "video_url": None,
        "thumbnail_url": None,
        "error": None,
        "progress": None,
        "timeline": [{"status": Status.PROCESSING.value, "at": now}],
        "created_at": now,
        "updated_at": now,
        "version": 1,
        "lease_owner": None,
        "lease_expires_at": None,
        "provider_task_id": None,
        "attempts": 0,
        **extra,
    }


def public_view(doc: Doc) -> dict[str, Any]:
    """What clients see: spec 2.1, timestamps as ISO 8601 UTC. Internal fields never leave."""
    created, updated = doc["created_at"], doc["updated_at"]
    created_at = isoformat(created)
    status = doc["status"]
    # Generations made before the timeline was kept: their first state, and the one they are in.
    timeline = doc.get("timeline") or [{"status": Status.PROCESSING.value, "at": created}] + (
        [{"status": status, "at": updated}] if status != Status.PROCESSING.value else []
    )
    return {
        "id": doc["_id"],
        "status": status,
        "prompt": doc["prompt"],
        "provider": doc["provider"],
        "duration": doc["duration"],
        "video_url": doc.get("video_url"),
        "thumbnail_url": doc.get("thumbnail_url"),
        "error": doc.get("error"),
        "progress": doc.get("progress"),
        "queue_reason": doc.get("queue_reason") if status == Status.QUEUED.value else None,
        "timeline": [
            {"status": e["status"], "at": created_at if e["at"] == created else isoformat(e["at"])}
            for e in timeline
        ],
        "aspect_ratio": doc.get("aspect_ratio"),
        "resolution": doc.get("resolution"),
        "seed": doc.get("seed"),
        "negative_prompt": doc.get("negative_prompt"),
        "metadata": doc.get("metadata") or {},
        "image": _image_view(doc.get("image")),
        "created_at": created_at,
        # Equal moments format alike: a new generation's two are one (formatted once, on every creation).
        "updated_at": created_at if updated == created else isoformat(updated),
    }


def _image_view(image: Doc | None) -> Doc | None:
    if not image:
        return None
    return {"url": image.get("url"), "upload_id": image.get("upload_id")}


def status_envelope(
    doc: Doc,
    now: datetime,
    trace_id: str | None = None,
    *,
    progress: bool = False,
    notice: EventType | None = None,
) -> Envelope:
    """The ``generation.status`` event for the state ``doc`` is in. Its id is deterministic, so whoever
    publishes it (the orchestrator, its reconciler, or the api after a cancel) publishes the same event.
    ``progress``: the event reports the progress ``doc`` holds, within its state (an id of its own, and the
    time it is reported at). ``notice``: the webhook event it is also delivered as (non-terminal events)."""
    event_id = status_event_id(doc["_id"], doc["status"], doc["version"])
    if progress:
        event_id += f"_progress_{doc.get('progress')}"
    occurred = now if progress or not doc.get("updated_at") else doc["updated_at"]
    return Envelope(
        event_id=event_id,
        type=STATUS,
        occurred_at=isoformat(occurred),
        account_id=doc["account_id"],
        generation=public_view(doc),
        version=doc["version"],
        trace_id=trace_id or doc.get("trace_id"),
        traceparent=current_traceparent() or doc.get("traceparent"),
        notice=notice.value if notice is not None else None,
    )
