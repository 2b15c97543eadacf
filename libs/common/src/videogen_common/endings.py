"""How a generation ends: the one function every ending goes through (``end_generation``), whoever ends it —
its actor (``completed``, or ``failed`` with the provider's or the orchestrator's reason), the reconciler
(``failed``, past the client's deadline while it waited) or the api (``failed``, canceled by its client).

One ending, in this order:

1. **The terminal write**: a compare-and-set out of the state the caller read (``GenerationRepository``'s
   ``complete`` or ``fail``), carrying the generation's cost and its last try at a provider
   (``videogen_common.attempts.ending``) and the event it owes the webhooks in its outbox
   (``videogen_common.outbox``). It succeeds once per generation: whoever loses the race gets None and does
   nothing more.
2. **The budget give-back** (``BudgetCounterRepository.give_back``), by the winner only: a generation that
   failed before anything was submitted to a provider (no ``submit_started_at``, no task), or whose task the
   provider failed without charging for it (the ending's ``cost`` 0: Luma refunds a failed generation, Runway
   most), cost nothing, and what it reserved of its budgets is given back. A submit whose outcome is unknown
   (no task id) keeps it. A process that dies between 1 and 2 keeps the reservation (the budget errs on the
   side of spending less).
3. **The announcement** (``announce``, best effort): the caller's status message and the owed event put on
   Kafka now; the reconciler republishes the event if it is lost (the outbox holds it until the notifier has
   it).
4. **The batch**, for a batch's item (``batch_id``), by the winner only: its outcome counted on the batch
   (one ``$inc``: completed, failed or canceled, and its cost), and when that was the last item, the batch
   ended (``BatchRepository.finish``, a compare-and-set carrying ``batch.completed``: once per batch) and
   its event put on ``sink`` (without one, the reconciler publishes it a grace later). A process that dies
   between 1 and 4 leaves the item uncounted: the reconciler's batch pass (``settle_batches``) recounts a
   batch left unfinished with every item ended."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import datetime

from videogen_common import attempts
from videogen_common.budgets import Hold
from videogen_common.event_types import BATCH_COMPLETED
from videogen_common.failures import ErrorCode, GenerationError
from videogen_common.outbox import EventSink, publish
from videogen_common.pricing import PriceTable
from videogen_common.records.batch import BatchRecord
from videogen_common.records.event import Event
from videogen_common.records.generation import GenerationRecord, StoredVideo
from videogen_common.repositories.batches import BatchRepository
from videogen_common.repositories.budgets import BudgetCounterRepository
from videogen_common.repositories.generation_reads import GenerationReads
from videogen_common.repositories.generations import GenerationRepository
from videogen_common.store import Store

log = logging.getLogger(__name__)

# Told of the generation as it ended (its status message and owed event put on Kafka).
Announce = Callable[[GenerationRecord], Awaitable[object]]


async def end_generation(
    store: Store,
    record: GenerationRecord,
    result: StoredVideo | GenerationError,
    *,
    prices: PriceTable,
    now: datetime,
    owner: str | None = None,
    announce: Announce | None = None,
    sink: EventSink | None = None,
) -> GenerationRecord | None:
    """End the unfinished generation ``record`` (as read just before): ``completed`` with its stored media
    (``StoredVideo``), or ``failed`` with the error. ``owner``: the lease it must still be under (its
    actor's); None for a cancel or the reconciler. Returns the generation as it ended, or None if someone
    else moved it first (then nothing was written, given back or announced). ``prices``: what each try at a
    provider cost."""
    generations = GenerationRepository(store)
    error = result if isinstance(result, GenerationError) else None
    ending = attempts.ending(record, error, prices, now)
    ended: GenerationRecord | None
    if error is None:
        assert isinstance(result, StoredVideo)
        ended = await generations.complete(record, result, now=now, owner=owner, ending=ending)
    else:
        ended = await generations.fail(record, error, now=now, owner=owner, ending=ending)
        if ended is not None:
            await _give_back(store, record, refunded=ending[0].get("cost") == 0)
    if ended is not None and announce is not None:
        await announce(ended)
    if ended is not None and ended.batch_id is not None:
        await _count_in_batch(store, ended, now, sink)
    return ended


def outcome_of(record: GenerationRecord) -> str:
    """How an ended item counts on its batch: completed, canceled (by its client) or failed."""
    if record.error is not None and record.error.code == ErrorCode.CANCELED:
        return "canceled"
    return record.status.value


async def _count_in_batch(
    store: Store, ended: GenerationRecord, now: datetime, sink: EventSink | None
) -> None:
    """Count the item ``ended`` on its batch, and end the batch if it was the last."""
    assert ended.batch_id is not None
    try:
        batch = await BatchRepository(store).item_ended(
            ended.batch_id, outcome_of(ended), ended.cost or 0.0, now
        )
        if batch is not None:
            await finish_batch(store, batch, now, sink)
    except Exception:
        log.exception("a batch's item could not be counted", extra={"generation_id": ended.id})


def batch_event(batch: BatchRecord) -> Event:
    """The ``batch.completed`` event of a batch as its end left it (one per batch: its change is its end)."""
    return BATCH_COMPLETED.event(batch, change="completed", at=batch.finished_at or batch.updated_at)


async def settle_batches(
    store: Store, *, quiet_since: datetime, now: datetime, sink: EventSink | None, limit: int = 100
) -> int:
    """The reconciler's batch pass: each batch unfinished and unchanged since ``quiet_since`` is recounted
    from its items (an item whose process died between its end and its count was never counted), and ended
    if every item has (once, as ``finish_batch`` ends any). How many were ended."""
    batches = BatchRepository(store)
    reads = GenerationReads(store)
    finished = 0
    for batch in await batches.quiet_unfinished(quiet_since, limit):
        outcomes, cost = await reads.ended_in_batch(batch.id)
        current = await batches.recounted(batch, outcomes, cost, now) or batch
        finished += await finish_batch(store, current, now, sink)
    return finished


async def settle_validating(
    store: Store, *, stale_before: datetime, now: datetime, sink: EventSink | None, limit: int = 100
) -> int:
    """The reconciler's pass over batches the api left ``validating`` (it stopped between writing the batch
    and the end of its items) and nobody touched since ``stale_before`` (the bound: longer than any
    acceptance, so a batch still being written, or being finished by a re-send under its Idempotency-Key, is
    left alone):

    - some items were written: those are the batch. It becomes ``in_progress`` with ``total`` the items
      written (its ``error``, ``items_not_written``, says how many of those accepted were lost), its counts
      recounted from its items (the reconciler has been running them: it dispatches items nobody leased),
      and it ends as any batch does, at once if every item has ended already;
    - none was written: it ends ``failed`` with error ``batch_not_written`` and no item, and its
      ``batch.completed`` event is sent (the tenant waiting on it is told).

    What the items never written reserved of the budgets is kept (as for a process that dies before a
    give-back: the budget errs on the side of spending less). How many batches were settled."""
    batches = BatchRepository(store)
    reads = GenerationReads(store)
    settled = 0
    for batch in await batches.stale_validating(stale_before, limit):
        written = await reads.count_in_batch(batch.id)
        if written == 0:
            error = {
                "code": "batch_not_written",
                "message": "the api stopped while accepting this batch, before any of its items was "
                "written: none will run. Submit the batch again.",
            }
            ended = await batches.none_written(batch, error, batch_event, now)
            if ended is None:
                continue
            if sink is not None:
                await publish(sink, batch_event(ended))
            log.warning("a batch left validating failed: no item was written", extra={"batch_id": batch.id})
            settled += 1
            continue
        lost = max(0, batch.total - written)
        note = (
            {
                "code": "items_not_written",
                "message": f"the api stopped while accepting this batch: {written} of its {batch.total} "
                f"items were written and run; the other {lost} were not accepted (submit them again).",
            }
            if lost
            else None
        )
        if not await batches.written_in_part(batch, written, note, now):
            continue
        moved = await batches.get(batch.id)
        if moved is None:
            continue
        outcomes, cost = await reads.ended_in_batch(batch.id)
        moved = await batches.recounted(moved, outcomes, cost, now) or moved
        await finish_batch(store, moved, now, sink)
        log.warning(
            "a batch left validating was moved on with the items written",
            extra={"batch_id": batch.id, "items": written, "lost": lost},
        )
        settled += 1
    return settled


async def finish_batch(store: Store, batch: BatchRecord, now: datetime, sink: EventSink | None) -> bool:
    """End ``batch`` if every item has ended (once, whoever calls), and put its event on ``sink``."""
    ended = await BatchRepository(store).finish(batch, batch_event, now)
    if ended is None:
        return False
    if sink is not None:
        await publish(sink, batch_event(ended))
    log.info("batch finished", extra={"batch_id": ended.id, "status": ended.status})
    return True


async def _give_back(store: Store, record: GenerationRecord, *, refunded: bool) -> None:
    """Give back what the failed generation reserved of its budgets, if it cost nothing (``record``: as it
    was just before it failed; ``refunded``: its provider charged nothing for the tries it made)."""
    if record.budget_hold is None:
        return
    if record.charged and not (refunded and record.provider_task_id is not None):
        return
    try:
        await BudgetCounterRepository(store).give_back(Hold.from_doc(record.budget_hold))
    except Exception:
        log.exception("a failed generation's budget reservation could not be given back")
