"""Creating delivery records from events: one per (event, endpoint of its account subscribed to its type),
idempotently. Every type alike: the event carries its data as delivered, so nothing here knows one type from
another. Scheduled retries live in these records, never on Kafka."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from videogen_common.deliveries import delivery_body, pending_delivery
from videogen_common.event_types import SubjectType
from videogen_common.records.delivery import Delivery
from videogen_common.records.event import Event
from videogen_common.repositories.deliveries import DeliveryRepository
from videogen_common.repositories.webhooks import WebhookRepository
from videogen_common.store import Store


async def new_deliveries(store: Store, event: Event, now: datetime) -> list[Delivery]:
    """The delivery records an event calls for, one per active endpoint of its account subscribed to its
    type: built, not yet stored."""
    return await new_deliveries_for(store, [event], now)


async def new_deliveries_for(store: Store, events: Sequence[Event], now: datetime) -> list[Delivery]:
    """``new_deliveries`` for several events at once, reading each account's endpoints once."""
    webhooks = WebhookRepository(store)
    endpoints: dict[str, dict[str, tuple[str, ...]]] = {}
    for account_id in dict.fromkeys(event.account_id for event in events):
        endpoints[account_id] = await webhooks.subscribers_of(account_id)
    deliveries: list[Delivery] = []
    for event in events:
        body = delivery_body(event.type, event.timestamp, dict(event.data))
        about_generation = event.subject_type == SubjectType.GENERATION
        deliveries += [
            pending_delivery(
                event_id=event.id,
                event_type=event.type,
                webhook_id=webhook_id,
                account_id=event.account_id,
                body=body,
                now=now,
                generation_id=event.subject_id if about_generation else None,
                trace_id=event.trace_id,
                traceparent=event.traceparent,
            )
            for webhook_id, types in endpoints[event.account_id].items()
            if event.type in types
        ]
    return deliveries


async def insert_new(store: Store, deliveries: list[Delivery]) -> list[Delivery]:
    """Store ``deliveries`` in one batch and return those that were new (``DeliveryRepository.insert_new``): a
    repeat of an (event, endpoint) pair creates nothing."""
    return await DeliveryRepository(store).insert_new(deliveries)


async def deliveries_for(store: Store, event: Event, now: datetime) -> list[tuple[str, str]]:
    """Create the deliveries an event calls for, due now; return (delivery id, webhook id) of those this call
    created (a repeat of the same event creates none). The notifier's agent instead hands the records to
    ``Dispatcher.take_in``, which stores them claimed by this instance where a lane has room."""
    created = await insert_new(store, await new_deliveries(store, event, now))
    return [(delivery.id, delivery.webhook_id) for delivery in created]
