"""How an owed event is emitted: carried by the very write that makes the change it reports, then put on the
events topic for the notifier. Nothing else is written on the way: no transaction, no second write.

An owed event's type names the collection whose documents its changes are written to (``EventType.source``:
``generations`` for a generation's end, ``webhooks`` for a disable). The change's compare-and-set update also
pushes the event onto the document's ``outbox`` list and sets its ``outbox_at`` (``owing``), so the change and
its event are one single-document write: acknowledged together, or not at all. Then:

1. the writer publishes the event (``publish``; a failure is logged, nothing more);
2. the notifier takes it in: it records the event in the ``events`` collection (under its id, derived from the
   subject and the change, so once however often it comes), makes its deliveries, then removes the event from
   the document's ``outbox`` (``repositories.outbox.OutboxRepository.settle``);
3. until then, each orchestrator's reconciler puts every event still in an ``outbox`` on the topic again a
   grace after it was last put there (``OutboxRepository.due``), whatever its type.

To emit a new owed type (defined in ``videogen_common.event_types`` with its ``source``): build the event from
the subject as the change will leave it (``carried_by=`` the id of the document the change writes, when that
is not the subject's own), make the change with ``owing(update, event)`` as its update (the source
collection's indexes include ``OUTBOX_INDEX``), and once the write is acknowledged, ``publish`` it::

    event = VIDEO_DELETED.event(deleted, change="deleted", at=now)
    if await generations.delete(record, now=now, owes=event):   # its update: owing({...}, event)
        await publish(sink, event)

Once the write is acknowledged, the event reaches every active endpoint of the account subscribed to its type
at least once, each under one ``webhook-id``, and is listed at ``GET /v1/events`` once the notifier has taken
it in. A best-effort event (``owed`` False) is only published: one lost on the way is not sent."""

from __future__ import annotations

import logging
from typing import Any, Protocol

from pymongo import ASCENDING, IndexModel

from videogen_common.records.event import Event

log = logging.getLogger(__name__)

Doc = dict[str, Any]

OUTBOX = "outbox"
OUTBOX_AT = "outbox_at"
# Documents owing events, by when those were last put on the events topic: each source collection has it (the
# reconciler's range). Sparse: a settled document leaves it.
OUTBOX_INDEX = IndexModel([(OUTBOX_AT, ASCENDING)], name="by_outbox_at", sparse=True)


def owing(update: Doc, event: Event, *, rewritten: list[Doc] | None = None) -> Doc:
    """``update`` (a MongoDB update document) that also marks the document it changes as owing ``event``: the
    event pushed onto its ``outbox``, ``outbox_at`` set to when the event happened. ``rewritten``: the events
    the document owes already, changed (a delete erases their data), written back before ``event`` rather
    than ``event`` pushed."""
    if not event.owed or event.source is None or event.carrier_id is None:
        raise ValueError(f"{event.type} is not an owed event carried by its change")
    if rewritten is not None:
        owed = {OUTBOX: [*rewritten, event.to_doc()], OUTBOX_AT: event.created_at}
        return {**update, "$set": {**update.get("$set", {}), **owed}}
    return {
        **update,
        "$set": {**update.get("$set", {}), OUTBOX_AT: event.created_at},
        "$push": {**update.get("$push", {}), OUTBOX: event.to_doc()},
    }


class EventSink(Protocol):
    async def send_event(self, event: Event) -> None:
        """Put the event on the events topic, keyed by its subject; return once the broker acknowledged it,
        raise if it did not."""
        ...


async def publish(sink: EventSink, event: Event) -> bool:
    """Offer the event to the events topic; False (logged) if the broker did not take it. An owed event is
    republished by the reconciler; a best-effort one is lost."""
    try:
        await sink.send_event(event)
    except Exception as exc:
        log.warning(
            "event not published" + ("; the reconciler will publish it again" if event.owed else ""),
            extra={"event_id": event.id, "event_type": event.type, "error": repr(exc)},
        )
        return False
    return True
