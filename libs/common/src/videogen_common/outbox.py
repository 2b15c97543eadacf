"""How an event is emitted: stored with the change it reports, then put on the events topic for the notifier.

To emit an owed event of a type defined in ``videogen_common.event_types``, make the change with a repository
method that takes a ``session`` and call ``emit``::

    async def disabling(session: Session) -> WebhookEndpoint | None:
        return await webhooks.disable(endpoint, reason, now, session=session)

    emitted = await emit(
        store, sink, disabling, lambda disabled: WEBHOOK_DISABLED.event(disabled, change=..., at=now)
    )

What ``emit`` guarantees, once it returns an answer: the change and its event were stored by one transaction
(both or neither: a crash at any point loses neither once the change is acknowledged); the event was then
offered to the events topic, and whether or not the broker took it, it reaches the notifier at least once
(the orchestrator's reconciler republishes every event still owed ``VIDEOGEN_DISPATCH_GRACE_SECONDS`` after it
was last put there, until the notifier has recorded its deliveries). Its deliveries go to every active
endpoint of the account subscribed to its type, each once per (event, endpoint), with a ``webhook-id`` of its
own. It answers None (and writes nothing) when the change did (its compare-and-set found the subject moved).
A store error is raised, with nothing written (``in_transaction``).

A best-effort event (``owed`` False) is never stored: ``publish`` it after the change, and it is sent if the
broker takes it."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

from videogen_common.records.event import Event
from videogen_common.repositories.events import record_with_change
from videogen_common.store import Session, Store

log = logging.getLogger(__name__)

T = TypeVar("T")


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


async def emit(
    store: Store,
    sink: EventSink,
    change: Callable[[Session], Awaitable[T | None]],
    event: Callable[[T], Event],
) -> tuple[T, Event] | None:
    """Make ``change`` and store its ``event`` in one transaction, then publish the event (see the module's
    docstring for the guarantees). Answers what ``change`` answered and the event, or None if the change
    did (nothing written)."""
    recorded = await record_with_change(store, change, event)
    if recorded is not None:
        await publish(sink, recorded[1])
    return recorded
