"""The account's event log: ``GET /v1/events`` (newest first, paged, filterable by type and subject) and
``GET /v1/events/{id}``. An event of every owed type (see ``videogen_common.event_types``) is recorded when
the notifier takes it in (a test event, by the api itself); it is what the webhooks deliver, and its
deliveries carry its id as their ``event_id``.

Not to be confused with ``routes.events``: ``GET /v1/generations/{id}/events`` streams one generation's
changes as Server-Sent Events."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any

from aiohttp import web
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from videogen_api import state
from videogen_api.declare import EVENT_ID, Endpoint
from videogen_api.filters import CreatedAfter, CreatedBefore, choices_description
from videogen_api.middleware import account_of
from videogen_api.paging import DEFAULT_LIMIT, Cursor, Limit, page_from
from videogen_api.problems import not_found
from videogen_api.query import Param, once, parse_query, refused
from videogen_api.schemas.events import Event as EventModel
from videogen_api.schemas.events import EventList
from videogen_api.serialize import json_response
from videogen_common.event_types import EVENT_TYPES
from videogen_common.records.event import Event
from videogen_common.repositories.events import EventFilter, EventRepository
from videogen_common.scopes import Scope

routes = web.RouteTableDef()

Doc = dict[str, Any]

# Any well-formed type may be asked for, not only those defined now: asking for one never sent finds nothing.
_TYPE = r"[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)+"
_ONE_TYPE = re.compile(_TYPE)
_TYPES = rf"^[ \t]*{_TYPE}[ \t]*(?:,[ \t]*{_TYPE}[ \t]*)*$"
MAX_TYPE_CHARS = 64
# At most this many types in one listing, and this long a subject id: a query string stays well within what
# servers and proxies take (8 KB).
MAX_TYPES = 10
MAX_SUBJECT_ID_CHARS = 64


def _types(values: Any) -> tuple[str, ...]:
    if not isinstance(values, list):  # made in code, not parsed
        return tuple(values)
    chosen: dict[str, None] = {}
    for raw in values:
        for value in (v.strip() for v in raw.split(",")):
            if len(value) > MAX_TYPE_CHARS or not _ONE_TYPE.fullmatch(value):
                such_as = ", ".join(EVENT_TYPES.names())
                raise refused("event_type", f"{value!r} is not an event type such as {such_as}")
            chosen[value] = None
    if len(chosen) > MAX_TYPES:
        raise refused("too_many", f"at most {MAX_TYPES} event types")
    return tuple(chosen)


def _subject_id(values: Any) -> str:
    subject_id = once(values)
    if len(subject_id) > MAX_SUBJECT_ID_CHARS:
        raise refused("too_long", f"must be at most {MAX_SUBJECT_ID_CHARS} characters")
    return subject_id


class EventListing(BaseModel):
    """GET /v1/events's query string: type (any of, repeated or comma-separated), subject_id, created_after,
    created_before, limit and cursor."""

    model_config = ConfigDict(frozen=True, populate_by_name=True)

    types: Annotated[
        tuple[str, ...],
        BeforeValidator(_types),
        Param(
            "EventTypes",
            {
                "type": "array",
                "maxItems": MAX_TYPES,
                "items": {"type": "string", "maxLength": MAX_TYPE_CHARS, "pattern": _TYPES},
            },
            style="form",
        ),
    ] = Field((), alias="type", description=choices_description("Only events of these types"))
    subject_id: Annotated[
        str | None,
        BeforeValidator(_subject_id),
        Param("SubjectId", {"type": "string", "maxLength": MAX_SUBJECT_ID_CHARS}),
    ] = Field(None, description="Only events about this generation, webhook endpoint or account (its id).")
    created_after: CreatedAfter = None
    created_before: CreatedBefore = None
    limit: Limit = DEFAULT_LIMIT
    cursor: Cursor = None

    def to_filter(self) -> EventFilter:
        """What the listing keeps, for the repository."""
        return EventFilter(
            types=self.types,
            subject_id=self.subject_id,
            created_after=self.created_after,
            created_before=self.created_before,
        )


def _position(event: Event) -> tuple[datetime, str]:
    return event.created_at, event.id


def event_view(event: Event) -> Doc:
    return event.public_view()


@routes.get("/v1/events")
@Endpoint(
    operation_id="listEvents",
    scope=Scope.EVENTS_READ,
    tag="Events",
    summary="List the account's events",
    description=(
        "What happened on the account, newest first, as its webhooks deliver it: each generation that "
        "completed or failed, each endpoint the service disabled, each test event. The best-effort "
        "video.processing and video.progress are not kept."
    ),
    status=200,
    answer="A page of events.",
    model=EventList,
    query=EventListing,
    errors={422: "Invalid"},
)
async def list_events(request: web.Request) -> web.Response:
    """The account's events, newest first, ``{"data": [...], "next_cursor": null | string}``."""
    listing = parse_query(EventListing, request.query)
    account, kept = account_of(request), listing.to_filter()
    events = EventRepository(request.app[state.STORE])
    return json_response(
        await page_from(
            lambda position, limit: events.page_of_account(account, kept, position, limit),
            listing,
            event_view,
            _position,
        )
    )


@routes.get("/v1/events/{id}")
@Endpoint(
    operation_id="getEvent",
    scope=Scope.EVENTS_READ,
    tag="Events",
    summary="Read an event",
    description="What happened, to what, and the data each of its deliveries carried.",
    status=200,
    answer="The event.",
    model=EventModel,
    parameters=(EVENT_ID,),
    errors={404: "NotFound"},
)
async def get_event(request: web.Request) -> web.Response:
    event_id = request.match_info["id"]
    event = await EventRepository(request.app[state.STORE]).owned(event_id, account_of(request))
    if event is None:
        raise not_found(f"no event {event_id!r}")
    return json_response(event_view(event))
