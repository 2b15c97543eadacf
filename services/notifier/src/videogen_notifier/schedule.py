"""When a failed delivery is tried again."""

from __future__ import annotations

from collections.abc import Sequence

# A receiver's Retry-After is honoured up to this long.
RETRY_AFTER_MAX_SECONDS = 3600.0


def retry_delay(
    delays: Sequence[float], attempt: int, *, jitter: float, rand: float, retry_after: float | None = None
) -> float | None:
    """Seconds from failed attempt number ``attempt`` (1-based) to the next, or None once the schedule is
    exhausted. The scheduled delay is spread by ±``jitter`` (``rand`` in [0, 1) picks where); a longer
    Retry-After from the receiver wins, clamped to an hour."""
    if attempt > len(delays):
        return None
    delay = delays[attempt - 1] * (1 + jitter * (2 * rand - 1))
    if retry_after is not None:
        delay = max(delay, min(retry_after, RETRY_AFTER_MAX_SECONDS))
    return delay
