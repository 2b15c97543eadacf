"""An event's delivery to an endpoint, with its attempts; what re-queueing an endpoint's failed deliveries
takes (``RecoverRequest``) and answers."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from videogen_api.schemas.common import Body, DeliveryStatus, Moment, NextCursor, Timestamp


class RecoverRequest(BaseModel):
    """POST /v1/webhooks/{id}/recover: re-queue the endpoint's failed deliveries created since then."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    since: Timestamp


DeliveryId = Annotated[str, Field(pattern=r"^msg_[0-9a-z]{26}$")]


class DeliveryAttempt(Body):
    at: Moment
    status_code: Annotated[int | None, Field(description="The endpoint's HTTP status; null if none came.")]
    latency_ms: float | None
    error: Annotated[str | None, Field(description="What went wrong, if anything.")]


class Delivery(Body):
    """One event's delivery to one endpoint, with every attempt made."""

    id: Annotated[DeliveryId, Field(description="Also the webhook-id header of every attempt.")]
    webhook_id: str
    event_id: str
    event_type: Annotated[
        str,
        Field(
            description="Its event's type: an EventType, or webhook.test. The event is GET /v1/events/{id}."
        ),
    ]
    generation_id: str | None
    status: DeliveryStatus
    failure_reason: Annotated[str | None, Field(description="Why it failed for good, once failed.")]
    attempts: list[DeliveryAttempt]
    next_attempt_at: Annotated[Moment | None, Field(description="When it is tried next; null once finished.")]
    created_at: Moment
    updated_at: Moment


class DeliveryList(Body):
    """A page of an endpoint's deliveries, newest first."""

    data: list[Delivery]
    next_cursor: NextCursor


class Recovered(Body):
    """How many failed deliveries were queued again."""

    requeued: Annotated[int, Field(ge=0)]
