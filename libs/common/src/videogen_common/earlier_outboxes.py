"""What earlier versions left owed, moved into this version's outboxes by the migration step (``videogen
migrate``).

Before events were carried in an ``outbox``, a terminal generation owed its status event through
``outbox_pending`` (and ``outbox_at``), and an endpoint the notifier disabled owed its ``webhook.disabled``
notice through ``notice_pending``, each rebuilt from the document when sent. ``adopt_owed_events`` puts each
such event in its document's ``outbox`` as this version would have (the same id, so deliveries already made
for it are not made again), due at once, records the disable's audit record if it was missing, and removes
the old mark: the reconciler then publishes them like any other. Idempotent. It reads the documents' old
fields itself: they are no part of any record now, so no repository spells them."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from videogen_common import audit
from videogen_common.disabling import disabled_audit, disabled_event
from videogen_common.generations import terminal_event
from videogen_common.outbox import owing
from videogen_common.records.generation import GenerationRecord
from videogen_common.records.webhook import WebhookEndpoint
from videogen_common.store import Store


async def adopt_owed_events(store: Store, now: datetime) -> int:
    """Move the events earlier versions left owed into outboxes (see the module's docstring); how many."""
    adopted = 0
    async for doc in store.generations.find({"outbox_pending": True}):
        record = GenerationRecord.from_doc(doc)
        update: dict[str, object] = {"$unset": {"outbox_pending": ""}}
        if record.status.terminal:
            update = owing(update, terminal_event(record))
            adopted += 1
        else:
            update["$unset"] = {"outbox_pending": "", "outbox_at": ""}
        await store.generations.update_one({"_id": record.id, "outbox_pending": True}, update)
    async for doc in store.webhooks.find({"notice_pending": True}):
        endpoint = WebhookEndpoint.from_doc(doc)
        if endpoint.disabled_at is None:
            endpoint = replace(endpoint, disabled_at=now)
        event = disabled_event(endpoint)
        await store.webhooks.update_one(
            {"_id": endpoint.id, "notice_pending": True}, owing({"$unset": {"notice_pending": ""}}, event)
        )
        await audit.record(store, disabled_audit(event))
        adopted += 1
    return adopted
