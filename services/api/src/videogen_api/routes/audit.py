"""The audit trail: ``GET /v1/audit-events`` (newest first, paged, filterable), and ``record_change``, which
the handlers that change an account's webhooks call after the change (see videogen_common.audit)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Annotated, Any

from aiohttp import web
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from videogen_api import state
from videogen_api.declare import Endpoint
from videogen_api.filters import (
    CreatedAfter,
    CreatedBefore,
    choices,
    choices_description,
    choices_param,
)
from videogen_api.middleware import REQUEST_ID_KEY, account_of, api_key_id_of
from videogen_api.paging import DEFAULT_LIMIT, Cursor, Limit, page_from
from videogen_api.query import Param, once, parse_query
from videogen_api.schemas.audit import AuditEventList
from videogen_api.serialize import json_response
from videogen_common import audit
from videogen_common.audit import AuditActorType, AuditEventType
from videogen_common.clock import isoformat
from videogen_common.records.audit_event import AuditEvent
from videogen_common.repositories.audit import AuditFilter, AuditRepository
from videogen_common.scopes import Scope

routes = web.RouteTableDef()

Doc = dict[str, Any]


async def record_change(
    request: web.Request,
    type: AuditEventType,
    target: tuple[str, str],
    data: Mapping[str, Any] | None = None,
) -> None:
    """Record that the request's API key made this change to the account's ``target`` (type, id)."""
    app = request.app
    event = audit.audit_event(
        account_id=account_of(request),
        type=type,
        actor=(AuditActorType.API_KEY, api_key_id_of(request)),
        target=target,
        now=app[state.CLOCK].now(),
        data=data,
        request_id=request[REQUEST_ID_KEY],
    )
    await audit.record(app[state.STORE], event)


def audit_event_view(event: AuditEvent) -> Doc:
    return {
        "id": event.id,
        "type": event.type,
        "actor": {"type": event.actor_type, "id": event.actor_id},
        "target": {"type": event.target_type, "id": event.target_id},
        "data": dict(event.data),
        "request_id": event.request_id,
        "created_at": isoformat(event.created_at),
    }


class AuditListing(BaseModel):
    """GET /v1/audit-events's query string: type (any of, repeated or comma-separated), created_after,
    created_before, target_id, limit and cursor."""

    model_config = ConfigDict(frozen=True, populate_by_name=True)

    types: Annotated[
        tuple[AuditEventType, ...],
        BeforeValidator(choices(AuditEventType)),
        choices_param("AuditEventType", AuditEventType),
    ] = Field((), alias="type", description=choices_description("Only these types of change"))
    created_after: CreatedAfter = None
    created_before: CreatedBefore = None
    target_id: Annotated[str | None, BeforeValidator(once), Param("TargetId", {"type": "string"})] = Field(
        None, description="Only changes to this key, webhook endpoint or delivery (its id)."
    )
    limit: Limit = DEFAULT_LIMIT
    cursor: Cursor = None

    def to_filter(self) -> AuditFilter:
        """What the listing keeps, for the repository."""
        return AuditFilter(
            types=[t.value for t in self.types],
            target_id=self.target_id,
            created_after=self.created_after,
            created_before=self.created_before,
        )


def _position(event: AuditEvent) -> tuple[datetime, str]:
    return event.created_at, event.id


@routes.get("/v1/audit-events")
@Endpoint(
    operation_id="listAuditEvents",
    scope=Scope.AUDIT_READ,
    tag="Account",
    summary="List the account's audit events",
    description=(
        "Every change to the account's API keys and webhook endpoints, newest first: what changed, who made "
        "it (one of your API keys, an operator at the command line, or the system, e.g. the notifier "
        "disabling an endpoint that answered 410), when, and the request that made it. Never a secret."
    ),
    status=200,
    answer="A page of audit events.",
    model=AuditEventList,
    query=AuditListing,
    errors={422: "Invalid"},
)
async def list_audit_events(request: web.Request) -> web.Response:
    """The account's audit events, newest first, ``{"data": [...], "next_cursor": null | string}``."""
    listing = parse_query(AuditListing, request.query)
    account, kept = account_of(request), listing.to_filter()
    events = AuditRepository(request.app[state.STORE])
    return json_response(
        await page_from(
            lambda position, limit: events.page_of_account(account, kept, position, limit),
            listing,
            audit_event_view,
            _position,
        )
    )
