"""The delivery log and what re-queues it: list an endpoint's deliveries, read one, retry one, recover all
failed since a time, and send an endpoint a ``webhook.test`` event.

The api only writes delivery records; the notifier's sweeper sends every pending one whose
``next_attempt_at`` is due (within about a second). A re-queued delivery keeps its id (so its ``webhook-id``)
and its attempt history, and the notifier's schedule continues from the attempts already made."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Annotated, Any

from aiohttp import web
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from videogen_api import state
from videogen_api.declare import BODY_ERRORS, DELIVERY_ID, ENDPOINT_UNUSABLE, WEBHOOK_ID, Endpoint, problem
from videogen_api.filters import CreatedAfter, CreatedBefore
from videogen_api.middleware import REQUEST_ID_KEY, account_of
from videogen_api.paging import DEFAULT_LIMIT, Cursor, Limit, page_from
from videogen_api.problems import Problem, conflict, invalid, not_found
from videogen_api.query import Param, once, parse_query, refused
from videogen_api.routes.audit import record_change
from videogen_api.routes.bodies import json_body
from videogen_api.routes.webhooks import owned_webhook
from videogen_api.schemas.common import parse_body
from videogen_api.schemas.deliveries import Delivery as DeliveryModel
from videogen_api.schemas.deliveries import DeliveryList, Recovered, RecoverRequest
from videogen_api.serialize import json_response
from videogen_common.audit import AuditEventType
from videogen_common.clock import isoformat
from videogen_common.deliveries import PENDING, STATUSES, delivery_body, pending_delivery
from videogen_common.event_types import EVENT_TYPES, WEBHOOK_TEST
from videogen_common.ids import new_id
from videogen_common.records.delivery import Delivery
from videogen_common.records.webhook import WebhookEndpoint
from videogen_common.repositories.deliveries import DeliveryFilter, DeliveryRepository
from videogen_common.repositories.events import EventRepository
from videogen_common.repositories.webhooks import WebhookRepository
from videogen_common.scopes import Scope
from videogen_common.tracing import current_traceparent

routes = web.RouteTableDef()

Doc = dict[str, Any]

# The event_type filter takes any well-formed type, not only those defined now: filtering by a type never
# sent simply finds nothing.
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


def _delivery_status(values: list[str]) -> str:
    status = once(values)
    if status not in STATUSES:
        raise refused("enum", f"{status!r} is not one of {', '.join(STATUSES)}")
    return status


def _event_type(values: list[str]) -> str:
    event_type = once(values)
    if len(event_type) > 64 or not _EVENT_TYPE.fullmatch(event_type):
        raise refused("event_type", f"must be an event type such as {', '.join(EVENT_TYPES.names())}")
    return event_type


class DeliveryListing(BaseModel):
    """GET /v1/webhooks/{id}/deliveries's query string: status, event_type, created_after and created_before
    (ISO 8601 with a time zone; both bounds exclusive), limit and cursor."""

    model_config = ConfigDict(frozen=True)

    status: Annotated[
        str | None,
        BeforeValidator(_delivery_status),
        Param("DeliveryStatus", {"type": "string", "enum": list(STATUSES)}),
    ] = Field(None, description="Only deliveries in this status.")
    event_type: Annotated[
        str | None,
        BeforeValidator(_event_type),
        Param("EventType", {"type": "string", "maxLength": 64, "pattern": _EVENT_TYPE.pattern}),
    ] = Field(
        None, description=f"Only deliveries of this event type, such as {', '.join(EVENT_TYPES.names())}."
    )
    created_after: CreatedAfter = None
    created_before: CreatedBefore = None
    limit: Limit = DEFAULT_LIMIT
    cursor: Cursor = None

    def to_filter(self) -> DeliveryFilter:
        """What the listing keeps, for the repository."""
        return DeliveryFilter(self.status, self.event_type, self.created_after, self.created_before)


@routes.get("/v1/webhooks/{id}/deliveries")
@Endpoint(
    operation_id="listDeliveries",
    scope=Scope.WEBHOOKS_READ,
    tag="Deliveries",
    summary="List an endpoint's deliveries",
    description="Newest first, each with every attempt made.",
    status=200,
    answer="A page of deliveries.",
    model=DeliveryList,
    query=DeliveryListing,
    parameters=(WEBHOOK_ID,),
    errors={404: "NotFound", 422: "Invalid"},
)
async def list_deliveries(request: web.Request) -> web.Response:
    """One endpoint's deliveries, newest first, ``{"data": [...], "next_cursor": null | string}``."""
    webhook = await owned_webhook(request, request.match_info["id"])
    listing = parse_query(DeliveryListing, request.query)
    kept = listing.to_filter()
    account = account_of(request)
    deliveries = DeliveryRepository(request.app[state.STORE])
    return json_response(
        await page_from(
            lambda position, limit: deliveries.page_of_endpoint(webhook.id, account, kept, position, limit),
            listing,
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
@Endpoint(
    operation_id="getDelivery",
    scope=Scope.WEBHOOKS_READ,
    tag="Deliveries",
    summary="Read a delivery",
    description=(
        "Every attempt (time, status code, latency, error), the next attempt's time, and why it failed."
    ),
    status=200,
    answer="The delivery.",
    model=DeliveryModel,
    parameters=(DELIVERY_ID,),
    errors={404: "NotFound"},
)
async def get_delivery(request: web.Request) -> web.Response:
    return json_response(delivery_view(await _owned_delivery(request, request.match_info["id"])))


def _already_pending(delivery_id: str) -> Problem:
    return conflict(
        f"delivery {delivery_id!r} is already pending; the notifier will attempt it",
        slug="delivery-pending",
        title="Delivery already pending",
    )


@routes.post("/v1/deliveries/{id}/retry")
@Endpoint(
    operation_id="retryDelivery",
    scope=Scope.WEBHOOKS_WRITE,
    tag="Deliveries",
    summary="Retry a delivery",
    description="Queues a finished delivery again, now, with the same id (so the same webhook-id) and body.",
    status=202,
    answer="Accepted: the queued delivery.",
    model=DeliveryModel,
    parameters=(DELIVERY_ID,),
    errors={
        404: "NotFound",
        409: problem("delivery-pending: it is already queued; " + ENDPOINT_UNUSABLE),
    },
)
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
@Endpoint(
    operation_id="recoverDeliveries",
    scope=Scope.WEBHOOKS_WRITE,
    tag="Deliveries",
    summary="Re-send failed deliveries",
    description=(
        "Queues again every failed delivery of the endpoint created at or after since (which may reach back "
        "at most the recovery window, 14 days by default)."
    ),
    status=202,
    answer="Accepted: how many were queued.",
    model=Recovered,
    parameters=(WEBHOOK_ID,),
    body=RecoverRequest,
    errors={**BODY_ERRORS, 404: "NotFound", 409: problem(ENDPOINT_UNUSABLE)},
)
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
        webhook.id, account_of(request), body.since, now
    )
    await record_change(
        request,
        AuditEventType.WEBHOOK_RECOVERY_REQUESTED,
        ("webhook", webhook.id),
        {"since": isoformat(body.since), "requeued": requeued},
    )
    return json_response({"requeued": requeued}, status=202)


@routes.post("/v1/webhooks/{id}/test")
@Endpoint(
    operation_id="sendTestEvent",
    scope=Scope.WEBHOOKS_WRITE,
    tag="Deliveries",
    summary="Send a test event",
    description="Queues a signed webhook.test delivery to the endpoint, whatever events it subscribes to.",
    status=202,
    answer="Accepted: the queued delivery.",
    model=DeliveryModel,
    parameters=(WEBHOOK_ID,),
    headers=("Location",),
    errors={404: "NotFound", 409: problem(ENDPOINT_UNUSABLE)},
)
async def send_test_event(request: web.Request) -> web.Response:
    """Record a ``webhook.test`` event and create its one delivery, to the endpoint (whatever events it
    subscribes to); the notifier sends it, signed like any other, within about a second."""
    app = request.app
    webhook = await owned_webhook(request, request.match_info["id"])
    _require_active(webhook)
    now = app[state.CLOCK].now()
    store = app[state.STORE]
    # Sent to this endpoint alone: recorded here, with its one delivery, never taken in by the notifier.
    event = WEBHOOK_TEST.event(
        webhook,
        change=new_id("test", now),
        at=now,
        trace_id=request[REQUEST_ID_KEY],
        traceparent=current_traceparent(),
    )
    delivery = pending_delivery(
        event_id=event.id,
        event_type=event.type,
        webhook_id=webhook.id,
        account_id=webhook.account_id,
        body=delivery_body(event.type, event.timestamp, dict(event.data)),
        now=now,
        trace_id=event.trace_id,
        traceparent=event.traceparent,
    )
    await EventRepository(store).record([event])
    await DeliveryRepository(store).insert(delivery)
    return json_response(
        delivery_view(delivery), status=202, headers={"Location": f"/v1/deliveries/{delivery.id}"}
    )
