"""Status events in, delivery records out: what the notifier's agent does with each batch it takes from Kafka.

A batch costs one endpoint query per account in it and one insert, however many events it holds, so the
agent keeps ahead of the lanes: an account whose endpoints are dead still adds its events to the stream, and
making its records must stay cheap beside the sending it delays for nobody else."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Sequence
from typing import TypeVar

from opentelemetry.trace import SpanKind

from videogen_common.clock import Clock
from videogen_common.domain import TERMINAL_EVENT, Status
from videogen_common.events import Envelope
from videogen_common.repositories.generations import GenerationRepository
from videogen_common.store import PyMongoError, Store
from videogen_common.tracing import span_in
from videogen_notifier.deliveries import new_deliveries_for
from videogen_notifier.dispatcher import Dispatcher

log = logging.getLogger(__name__)

T = TypeVar("T")


def parse(raws: Sequence[bytes]) -> list[Envelope]:
    """The envelopes of a batch of raw status messages; a malformed one (or one with a status we do not
    know) is logged and skipped, so it cannot hold up the rest of its batch."""
    envelopes = []
    for raw in raws:
        try:
            envelope = Envelope.from_json(raw)
            Status(str(envelope.generation.get("status")))
        except ValueError as exc:  # EnvelopeError is one
            log.warning("skipped a malformed status message", extra={"error": str(exc)})
            continue
        envelopes.append(envelope)
    return envelopes


async def take_in(
    store: Store,
    dispatcher: Dispatcher,
    clock: Clock,
    envelopes: Sequence[Envelope],
    *,
    retry_seconds: float = 1.0,
) -> list[tuple[str, str]]:
    """Create the deliveries these status events call for and queue them on their lanes; returns (delivery
    id, webhook id) of those created. A store error is retried until the records are written, so the
    events' offsets, committed once this returns, never run ahead of their records."""
    # Each event's intake is a span of its generation's trace (one batch serves many traces).
    spans = [
        span_in(
            "status.intake",
            envelope.traceparent,
            kind=SpanKind.CONSUMER,
            event_id=envelope.event_id,
            generation_id=envelope.generation_id,
        )
        for envelope in envelopes
        if envelope.traceparent
    ]
    try:
        return await _record(store, dispatcher, clock, envelopes, retry_seconds)
    finally:
        for span in spans:
            span.end()


async def _record(
    store: Store,
    dispatcher: Dispatcher,
    clock: Clock,
    envelopes: Sequence[Envelope],
    retry_seconds: float,
) -> list[tuple[str, str]]:
    terminal = [e.generation_id for e in envelopes if TERMINAL_EVENT.get(Status(e.generation["status"]))]
    while True:
        try:
            created = await dispatcher.create(await new_deliveries_for(store, envelopes, clock.now()))
            # Recorded: the orchestrator's outbox owes these events no more (after the records, never before).
            await GenerationRepository(store).settle_outbox(terminal)
        except PyMongoError as exc:
            log.warning(
                "could not record deliveries; trying again",
                extra={"error": f"{exc.__class__.__name__}: {exc}", "events": len(envelopes)},
            )
            await asyncio.sleep(retry_seconds)
        else:
            return created


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
