"""A generation's tries at its providers, and what they cost: the try under way ends when the generation
finishes (``ending``) or moves to another candidate (``ended``); each ended try is kept on the generation
(``provider_attempts``) with what its provider charged for it, and a finished generation's ``cost`` is their
sum. A try that made no task cost nothing; one whose task the provider made, or failed where that provider
charges failures (``pricing.charged``), cost what its plan asked for."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from videogen_common.failures import GenerationError
from videogen_common.pricing import DIGITS, PriceTable, charged
from videogen_common.records.generation import GenerationRecord

Doc = dict[str, Any]


def cost_of(record: GenerationRecord, error: GenerationError | None, prices: PriceTable) -> float | None:
    """What the try under way cost, ending with ``error`` (None: the video was made). 0 without a task; None
    when the price of what it asked for is not known."""
    if record.provider_task_id is None or not charged(record.provider, error):
        return 0.0
    return prices.of_plan(record.provider, record.provider_request, record.duration)


def ended(
    record: GenerationRecord, error: GenerationError | None, prices: PriceTable, now: datetime
) -> Doc | None:
    """The try under way, as it ends now (with ``error``, None if it made the video); None if no try began
    (nothing was submitted)."""
    started = record.attempt_started
    if started is None:
        return None
    return {
        "provider": record.provider,
        # The model the adapter asked for (its plan's), else the one the generation recorded.
        "model": (record.provider_request or {}).get("model") or record.model,
        "pool": record.provider_pool,
        "started_at": started,
        "ended_at": now,
        "error_code": str(error.code) if error is not None else None,
        "cost": cost_of(record, error, prices),
    }


def total(attempts: list[Doc]) -> float | None:
    """What the tries cost together; None if one that was charged has no known price."""
    costs = [attempt.get("cost") for attempt in attempts]
    if any(cost is None for cost in costs):
        return None
    return round(sum(float(cost or 0.0) for cost in costs), DIGITS)


def ending(
    record: GenerationRecord, error: GenerationError | None, prices: PriceTable, now: datetime
) -> tuple[Doc, Doc | None]:
    """What the terminal write adds: its ``cost`` (every try, the last included) and the last try (to push
    onto ``provider_attempts``; None if none was under way)."""
    last = ended(record, error, prices, now)
    attempts = [*(dict(a) for a in record.provider_attempts or ()), *([last] if last else [])]
    return {"cost": total(attempts)}, last
