"""The API's requests and answers as typed models, field for field with the served OpenAPI document (a test
keeps them in step). Unknown fields are kept, not refused, and so are values of a closed list this SDK does
not know (``videogen_client.enums``), so an SDK older than the server still reads it."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

from videogen_client.enums import (
    TERMINAL,
    AspectRatio,
    AuditActorType,
    AuditEventType,
    DeliveryStatus,
    ErrorCode,
    EventType,
    ImageType,
    Provider,
    QueueReason,
    Resolution,
    Status,
    SubjectType,
)

# A value of one of these may be one this SDK does not know (a newer server's): it is kept as a string.
OpenStatus = Status | str
OpenProvider = Provider | str
OpenAspectRatio = AspectRatio | str
OpenResolution = Resolution | str


class Model(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)


class GenerationError(Model):
    code: ErrorCode | str
    message: str
    provider_code: str | None = None
    retriable: bool


class TimelineStep(Model):
    status: OpenStatus
    at: datetime


class GenerationImage(Model):
    """The first frame asked for: one of the two is set."""

    url: str | None = None
    upload_id: str | None = None


ImageInput = GenerationImage  # what a request sends: the same two fields, exactly one of them


class Generation(Model):
    id: str
    status: OpenStatus
    prompt: str
    provider: OpenProvider
    duration: int
    video_url: str | None = None
    thumbnail_url: str | None = None
    error: GenerationError | None = None
    progress: int | None = None  # 0-100 while processing, when the provider says
    queue_reason: QueueReason | str | None = None
    timeline: list[TimelineStep] = []
    # As asked; None: the provider's (or the deployment's) default.
    aspect_ratio: OpenAspectRatio | None = None
    resolution: OpenResolution | None = None
    seed: int | None = None
    negative_prompt: str | None = None
    metadata: dict[str, str] = {}
    image: GenerationImage | None = None
    created_at: datetime
    updated_at: datetime

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL


class GenerationList(Model):
    data: list[Generation]
    next_cursor: str | None = None


class Upload(Model):
    """An image uploaded for use as a first frame; usable until ``expires_at``."""

    id: str
    content_type: ImageType | str
    bytes: int
    width: int
    height: int
    created_at: datetime
    expires_at: datetime


class ProviderCapabilities(Model):
    durations: list[int]  # the lengths it makes; a request's duration is mapped to the nearest
    aspect_ratios: list[OpenAspectRatio]
    resolutions: list[OpenResolution]
    default_resolution: OpenResolution
    image_input: bool
    seed: bool
    negative_prompt: bool


class ProviderInfo(Model):
    id: OpenProvider
    enabled: bool  # whether this deployment offers it
    capabilities: ProviderCapabilities


class ProviderList(Model):
    data: list[ProviderInfo]


class Webhook(Model):
    id: str
    url: str
    events: list[EventType | str]
    active: bool
    disabled_reason: str | None = None
    created_at: datetime
    updated_at: datetime


class WebhookCreated(Webhook):
    secret: str


class WebhookList(Model):
    data: list[Webhook]


class RotatedSecret(Model):
    id: str
    secret: str


class DeliveryAttempt(Model):
    at: datetime
    status_code: int | None = None
    latency_ms: float | None = None
    error: str | None = None


class Delivery(Model):
    id: str
    webhook_id: str
    event_id: str
    event_type: EventType | str  # webhook.test too
    generation_id: str | None = None
    status: DeliveryStatus | str
    failure_reason: str | None = None
    attempts: list[DeliveryAttempt]
    next_attempt_at: datetime | None = None
    created_at: datetime
    updated_at: datetime


class DeliveryList(Model):
    data: list[Delivery]
    next_cursor: str | None = None


class Recovered(Model):
    requeued: int


class UsageTotals(Model):
    generations: int
    seconds: int  # asked for
    video_seconds: int  # made: completed generations only


class UsageRow(UsageTotals):
    date: str  # the UTC day, YYYY-MM-DD
    provider: OpenProvider
    status: OpenStatus


class KeyUsage(UsageTotals):
    api_key_id: str | None = None


class Usage(Model):
    start: datetime
    end: datetime
    api_key_id: str | None = None
    total: UsageTotals
    data: list[UsageRow]
    api_keys: list[KeyUsage]


class AuditActor(Model):
    type: AuditActorType | str
    id: str | None = None


class AuditTarget(Model):
    type: str
    id: str


class AuditEvent(Model):
    id: str
    type: AuditEventType | str
    actor: AuditActor
    target: AuditTarget
    data: dict[str, Any]
    request_id: str | None = None
    created_at: datetime


class AuditEventList(Model):
    data: list[AuditEvent]
    next_cursor: str | None = None


class EventSubject(Model):
    type: SubjectType | str
    id: str


class Event(Model):
    """Something that happened on the account, as its webhooks deliver it (``data``, exactly as delivered)."""

    id: str
    type: EventType | str  # webhook.test too, and types newer than this SDK
    subject: EventSubject
    data: dict[str, Any]
    created_at: datetime


class EventList(Model):
    data: list[Event]
    next_cursor: str | None = None


class FieldError(Model):
    field: str
    message: str
    code: str


class Problem(Model):
    """An ``application/problem+json`` answer (RFC 9457)."""

    type: str = "about:blank"
    title: str = ""
    status: int = 0
    detail: str | None = None
    instance: str | None = None
    errors: list[FieldError] = []


class WebhookEvent(Model):
    """A verified delivery's body: ``{"event", "timestamp", "data"}``."""

    event: str
    timestamp: datetime
    data: dict[str, Any]

    @property
    def generation(self) -> Generation | None:
        """The generation a ``video.*`` event is about (None for other events)."""
        if not self.event.startswith("video."):
            return None
        return Generation.model_validate(self.data)
