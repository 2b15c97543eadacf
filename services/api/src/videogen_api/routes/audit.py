"""The audit trail: ``GET /v1/audit-events`` (newest first, paged, filterable), and ``record_change``, which
the handlers that change an account's webhooks call after the change (see videogen_common.audit)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from aiohttp import web

from videogen_api import state
from videogen_api.filters import choices, created_bounds, created_clause
from videogen_api.middleware import REQUEST_ID_KEY, account_of, api_key_id_of
from videogen_api.paging import page_from
from videogen_api.problems import invalid
from videogen_api.serialize import json_response
from videogen_common import audit
from videogen_common.audit import AuditActorType, AuditEventType
from videogen_common.clock import isoformat
from videogen_common.records.audit_event import AuditEvent
from videogen_common.repositories.audit import AuditRepository

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


def _position(event: AuditEvent) -> tuple[datetime, str]:
    return event.created_at, event.id


def _filters(request: web.Request) -> Doc:
    """type (any of, repeated or comma-separated), target_id, created_after, created_before."""
    query = request.query
    errors: list[dict[str, str]] = []
    types = choices(query, "type", AuditEventType, errors)
    after, before = created_bounds(query, errors)
    targets = query.getall("target_id", [])
    if len(targets) > 1:
        errors.append({"field": "target_id", "message": "give it once", "code": "repeated"})
    if errors:
        raise invalid(errors)
    clause: Doc = created_clause(after, before)
    if types:
        clause["type"] = {"$in": [t.value for t in types]}
    if targets:
        clause["target.id"] = targets[0]
    return clause


@routes.get("/v1/audit-events")
async def list_audit_events(request: web.Request) -> web.Response:
    """The account's audit events, newest first, ``{"data": [...], "next_cursor": null | string}``."""
    account, filters = account_of(request), _filters(request)
    events = AuditRepository(request.app[state.STORE])
    return json_response(
        await page_from(
            lambda position, limit: events.page_of_account(account, filters, position, limit),
            request.query,
            audit_event_view,
            _position,
        )
    )
