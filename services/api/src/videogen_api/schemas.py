"""Request bodies, validated with pydantic: the same types later generate the OpenAPI document."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, TypeVar
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from videogen_api.problems import Problem, invalid, malformed_json
from videogen_common.domain import MAX_DURATION_S, MIN_DURATION_S, EventType, Provider


class GenerateRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    prompt: Annotated[str, Field(min_length=1, description="Text description of the video.")]
    provider: Provider
    duration: Annotated[int, Field(ge=MIN_DURATION_S, le=MAX_DURATION_S, description="Seconds, 3 to 10.")]

    @field_validator("prompt")
    @classmethod
    def _not_blank(cls, value: str, info: ValidationInfo) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        limit = (info.context or {}).get("prompt_max_chars")
        if limit is not None and len(value) > limit:
            raise ValueError(f"must be at most {limit} characters")
        return value


class WebhookCreate(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    url: Annotated[str, Field(min_length=1, max_length=2048)]
    events: Annotated[list[EventType], Field(min_length=1)]

    @field_validator("url")
    @classmethod
    def _absolute_http(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("must be an absolute http or https URL")
        if parts.username or parts.password:
            raise ValueError("must not carry credentials")
        return value

    @field_validator("events")
    @classmethod
    def _unique(cls, value: list[EventType]) -> list[EventType]:
        if len(set(value)) != len(value):
            raise ValueError("must not repeat an event type")
        return value


class WebhookUpdate(BaseModel):
    """PATCH /v1/webhooks/{id}: any of url, events and active; each is checked exactly as on creation, and an
    explicit null is refused rather than read as "unchanged"."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    url: Annotated[str, Field(min_length=1, max_length=2048)] | None = None
    events: Annotated[list[EventType], Field(min_length=1)] | None = None
    active: bool | None = None

    @field_validator("url")
    @classmethod
    def _url(cls, value: str | None) -> str:
        if value is None:
            raise ValueError("must not be null")
        return WebhookCreate._absolute_http(value)

    @field_validator("events")
    @classmethod
    def _events(cls, value: list[EventType] | None) -> list[EventType]:
        if value is None:
            raise ValueError("must not be null")
        return WebhookCreate._unique(value)

    @field_validator("active")
    @classmethod
    def _active(cls, value: bool | None) -> bool:
        if value is None:
            raise ValueError("must not be null")
        return value

    @model_validator(mode="after")
    def _not_empty(self) -> WebhookUpdate:
        if not self.model_fields_set:
            raise ValueError("must set at least one of url, events, active")
        return self


def parse_timestamp(value: str) -> datetime:
    """An ISO 8601 timestamp with a time zone (``Z`` or an offset), as an aware UTC datetime."""
    try:
        moment = datetime.fromisoformat(value)
        if moment.utcoffset() is not None:
            return moment.astimezone(UTC)
    except (ValueError, OverflowError):
        raise ValueError(
            "must be an ISO 8601 timestamp with a time zone, e.g. 2026-11-21T08:47:00Z"
        ) from None
    raise ValueError("must carry a time zone (Z or an offset such as +02:00)")


def _timestamp(value: Any) -> datetime:
    if not isinstance(value, str):
        raise ValueError("must be an ISO 8601 timestamp string, e.g. 2026-11-21T08:47:00Z")
    return parse_timestamp(value)


Timestamp = Annotated[datetime, BeforeValidator(_timestamp)]


class RecoverRequest(BaseModel):
    """POST /v1/webhooks/{id}/recover: re-queue the endpoint's failed deliveries created since then."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    since: Timestamp


def _field_errors(exc: ValidationError) -> list[dict[str, str]]:
    errors = []
    for err in exc.errors(include_url=False):
        field = ".".join(str(p) for p in err["loc"]) or "body"
        message = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            message = "unknown field"
        errors.append({"field": field, "message": message, "code": err["type"]})
    return errors


M = TypeVar("M", bound=BaseModel)


def parse_body(model: type[M], raw: bytes, **context: Any) -> M:
    """Parse and validate a JSON body: malformed JSON → 400, a body that isn't an object or has bad fields
    → 422 with one entry per failing field."""
    try:
        return model.model_validate_json(raw, context=context or None)
    except ValidationError as exc:
        errors = _field_errors(exc)
        if any(e["code"] == "json_invalid" for e in errors):
            raise malformed_json(next(e["message"] for e in errors if e["code"] == "json_invalid")) from None
        if any(e["code"] == "model_type" for e in errors):
            raise Problem(
                422,
                "validation-error",
                "Invalid request",
                "the body must be a JSON object",
                errors=[{"field": "body", "message": "must be a JSON object", "code": "model_type"}],
            ) from None
        raise invalid(errors) from None
