"""Delivery records: one per (event, endpoint), created idempotently, each with its attempts and the time of
the next one. This is the log the API shows and replays from; scheduled retries live here, never on Kafka."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pymongo.errors import DuplicateKeyError

from videogen_common.domain import TERMINAL_EVENT, Status
from videogen_common.events import Envelope
from videogen_common.ids import new_id
from videogen_common.store import Store
from videogen_notifier.payloads import delivery_body

PENDING, SUCCEEDED, FAILED = "pending", "succeeded", "failed"

Doc = dict[str, Any]


async def deliveries_for(store: Store, envelope: Envelope, now: datetime) -> list[tuple[str, str]]:
    """Create the deliveries a status event calls for; return (delivery id, webhook id) of those this call
    created (a repeat of the same event creates none)."""
    status = Status(envelope.generation["status"])
    event_type = TERMINAL_EVENT.get(status)
    if event_type is None:
        return []
    endpoints = store.webhooks.find(
        {"account_id": envelope.account_id, "active": True, "events": event_type.value}, projection={"_id": 1}
    )
    body = delivery_body(event_type.value, envelope.occurred_at, envelope.generation)
    created: list[tuple[str, str]] = []
    async for endpoint in endpoints:
        delivery_id = new_id("msg", now)
        try:
            await store.deliveries.insert_one(
                {
                    "_id": delivery_id,
                    "event_id": envelope.event_id,
                    "webhook_id": endpoint["_id"],
                    "account_id": envelope.account_id,
                    "event_type": event_type.value,
                    "generation_id": envelope.generation_id,
                    "body": body.decode(),
                    "status": PENDING,
                    "attempts": [],
                    "next_attempt_at": now,
                    "created_at": now,
                    "updated_at": now,
                    "trace_id": envelope.trace_id,
                }
            )
        except DuplicateKeyError:
            continue
        created.append((delivery_id, endpoint["_id"]))
    return created
