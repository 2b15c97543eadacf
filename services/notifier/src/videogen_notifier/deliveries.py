"""Creating delivery records from status events: one per (event, endpoint), idempotently. Scheduled retries
live in these records, never on Kafka."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from videogen_common.deliveries import delivery_body, generation_data, pending_delivery
from videogen_common.domain import TERMINAL_EVENT, EventType, Status
from videogen_common.events import Envelope
from videogen_common.records.delivery import Delivery
from videogen_common.repositories.deliveries import DeliveryRepository
from videogen_common.repositories.webhooks import WebhookRepository
from videogen_common.store import Store

NOTICES = frozenset({EventType.VIDEO_PROCESSING.value, EventType.VIDEO_PROGRESS.value})


async def new_deliveries(store: Store, envelope: Envelope, now: datetime) -> list[Delivery]:
    """The delivery records a status event calls for, one per active endpoint of the account subscribed to
    its event type: built, not yet stored."""
    return await new_deliveries_for(store, [envelope], now)


async def new_deliveries_for(store: Store, envelopes: Sequence[Envelope], now: datetime) -> list[Delivery]:
    """``new_deliveries`` for several status events at once, reading each account's endpoints once."""
    wanted = [(envelope, event_type) for envelope in envelopes if (event_type := webhook_event(envelope))]
    webhooks = WebhookRepository(store)
    endpoints: dict[str, dict[str, tuple[str, ...]]] = {}
    for account_id in dict.fromkeys(envelope.account_id for envelope, _ in wanted):
        endpoints[account_id] = await webhooks.subscribers_of(account_id)
    deliveries: list[Delivery] = []
    for envelope, event_type in wanted:
        body = delivery_body(event_type, envelope.occurred_at, generation_data(envelope.generation))
        deliveries += [
            pending_delivery(
                event_id=envelope.event_id,
                event_type=event_type,
                webhook_id=webhook_id,
                account_id=envelope.account_id,
                body=body,
                now=now,
                generation_id=envelope.generation_id,
                trace_id=envelope.trace_id,
                traceparent=envelope.traceparent,
            )
            for webhook_id, events in endpoints[envelope.account_id].items()
            if event_type in events
        ]
    return deliveries


def webhook_event(envelope: Envelope) -> str | None:
    """The webhook event a status event is delivered as: ``video.completed``/``video.failed`` by its terminal
    status; a non-terminal one only if it is marked as a notice (``video.processing`` when the provider took
    the task, ``video.progress`` at most every few seconds), which endpoints get only if they list it."""
    terminal = TERMINAL_EVENT.get(Status(envelope.generation["status"]))
    if terminal is not None:
        return terminal.value
    if envelope.notice in NOTICES:
        return envelope.notice
    return None


async def insert_new(store: Store, deliveries: list[Delivery]) -> list[Delivery]:
    """Store ``deliveries`` in one batch and return those that were new (``DeliveryRepository.insert_new``): a
    repeat of an (event, endpoint) pair creates nothing."""
    return await DeliveryRepository(store).insert_new(deliveries)


async def deliveries_for(store: Store, envelope: Envelope, now: datetime) -> list[tuple[str, str]]:
    """Create the deliveries a status event calls for, due now; return (delivery id, webhook id) of those
    this call created (a repeat of the same event creates none). The notifier's agent instead hands the
    records to ``Dispatcher.create``, which stores them claimed by this instance where a lane has room."""
    created = await insert_new(store, await new_deliveries(store, envelope, now))
    return [(delivery.id, delivery.webhook_id) for delivery in created]
