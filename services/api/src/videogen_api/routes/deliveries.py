"""The delivery log and what re-queues it: list an endpoint's deliveries, read one, retry one, recover all
failed since a time, and send an endpoint a ``webhook.test`` event.

The api only writes delivery records; the notifier's sweeper sends every pending one whose
``next_attempt_at`` is due (within about a second). A re-queued delivery keeps its id (so its ``webhook-id``)
and its attempt history, and the notifier's schedule continues from the attempts already made."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

from aiohttp import web
from multidict import MultiMapping

from videogen_api import state
from videogen_api.filters import ceil_ms, created_bounds, created_clause, single
from videogen_api.middleware import REQUEST_ID_KEY, account_of
from videogen_api.paging import page_from
from videogen_api.problems import Problem, conflict, invalid, not_found
from videogen_api.routes.audit import record_change
from videogen_api.routes.bodies import json_body
from videogen_api.routes.webhooks import owned_webhook
from videogen_api.schemas import RecoverRequest, parse_body
from videogen_api.serialize import json_response
from videogen_common.audit import AuditEventType
from videogen_common.clock import isoformat
from videogen_common.deliveries import PENDING, STATUSES, delivery_body, pending_delivery
from videogen_common.domain import EventType
from videogen_common.ids import new_id
from videogen_common.records.delivery import Delivery
from videogen_common.records.webhook import WebhookEndpoint
from videogen_common.repositories.deliveries import DeliveryRepository
from videogen_common.repositories.webhooks import WebhookRepository
from videogen_common.tracing import current_traceparent

routes = web.RouteTableDef()

Doc = dict[str, Any]

TEST_EVENT = "webhook.test"
# The event_type filter takes any well-formed type, not only these: the notifier may send others (such as
# ``webhook.disabled`` notices), and filtering by a type never sent simply finds nothing.
KNOWN_EVENT_TYPES = (*(e.value for e in EventType), TEST_EVENT)
_EVENT_TYPE = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$")


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else isoformat(moment)


def delivery_view(delivery: Delivery) -> Doc:
    """A delivery as clients see it: its state and every attempt, without the body or the trace id."""
    return {
        "id": delivery.id,
        "webhook_id": delivery.webhook_id,
        "event_id": delivery.event_id,
        "event_type": delivery.event_type,
        "generation_id": delivery.generation_id,
        "status": delivery.status,
        "failure_reason": delivery.failure_reason,
        "attempts": [
            {
                "at": isoformat(a.at),
                "status_code": a.status_code,
                "latency_ms": a.latency_ms,
                "error": a.error,
            }
            for a in delivery.attempts
        ],
        "next_attempt_at": _iso(delivery.next_attempt_at),
        "created_at": isoformat(delivery.created_at),
        "updated_at": isoformat(delivery.updated_at),
    }


def _position(delivery: Delivery) -> tuple[datetime, str]:
    return delivery.created_at, delivery.id


def _require_active(webhook: WebhookEndpoint | None) -> None:
    """Re-queueing to an endpoint the notifier would refuse at once is answered here instead."""
    if webhook is None:
        raise conflict("its webhook endpoint was deleted", slug="endpoint-deleted", title="Endpoint deleted")
    if not webhook.active:
        raise conflict(
            f'webhook {webhook.id!r} is disabled; re-enable it with PATCH {{"active": true}} first',
            slug="endpoint-disabled",
            title="Endpoint disabled",
        )


def _list_filters(query: MultiMapping[str]) -> Doc:
    """status, event_type, created_after and created_before (ISO 8601 with a time zone; both bounds
    exclusive) as a store query; every bad parameter is reported at once, in one 422."""
    errors: list[dict[str, str]] = []
    clause: Doc = {}
    status = single(query, "status", errors)
    if status is not None:
        if status in STATUSES:
            clause["status"] = status
        else:
            errors.append(
                {
                    "field": "status",
                    "message": f"{status!r} is not one of {', '.join(STATUSES)}",
                    "code": "enum",
                }
            )
    event_type = single(query, "event_type", errors)
    if event_type is not None:
        if len(event_type) <= 64 and _EVENT_TYPE.fullmatch(event_type):
            clause["event_type"] = event_type
        else:
            errors.append(
                {
                    "field": "event_type",
                    "message": f"must be an event type such as {', '.join(KNOWN_EVENT_TYPES)}",
                    "code": "event_type",
                }
            )
    after, before = created_bounds(query, errors)
    if errors:
        raise invalid(errors)
    return {**clause, **created_clause(after, before)}


@routes.get("/v1/webhooks/{id}/deliveries")
async def list_deliveries(request: web.Request) -> web.Response:
    """One endpoint's deliveries, newest first, ``{"data": [...], "next_cursor": null | string}``."""
    webhook = await owned_webhook(request, request.match_info["id"])
    filters = _list_filters(request.query)
    account = account_of(request)
    deliveries = DeliveryRepository(request.app[state.STORE])
    return json_response(
        await page_from(
            lambda position, limit: deliveries.page_of_endpoint(
                webhook.id, account, filters, position, limit
            ),
            request.query,
            delivery_view,
            _position,
        )
    )


async def _owned_delivery(request: web.Request, delivery_id: str) -> Delivery:
    delivery = await DeliveryRepository(request.app[state.STORE]).owned(delivery_id, account_of(request))
    if delivery is None:
        raise not_found(f"no delivery {delivery_id!r}")
    return delivery


@routes.get("/v1/deliveries/{id}")
async def get_delivery(request: web.Request) -> web.Response:
    return json_response(delivery_view(await _owned_delivery(request, request.match_info["id"])))


def _already_pending(delivery_id: str) -> Problem:
    return conflict(
        f"delivery {delivery_id!r} is already pending; the notifier will attempt it",
        slug="delivery-pending",
        title="Delivery already pending",
    )


@routes.post("/v1/deliveries/{id}/retry")
async def retry_delivery(request: web.Request) -> web.Response:
    """Send a succeeded or failed delivery again, now, with the same id and body."""
    app = request.app
    delivery_id = request.match_info["id"]
    account = account_of(request)
    delivery = await _owned_delivery(request, delivery_id)
    if delivery.status == PENDING:
        raise _already_pending(delivery_id)
    store = app[state.STORE]
    _require_active(await WebhookRepository(store).owned(delivery.webhook_id, account))
    updated = await DeliveryRepository(store).requeue_finished(delivery_id, account, app[state.CLOCK].now())
    if updated is None:  # re-queued by a concurrent request
        raise _already_pending(delivery_id)
    await record_change(
        request,
        AuditEventType.DELIVERY_RETRY_REQUESTED,
        ("delivery", delivery_id),
        {"webhook_id": delivery.webhook_id, "event_type": delivery.event_type},
    )
    return json_response(delivery_view(updated), status=202)


def _window(seconds: float) -> str:
    days, rest = divmod(seconds, 86400)
    if rest:
        return f"{seconds:g} seconds"
    return "day" if days == 1 else f"{int(days)} days"


@routes.post("/v1/webhooks/{id}/recover")
async def recover_deliveries(request: web.Request) -> web.Response:
    """Re-queue every failed delivery of the endpoint created at or after ``since``."""
    app = request.app
    settings = app[state.SETTINGS]
    body = parse_body(RecoverRequest, await json_body(request))
    webhook = await owned_webhook(request, request.match_info["id"])
    now = app[state.CLOCK].now()
    window = settings.webhook_recover_window_seconds
    if body.since > now:
        raise invalid([{"field": "since", "message": "must not be in the future", "code": "future"}])
    if body.since < now - timedelta(seconds=window):
        raise invalid(
            [{"field": "since", "message": f"must be within the last {_window(window)}", "code": "too_old"}]
        )
    _require_active(webhook)
    requeued = await DeliveryRepository(app[state.STORE]).requeue_failed_since(
        webhook.id, account_of(request), ceil_ms(body.since), now
    )
    await record_change(
        request,
        AuditEventType.WEBHOOK_RECOVERY_REQUESTED,
        ("webhook", webhook.id),
        {"since": isoformat(body.since), "requeued": requeued},
    )
    return json_response({"requeued": requeued}, status=202)


@routes.post("/v1/webhooks/{id}/test")
async def send_test_event(request: web.Request) -> web.Response:
    """Create a ``webhook.test`` delivery to the endpoint (whatever events it subscribes to); the notifier
    sends it, signed like any other, within about a second."""
    app = request.app
    webhook = await owned_webhook(request, request.match_info["id"])
    _require_active(webhook)
    now = app[state.CLOCK].now()
    delivery = pending_delivery(
        event_id=new_id("evt_test", now),
        event_type=TEST_EVENT,
        webhook_id=webhook.id,
        account_id=webhook.account_id,
        body=delivery_body(TEST_EVENT, isoformat(now), {"webhook_id": webhook.id}),
        now=now,
        trace_id=request[REQUEST_ID_KEY],
        traceparent=current_traceparent(),
    )
    await DeliveryRepository(app[state.STORE]).insert(delivery)
    return json_response(
        delivery_view(delivery), status=202, headers={"Location": f"/v1/deliveries/{delivery.id}"}
    )
