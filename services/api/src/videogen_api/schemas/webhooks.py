"""A webhook endpoint: what creating (``WebhookCreate``) and changing (``WebhookUpdate``) one takes, and the
endpoint as answered (its signing secret only once, on creation and rotation)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from videogen_api.schemas.common import HTTP_URL, Body, Moment, absent_not_null, check_http_url
from videogen_api.schemas.events import EventType

WebhookUrl = Annotated[str, Field(min_length=1, max_length=2048, json_schema_extra={"pattern": HTTP_URL})]


WebhookEvents = Annotated[list[EventType], Field(min_length=1, json_schema_extra={"uniqueItems": True})]


class WebhookCreate(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    url: WebhookUrl
    events: WebhookEvents

    @field_validator("url")
    @classmethod
    def _absolute_http(cls, value: str) -> str:
        return check_http_url(value)

    @field_validator("events")
    @classmethod
    def _unique(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("must not repeat an event type")
        return value


class WebhookUpdate(BaseModel):
    """PATCH /v1/webhooks/{id}: any of url, events and active; each is checked exactly as on creation, and an
    explicit null is refused rather than read as "unchanged"."""

    model_config = ConfigDict(
        extra="forbid", strict=True, frozen=True, json_schema_extra={"minProperties": 1}
    )

    # None only means "not sent": the validators refuse a null, and the document offers none.
    url: WebhookUrl | None = Field(default=None, json_schema_extra=absent_not_null)
    events: WebhookEvents | None = Field(default=None, json_schema_extra=absent_not_null)
    active: bool | None = Field(default=None, json_schema_extra=absent_not_null)

    @field_validator("url")
    @classmethod
    def _url(cls, value: str | None) -> str:
        if value is None:
            raise ValueError("must not be null")
        return WebhookCreate._absolute_http(value)

    @field_validator("events")
    @classmethod
    def _events(cls, value: list[str] | None) -> list[str]:
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


WebhookId = Annotated[str, Field(pattern=r"^wh_[0-9a-z]{26}$")]


Secret = Annotated[
    str,
    Field(
        pattern=r"^whsec_[A-Za-z0-9+/]{43}=$",
        description="whsec_ + base64 of 32 random bytes: the HMAC key is this whole string as issued.",
    ),
]


class Webhook(Body):
    """A webhook endpoint. Its signing secret is never part of it."""

    id: WebhookId
    url: str
    events: list[EventType]
    active: bool
    disabled_reason: Annotated[str | None, Field(description="Why it was disabled; null while active.")]
    created_at: Moment
    updated_at: Moment


class WebhookCreated(Webhook):
    """A new webhook endpoint with its signing secret, shown only this once."""

    secret: Secret


class WebhookList(Body):
    """All of the account's webhook endpoints, oldest first."""

    data: list[Webhook]


class RotatedSecret(Body):
    """The new signing secret, shown only this once."""

    id: WebhookId
    secret: Secret
