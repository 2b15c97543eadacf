"""Events in, delivery records out: what the notifier's agent does with each batch it takes from the events
topic (the one intake for every type: ``Dispatcher.take_in``).

A batch costs one endpoint query per account in it, one insert and one settling update, however many events
it holds, so the agent keeps ahead of the lanes: an account whose endpoints are dead still adds its events to
the stream, and making its records must stay cheap beside the sending it delays for nobody else."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Sequence
from typing import TypeVar

from opentelemetry.trace import SpanKind

from videogen_common.events import EnvelopeError, read_event_message
from videogen_common.records.event import Event
from videogen_common.store import PyMongoError
from videogen_common.tracing import span_in
from videogen_notifier.dispatcher import Dispatcher

log = logging.getLogger(__name__)

T = TypeVar("T")


def parse(raws: Sequence[bytes]) -> list[Event]:
    """The events of a batch of raw messages; a malformed one is logged and skipped, so it cannot hold up the
    rest of its batch."""
    events = []
    for raw in raws:
        try:
            events.append(read_event_message(raw))
        except EnvelopeError as exc:
            log.warning("skipped a malformed event message", extra={"error": str(exc)})
    return events


async def take_in(
    dispatcher: Dispatcher, events: Sequence[Event], *, retry_seconds: float = 1.0
) -> list[tuple[str, str]]:
    """Create the deliveries these events call for, queue them on their lanes and settle the owed ones;
    returns (delivery id, webhook id) of those created. A store error is retried until the records are
    written, so the events' offsets, committed once this returns, never run ahead of their records."""
    # Each event's intake is a span of its trace (one batch serves many traces).
    spans = [
        span_in(
            "event.intake",
            event.traceparent,
            kind=SpanKind.CONSUMER,
            event_id=event.id,
            event_type=event.type,
            subject_id=event.subject_id,
        )
        for event in events
        if event.traceparent
    ]
    try:
        while True:
            try:
                return await dispatcher.take_in(events)
            except PyMongoError as exc:
                log.warning(
                    "could not record deliveries; trying again",
                    extra={"error": f"{exc.__class__.__name__}: {exc}", "events": len(events)},
                )
                await asyncio.sleep(retry_seconds)
    finally:
        for span in spans:
            span.end()


async def uninterrupted(work: Awaitable[T], timeout: float) -> T:
    """Await ``work`` to its end even if the caller is canceled (a graceful stop), for up to ``timeout``
    more seconds, then let the cancellation go on. faust acknowledges a taken batch when the agent leaves
    it, canceled or not, so the batch's records must be written before that happens, or its events would be
    committed without them."""
    task = asyncio.ensure_future(work)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception, TimeoutError):
            await asyncio.wait_for(task, timeout)
        raise
