"""Webhook delivery records and payloads, shared by the notifier (which creates and sends them) and the api
(which shows them, re-queues them, and creates ``webhook.test`` deliveries).

A delivery is one (event, endpoint) pair, unique in the store: its id is derived from the pair
(``delivery_id``), so the store's own ``_id`` index makes creating it idempotent — an event seen twice,
by one notifier or two, creates nothing the second time — with no second unique index to keep up on every
write. It keeps the exact body bytes it will send, so every attempt carries the same body and the same
``webhook-id`` (the delivery id). While it waits for a retry (after a failed attempt, or re-queued through the
API) it also has ``retry_at`` (``RETRY_AT``), when that retry is due; the field goes when it closes."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import orjson

from videogen_common.ids import derived_id
from videogen_common.records.delivery import Delivery
from videogen_common.records.generation import PUBLIC_FIELDS

PENDING, SUCCEEDED, FAILED = "pending", "succeeded", "failed"
RETRY_AT = "retry_at"
STATUSES = (PENDING, SUCCEEDED, FAILED)

# The generation fields a delivery's ``data`` carries: every public one but the timeline (the event is one
# step of it) and the queue position (counted only when a generation is read).
DATA_FIELDS = tuple(name for name in PUBLIC_FIELDS if name not in ("timeline", "queue_position"))

Doc = dict[str, Any]


def delivery_body(event_type: str, timestamp: str, data: dict[str, Any]) -> bytes:
    """The spec's body: ``{"event", "timestamp", "data"}``."""
    return orjson.dumps({"event": event_type, "timestamp": timestamp, "data": data})


def delivery_id(event_id: str, webhook_id: str) -> str:
    """The id of the delivery of event ``event_id`` to endpoint ``webhook_id``: the same for the same pair."""
    return derived_id("msg", event_id, webhook_id)


def generation_data(generation: dict[str, Any]) -> dict[str, Any]:
    data = {k: generation.get(k) for k in DATA_FIELDS}
    data["metadata"] = data["metadata"] or {}  # events published before metadata existed
    data["priority"] = data["priority"] or "normal"  # ... and before priority did
    data["attempts"] = data["attempts"] or []  # ... and before attempts did
    data["deleted"] = bool(data["deleted"])  # ... and before deletes did
    return data


def pending_delivery(
    *,
    event_id: str,
    event_type: str,
    webhook_id: str,
    account_id: str,
    body: bytes,
    now: datetime,
    generation_id: str | None = None,
    trace_id: str | None = None,
    traceparent: str | None = None,
) -> Delivery:
    """A new delivery, pending and due now, with the id ``delivery_id`` derives from its (event, endpoint)
    pair: not yet stored (``DeliveryRepository.insert_new`` and ``insert`` store it)."""
    return Delivery(
        id=delivery_id(event_id, webhook_id),
        event_id=event_id,
        webhook_id=webhook_id,
        account_id=account_id,
        event_type=event_type,
        generation_id=generation_id,
        body=body.decode(),
        status=PENDING,
        next_attempt_at=now,
        created_at=now,
        updated_at=now,
        trace_id=trace_id,
        traceparent=traceparent,
    )
