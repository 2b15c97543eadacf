"""The account's events (``GET /v1/events``), and the event types an endpoint may subscribe to
(``EventType``), read from the catalog."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.config import JsonDict
from pydantic.types import JsonValue
from pydantic_core import CoreSchema, PydanticCustomError, core_schema

from videogen_api.schemas.common import CATALOG, Body, Moment, NextCursor
from videogen_common.event_types import EVENT_TYPES, SubjectType


class _Subscribable:
    """An event type an endpoint may subscribe to, as the catalog (``EVENT_TYPES``) defines them when a value
    is checked and when the OpenAPI document is built, not when this module is imported: a type defined since
    is one. The document names the list once, as its ``EventType`` component (``openapi.catalog_schemas``,
    put in where the schema says ``x-catalog``)."""

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_after_validator_function(cls._check, core_schema.str_schema())

    @classmethod
    def __get_pydantic_json_schema__(cls, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonDict:
        names: list[JsonValue] = list(EVENT_TYPES.subscribable())
        return {"type": "string", "enum": names, CATALOG: "EventType"}

    @staticmethod
    def _check(value: str) -> str:
        names = EVENT_TYPES.subscribable()
        if value not in names:
            expected = ", ".join(repr(name) for name in names)
            raise PydanticCustomError("enum", "Input should be one of {expected}", {"expected": expected})
        return value


EventType = Annotated[str, _Subscribable]


class EventSubject(Body):
    """What an event is about: a generation, a webhook endpoint, or the account itself."""

    type: SubjectType
    id: str


class Event(Body):
    """Something that happened on the account, as its webhooks deliver it."""

    id: Annotated[str, Field(pattern=r"^evt_[0-9a-z_]+$", description="Also its deliveries' event_id.")]
    type: Annotated[str, Field(description="An EventType, or webhook.test.")]
    subject: EventSubject
    data: Annotated[dict[str, Any], Field(description="The data of each of its deliveries, as delivered.")]
    created_at: Annotated[Moment, Field(description="When it happened: its deliveries' timestamp.")]


class EventList(Body):
    """A page of the account's events, newest first."""

    data: list[Event]
    next_cursor: NextCursor
