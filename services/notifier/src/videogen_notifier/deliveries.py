"""Creating delivery records from status events: one per (event, endpoint), idempotently. Scheduled retries
live in these records, never on Kafka."""

from __future__ import annotations

from datetime import datetime

from pymongo.errors import DuplicateKeyError

from videogen_common.deliveries import delivery_body, generation_data, new_delivery
from videogen_common.domain import TERMINAL_EVENT, Status
from videogen_common.events import Envelope
from videogen_common.ids import new_id
from videogen_common.store import Store


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
    body = delivery_body(event_type.value, envelope.occurred_at, generation_data(envelope.generation))
    created: list[tuple[str, str]] = []
    async for endpoint in endpoints:
        delivery_id = new_id("msg", now)
        doc = new_delivery(
            delivery_id=delivery_id,
            event_id=envelope.event_id,
            event_type=event_type.value,
            webhook_id=endpoint["_id"],
            account_id=envelope.account_id,
            body=body,
            now=now,
            generation_id=envelope.generation_id,
            trace_id=envelope.trace_id,
        )
        try:
            await store.deliveries.insert_one(doc)
        except DuplicateKeyError:
            continue
        created.append((delivery_id, endpoint["_id"]))
    return created
