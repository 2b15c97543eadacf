"""Webhook delivery records and payloads, shared by the notifier (which creates and sends them) and the api
(which shows them, re-queues them, and creates ``webhook.test`` deliveries).

A delivery is one (event, endpoint) pair, unique in the store. It keeps the exact body bytes it will send, so
every attempt carries the same body and the same ``webhook-id`` (the delivery id)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import orjson

PENDING, SUCCEEDED, FAILED = "pending", "succeeded", "failed"
STATUSES = (PENDING, SUCCEEDED, FAILED)

# The generation fields a delivery's ``data`` carries: the spec's, plus updated_at and error.
DATA_FIELDS = (
    "id",
    "status",
    "prompt",
    "provider",
    "duration",
    "video_url",
    "thumbnail_url",
    "created_at",
    "updated_at",
    "error",
)

Doc = dict[str, Any]


def delivery_body(event_type: str, timestamp: str, data: dict[str, Any]) -> bytes:
    """The spec's body: ``{"event", "timestamp", "data"}``."""
    return orjson.dumps({"event": event_type, "timestamp": timestamp, "data": data})


def generation_data(generation: dict[str, Any]) -> dict[str, Any]:
    return {k: generation.get(k) for k in DATA_FIELDS}


def new_delivery(
    *,
    delivery_id: str,
    event_id: str,
    event_type: str,
    webhook_id: str,
    account_id: str,
    body: bytes,
    now: datetime,
    generation_id: str | None = None,
    trace_id: str | None = None,
) -> Doc:
    return {
        "_id": delivery_id,
        "event_id": event_id,
        "webhook_id": webhook_id,
        "account_id": account_id,
        "event_type": event_type,
        "generation_id": generation_id,
        "body": body.decode(),
        "status": PENDING,
        "attempts": [],
        "next_attempt_at": now,
        "created_at": now,
        "updated_at": now,
        "trace_id": trace_id,
    }
