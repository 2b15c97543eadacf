"""Creating delivery records from status events: one per (event, endpoint), idempotently. Scheduled retries
live in these records, never on Kafka."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pymongo.errors import BulkWriteError

from videogen_common.deliveries import delivery_body, generation_data, new_delivery
from videogen_common.domain import TERMINAL_EVENT, EventType, Status
from videogen_common.events import Envelope
from videogen_common.store import Store

Doc = dict[str, Any]

DUPLICATE_KEY = 11000
NOTICES = frozenset({EventType.VIDEO_PROCESSING.value, EventType.VIDEO_PROGRESS.value})


async def new_deliveries(store: Store, envelope: Envelope, now: datetime) -> list[Doc]:
    """The delivery records a status event calls for, one per active endpoint of the account subscribed to
    its event type: built, not yet stored."""
    return await new_deliveries_for(store, [envelope], now)


async def new_deliveries_for(store: Store, envelopes: Sequence[Envelope], now: datetime) -> list[Doc]:
    """``new_deliveries`` for several status events at once, reading each account's endpoints once."""
    wanted = [(envelope, event_type) for envelope in envelopes if (event_type := webhook_event(envelope))]
    endpoints: dict[str, list[Doc]] = {}
    for account_id in dict.fromkeys(envelope.account_id for envelope, _ in wanted):
        # By account alone, which its index answers; the embedded store would scan every webhook for a
        # condition on another field beside it, so those are checked here.
        found = store.webhooks.find(
            {"account_id": account_id}, projection={"_id": 1, "events": 1, "active": 1}
        )
        endpoints[account_id] = [endpoint async for endpoint in found if endpoint.get("active") is True]
    docs: list[Doc] = []
    for envelope, event_type in wanted:
        body = delivery_body(event_type, envelope.occurred_at, generation_data(envelope.generation))
        docs += [
            new_delivery(
                event_id=envelope.event_id,
                event_type=event_type,
                webhook_id=endpoint["_id"],
                account_id=envelope.account_id,
                body=body,
                now=now,
                generation_id=envelope.generation_id,
                trace_id=envelope.trace_id,
                traceparent=envelope.traceparent,
            )
            for endpoint in endpoints[envelope.account_id]
            if event_type in endpoint.get("events", ())
        ]
    return docs


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


async def insert_new(store: Store, docs: list[Doc]) -> list[Doc]:
    """Store ``docs`` in one unordered batch and return those that were new. A document whose (event,
    endpoint) pair is already stored (the event was seen before) is skipped, not an error: the unique index
    decides, so a repeat creates nothing. Any other write error is raised."""
    if not docs:
        return []
    try:
        await store.deliveries.insert_many(docs, ordered=False)
    except BulkWriteError as exc:
        errors = exc.details.get("writeErrors", [])
        if any(error.get("code") != DUPLICATE_KEY for error in errors) or exc.details.get(
            "writeConcernErrors"
        ):
            raise
        duplicates = {error["index"] for error in errors}
        return [doc for index, doc in enumerate(docs) if index not in duplicates]
    return docs


async def deliveries_for(store: Store, envelope: Envelope, now: datetime) -> list[tuple[str, str]]:
    """Create the deliveries a status event calls for, due now; return (delivery id, webhook id) of those
    this call created (a repeat of the same event creates none). The notifier's agent instead hands the
    records to ``Dispatcher.create``, which stores them claimed by this instance where a lane has room."""
    created = await insert_new(store, await new_deliveries(store, envelope, now))
    return [(doc["_id"], doc["webhook_id"]) for doc in created]
