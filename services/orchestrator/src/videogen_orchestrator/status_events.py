"""Status events: what the orchestrator tells the rest of the system after each state change.

A terminal transition sets ``outbox_pending`` (and ``outbox_at``) in the same write; the notifier clears them
once it has recorded the event's deliveries, so an event lost anywhere on the way — never sent, or lost by the
broker after it was acknowledged — is republished by the reconciler. Event ids are deterministic, so a
republished event is recognisably the same one downstream."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Protocol

from videogen_common.domain import EventType
from videogen_common.events import Envelope
from videogen_common.generations import status_envelope
from videogen_common.records.generation import GenerationRecord

log = logging.getLogger(__name__)


class EventSink(Protocol):
    async def send(self, envelope: Envelope) -> None:
        """Put the envelope on the status topic; return once the broker acknowledged it."""
        ...


async def publish_status(
    sink: EventSink,
    record: GenerationRecord,
    now: datetime,
    *,
    progress: bool = False,
    notice: EventType | None = None,
) -> bool:
    """Put the generation's status event on Kafka; False (logged) if the
    broker did not take it. Nothing is cleared here: the notifier settles the outbox when it takes the event
    in. Events of a state that is not terminal (processing, queued, progress) are best effort: nothing is
    owed if one is lost; so are the webhook ``notice``s they carry."""
    try:
        await sink.send(status_envelope(record, now, progress=progress, notice=notice))
    except Exception as exc:
        log.warning(
            "status event not published; the reconciler will retry",
            extra={"generation_id": record.id, "error": repr(exc)},
        )
        return False
    return True
