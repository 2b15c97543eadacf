"""What earlier versions left owed, made into event records by the migration step (``videogen migrate``).

Before events were records, a terminal generation owed its status event through ``outbox_pending`` (and
``outbox_at``) on the generation, and an endpoint the notifier disabled owed its ``webhook.disabled`` notice
through ``notice_pending`` on the webhook. ``adopt_owed_events`` stores each such event as this version would
have (the same id, so deliveries already made for it are not made again), owed as of ``now``, with the
disable's audit record, and removes the mark. Idempotent. It reads the documents' old fields itself: they are
no part of any record now, so no repository spells them."""

from __future__ import annotations

import contextlib
from dataclasses import replace
from datetime import datetime

from videogen_common import audit
from videogen_common.disabling import disabled_audit, disabled_event
from videogen_common.generations import terminal_event
from videogen_common.records.event import Event
from videogen_common.records.generation import GenerationRecord
from videogen_common.records.webhook import WebhookEndpoint
from videogen_common.repositories.events import EventRepository
from videogen_common.store import DuplicateKeyError, Store


async def adopt_owed_events(store: Store, now: datetime) -> int:
    """Store the events earlier versions left owed (see the module's docstring); how many were new."""
    events = EventRepository(store)
    adopted = 0
    async for doc in store.generations.find({"outbox_pending": True}):
        record = GenerationRecord.from_doc(doc)
        if record.status.terminal:
            adopted += await _adopt(events, replace(terminal_event(record), outbox_at=now))
        await store.generations.update_one(
            {"_id": record.id}, {"$unset": {"outbox_pending": "", "outbox_at": ""}}
        )
    async for doc in store.webhooks.find({"notice_pending": True}):
        endpoint = WebhookEndpoint.from_doc(doc)
        if endpoint.disabled_at is None:
            endpoint = replace(endpoint, disabled_at=now)
        event = replace(disabled_event(endpoint), outbox_at=now)
        adopted += await _adopt(events, event)
        await audit.record(store, disabled_audit(event))
        await store.webhooks.update_one({"_id": endpoint.id}, {"$unset": {"notice_pending": ""}})
    return adopted


async def _adopt(events: EventRepository, event: Event) -> int:
    with contextlib.suppress(DuplicateKeyError):
        await events.insert(event)
        return 1
    return 0
