"""The values this SDK knows of each of the API's closed lists, in one place: the models, the resources' type
hints and ``vg``'s choices read them, and a test holds each to the served OpenAPI document's enumeration.

Enums stay open, as Stripe's and Svix's SDKs keep them: a newer server may send a value this SDK does not know
(a new provider, status, event type or error code), and a model keeps it as a plain string rather than
refusing the answer. So compare with the known values (``status == "completed"``) and keep a branch for the
rest; never assume a list here is the whole list."""

from __future__ import annotations

from typing import Literal, get_args

Status = Literal["queued", "processing", "completed", "failed"]
Provider = Literal["mock", "runway", "luma", "pika"]
# What an endpoint can subscribe to.
EventType = Literal[
    "video.completed",
    "video.failed",
    "video.processing",
    "video.progress",
    "video.deleted",
    "webhook.disabled",
    "account.budget_threshold",
    "batch.completed",
]
# What an event is about.
SubjectType = Literal["generation", "webhook", "account", "batch"]
ErrorCode = Literal[
    "provider_rejected",
    "content_policy",
    "provider_error",
    "provider_timeout",
    "deadline_exceeded",
    "provider_unavailable",
    "canceled",
    "image_unusable",
    "mock_failure",
]
QueueReason = Literal["account_concurrency", "provider_capacity", "provider"]
# How "auto" orders a generation's candidates (absent: the default order).
Sort = Literal["price", "speed"]
# A provider's breaker: closed takes work, half_open one probe at a time, open none for a while.
Breaker = Literal["closed", "half_open", "open"]
HealthState = Literal["operational", "degraded", "down"]
DeliveryStatus = Literal["pending", "succeeded", "failed"]
AuditEventType = Literal[
    "api_key.created",
    "api_key.revoked",
    "api_key.updated",
    "budget.updated",
    "budget.threshold_reached",
    "webhook.created",
    "webhook.updated",
    "webhook.deleted",
    "webhook.secret_rotated",
    "webhook.disabled",
    "webhook.recovery_requested",
    "delivery.retry_requested",
    "generation.deleted",
    "upload.deleted",
    "retention.updated",
]
AuditActorType = Literal["api_key", "operator", "system"]
# What an API key may do; each :write holds the :read of the same resource.
Scope = Literal[
    "generations:read",
    "generations:write",
    "webhooks:read",
    "webhooks:write",
    "events:read",
    "usage:read",
    "budgets:write",
    "audit:read",
    "keys:read",
    "keys:write",
]
BudgetName = Literal["daily_video_seconds", "monthly_video_seconds", "daily_cost", "monthly_cost"]
AspectRatio = Literal["16:9", "9:16", "1:1", "4:3", "3:4", "21:9", "9:21", "4:5", "5:4", "3:2", "2:3"]
Resolution = Literal["360p", "480p", "540p", "720p", "1080p", "4k"]
Priority = Literal["high", "normal", "low"]
ImageType = Literal["image/png", "image/jpeg", "image/webp"]

TERMINAL: frozenset[str] = frozenset({"completed", "failed"})


def known(values: object) -> tuple[str, ...]:
    """The values of one of the literal types above, in order (``known(Provider)``)."""
    return tuple(str(value) for value in get_args(values))
