"""Status events: what the orchestrator tells the rest of the system after each state change.

A terminal transition sets ``outbox_pending`` in the same write; it is cleared only after the event is on
Kafka, and the reconciler republishes any left pending. Event ids are deterministic, so a republished event is
recognisably the same one downstream."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any, Protocol

from videogen_common.events import Envelope
from videogen_common.generations import status_envelope
from videogen_common.store import Store

log = logging.getLogger(__name__)


class EventSink(Protocol):
    async def send(self, envelope: Envelope) -> None:
        """Put the envelope on the status topic; return once the broker acknowledged it."""
        ...


async def publish_status(store: Store, sink: EventSink, doc: dict[str, Any], now: datetime) -> bool:
    try:
        await sink.send(status_envelope(doc, now))
    except Exception as exc:
        log.warning(
            "status event not published; the reconciler will retry",
            extra={"generation_id": doc["_id"], "error": repr(exc)},
        )
        return False
    if doc.get("outbox_pending"):
        await store.generations.update_one(
            {"_id": doc["_id"], "version": doc["version"]}, {"$unset": {"outbox_pending": ""}}
        )
    return True
