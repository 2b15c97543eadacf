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
    Breaker,
    BudgetName,
    DeliveryStatus,
    ErrorCode,
    EventType,
    HealthState,
    ImageType,
    Priority,
    Provider,
    QueueReason,
    Resolution,
    Scope,
    Sort,
    Status,
    SubjectType,
)

# A value of one of these may be one this SDK does not know (a newer server's): it is kept as a string.
OpenStatus = Status | str
OpenProvider = Provider | str
OpenAspectRatio = AspectRatio | str
OpenResolution = Resolution | str
OpenScope = Scope | str
OpenBudgetName = BudgetName | str


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


class RouteCandidate(Model):
    provider: OpenProvider
    model: str | None = None  # the model asked of it; None: its default
    reason: str  # why it is there: its health, capacity, price and speed


class GenerationRoute(Model):
    """Where a generation may go and why (when its request asked for routing)."""

    requested: str  # the provider asked for, or "auto"
    sort: Sort | str | None = None
    fallback_on_failure: bool = False
    candidates: list[RouteCandidate]  # in the order they are tried
    skipped: list[RouteCandidate] = []  # not enabled, or cannot make what was asked
    reason: str | None = None  # why it is at its provider now


class GenerationAttempt(Model):
    """One try at a provider; ``cost`` in USD (0 if no task was made; None while under way or unknown)."""

    provider: OpenProvider
    model: str | None = None  # the model it asked for
    started_at: datetime
    ended_at: datetime | None = None
    error_code: ErrorCode | str | None = None
    cost: float | None = None


class RoutingOptions(Model):
    """How "auto" orders candidates: ``sort`` price or speed (absent: the default order)."""

    sort: Sort | str | None = None


class Generation(Model):
    id: str
    status: OpenStatus
    prompt: str
    provider: OpenProvider
    # The model asked of its provider (named, or its default); None for generations made before models.
    model: str | None = None
    duration: int
    video_url: str | None = None
    thumbnail_url: str | None = None
    error: GenerationError | None = None
    progress: int | None = None  # 0-100 while processing, when the provider says
    queue_reason: QueueReason | str | None = None
    # While it waits for capacity, and only when read alone: its place among the account's generations
    # waiting at that provider (1: the next of yours to start).
    queue_position: int | None = None
    priority: Priority | str = "normal"
    timeline: list[TimelineStep] = []
    # As asked; None: the provider's (or the deployment's) default.
    aspect_ratio: OpenAspectRatio | None = None
    resolution: OpenResolution | None = None
    seed: int | None = None
    negative_prompt: str | None = None
    metadata: dict[str, str] = {}
    image: GenerationImage | None = None
    route: GenerationRoute | None = None  # its candidates and why, when the request asked for routing
    attempts: list[GenerationAttempt] = []  # every try at a provider, oldest first
    estimated_cost: float | None = None  # USD, its first candidate's price, at creation
    cost: float | None = None  # USD its providers charged, once finished
    created_at: datetime
    updated_at: datetime
    # Deleted (``generations.delete``): a tombstone, its prompt, metadata, image and links erased, its media
    # gone; status, provider, duration and timestamps kept.
    deleted: bool = False
    deleted_at: datetime | None = None

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


class ProviderKeyCapacity(Model):
    """One of a provider's keys: its limit (None: none of ours), the limit used now, what runs on it."""

    name: str | None = None
    limit: int | None = None
    effective_limit: int | None = None
    running: int
    paused_until: datetime | None = None


class ProviderCapacity(Model):
    """What the whole deployment runs at a provider at once, and how many generations wait for it."""

    limit: int | None = None
    effective_limit: int | None = None
    running: int
    waiting: int
    keys: list[ProviderKeyCapacity] = []


class ProviderHealth(Model):
    """How a provider is doing: ``down`` while its breaker is open (routing skips it)."""

    state: HealthState | str
    breaker: Breaker | str
    success_rate: float | None = None  # of its recent attempts
    p50_seconds: float | None = None  # median time to finish
    samples: int = 0


class ProviderPrice(Model):
    model: str
    resolution: OpenResolution | None = None  # None: any
    usd_per_second: float


class ModelPrice(Model):
    resolution: OpenResolution | None = None  # None: any
    usd_per_second: float


class ModelInfo(Model):
    """One model of one provider (``client.models.list()``): what it makes, what it takes, its price."""

    provider: OpenProvider
    id: str  # what ``generations.create(model=...)`` names
    default: bool = False  # what a request to its provider naming no model gets
    enabled: bool = True  # whether this deployment offers its provider
    description: str = ""
    durations: list[int] = []
    aspect_ratios: list[OpenAspectRatio] = []
    resolutions: list[OpenResolution] = []
    default_resolution: OpenResolution
    text_to_video: bool = True
    image_to_video: bool = False
    seed: bool = False
    negative_prompt: bool = False
    prices: list[ModelPrice] = []


class ModelList(Model):
    data: list[ModelInfo]


class ProviderInfo(Model):
    id: OpenProvider
    enabled: bool  # whether this deployment offers it
    capabilities: ProviderCapabilities
    capacity: ProviderCapacity | None = None  # None until an orchestrator has started with it
    health: ProviderHealth | None = None  # None when not enabled
    model: str | None = None  # its default model
    models: list[ModelInfo] = []  # every model it serves
    prices: list[ProviderPrice] = []


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
    cost: float = 0.0  # USD their providers charged


class ModelCost(Model):
    provider: OpenProvider
    model: str | None = None  # None: tries recorded before models were
    attempts: int
    cost: float


class ProviderCost(Model):
    """What one provider charged for the tries made there."""

    provider: OpenProvider
    attempts: int
    cost: float


class UsageRow(UsageTotals):
    date: str  # the UTC day, YYYY-MM-DD
    provider: OpenProvider
    status: OpenStatus


class KeyUsage(UsageTotals):
    api_key_id: str | None = None


class BudgetRemaining(Model):
    """One budget of the account (``api_key_id`` None) or of a key, as it stands: what is left until when."""

    api_key_id: str | None = None
    budget: OpenBudgetName
    limit: float  # seconds of video; US dollars for a cost budget
    used: float
    remaining: float
    period_start: datetime
    resets_at: datetime


class Usage(Model):
    start: datetime
    end: datetime
    api_key_id: str | None = None
    total: UsageTotals
    data: list[UsageRow]
    api_keys: list[KeyUsage]
    providers: list[ProviderCost] = []  # cost by provider, every try counted
    models: list[ModelCost] = []  # cost by provider and model
    budgets: list[BudgetRemaining] = []  # what is left of the account's and the key's budgets


class Budgets(Model):
    """The account's budgets (None: no limit), the threshold announced once per period, what is left."""

    daily_video_seconds: int | None = None
    monthly_video_seconds: int | None = None
    daily_cost: float | None = None  # US dollars
    monthly_cost: float | None = None
    threshold_percent: int
    remaining: list[BudgetRemaining]


class ApiKeyBudgets(Model):
    """A key's own budgets, on top of the account's (None: no limit); also what ``budgets=`` takes."""

    daily_video_seconds: int | None = None
    monthly_video_seconds: int | None = None
    daily_cost: float | None = None  # US dollars
    monthly_cost: float | None = None


class ApiKey(Model):
    """One of the account's keys: never its secret, only its prefix and last four characters."""

    id: str
    name: str | None = None
    scopes: list[OpenScope]
    prefix: str
    last_four: str | None = None
    budgets: ApiKeyBudgets
    created_at: datetime
    last_used_at: datetime | None = None  # to the minute
    expires_at: datetime | None = None
    revoked_at: datetime | None = None


class ApiKeyCreated(ApiKey):
    secret: str  # the key itself: shown this once


class ApiKeyList(Model):
    data: list[ApiKey]
    next_cursor: str | None = None


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


class ScopeProblem(Problem):
    """403 insufficient-scope: ``scope`` is what the request needed."""

    scope: OpenScope


class BudgetProblem(Problem):
    """429 budget-exceeded: which budget (the account's, or ``api_key_id``'s), what is left, until when."""

    budget: OpenBudgetName
    api_key_id: str | None = None
    limit: float  # seconds of video; US dollars for a cost budget
    used: float
    remaining: float
    requested: float
    resets_at: datetime


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
