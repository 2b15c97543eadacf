"""What the orchestrator tells the rest of the system after each state change: a status message on
``generation.status`` (for the api's waiting and streaming requests) and, for a change the webhooks report,
its event on the events topic (for the notifier).

A terminal transition's own write carries its owed event (``video.completed``, ``video.failed``) in the
generation's outbox (``GenerationRepository.transition``); the notifier settles it once it has recorded it
and its deliveries, so an event lost anywhere on the way (never sent, or lost by the broker after it was
acknowledged) is republished by the reconciler. Event ids are deterministic, so a republished event is
recognisably the same one downstream.
Status messages, and the notices of a state that is not terminal (``video.processing``, ``video.progress``),
are best effort: nothing is owed if one is lost."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Protocol

from videogen_common import outbox
from videogen_common.domain import Status
from videogen_common.events import Envelope
from videogen_common.generations import notice_event, status_envelope, terminal_event
from videogen_common.outbox import publish
from videogen_common.records.generation import GenerationRecord
from videogen_common.repositories.generations import GenerationRepository
from videogen_orchestrator.outcomes import LeaseLost

log = logging.getLogger(__name__)


class EventSink(outbox.EventSink, Protocol):
    """Where the orchestrator's messages go: status messages (``send``) and events (``send_event``)."""

    async def send(self, envelope: Envelope) -> None:
        """Put the envelope on the status topic; return once the broker acknowledged it."""
        ...


async def publish_status(
    sink: EventSink,
    record: GenerationRecord,
    now: datetime,
    *,
    progress: bool = False,
    notice: bool = False,
) -> bool:
    """Put the generation's status message on Kafka, and the event the change makes, if any: a terminal
    state's owed event (stored already), or with ``notice`` the best-effort ``video.processing`` (or, with
    ``progress``, ``video.progress``) notice. False (logged) if the broker did not take the status message.
    Nothing is settled here: the notifier settles an owed event when it takes it in."""
    sent = True
    try:
        await sink.send(status_envelope(record, now, progress=progress))
    except Exception as exc:
        log.warning("status message not published", extra={"generation_id": record.id, "error": repr(exc)})
        sent = False
    if record.item_events is False:
        pass  # a batch's item whose batch asked for no item events: its batch.completed is the one
    elif record.status.terminal:
        await publish(sink, terminal_event(record))
    elif notice:
        await publish(sink, notice_event(record, now, progress=progress))
    return sent


async def mirror(
    generations: GenerationRepository,
    sink: EventSink,
    record: GenerationRecord,
    status: Status,
    *,
    now: datetime,
    owner: str,
) -> GenerationRecord:
    """Mirror the provider's non-terminal state onto the generation: its queue as ``queued`` (the
    provider's), running as ``processing``; each change is published (best effort: a client streaming the
    generation sees it). ``LeaseLost`` if the generation moved."""
    if record.status is status:
        return record
    updated = await generations.follow_provider(record, status, now=now, owner=owner)
    if updated is None:
        raise LeaseLost
    await publish_status(sink, updated, now)
    return updated
