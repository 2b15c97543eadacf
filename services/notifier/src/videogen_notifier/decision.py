"""What follows an attempt: the delivery succeeded, is tried again at a given time, or is given up; whether
the endpoint is disabled, and why; and until when its breaker is open. A pure function of the attempt's
result, the attempt's number, the endpoint's health and the retry policy, so each rule is a row of a table
test; the dispatcher applies the decision (the store writes, the lane, the notices and the logs).

The rules, in the order they are checked after a failure: a 410 Gone disables the endpoint; so does an
endpoint failing for ``webhook_disable_after_seconds``; a refused destination is not retried; otherwise the
retry schedule says when the next attempt is (a longer Retry-After wins, up to an hour), never before the
breaker lets it through, and an exhausted schedule fails the delivery."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime, timedelta

from videogen_common.clock import isoformat
from videogen_common.records.webhook import Health
from videogen_notifier.schedule import retry_delay
from videogen_notifier.sender import AttemptResult
from videogen_notifier.settings import NotifierSettings


@dataclass(frozen=True, slots=True)
class Policy:
    """The settings a decision depends on."""

    retry_delays: tuple[float, ...]
    retry_jitter: float
    breaker_failures: int
    cooldown: timedelta
    disable_after: timedelta

    @classmethod
    def of(cls, settings: NotifierSettings) -> Policy:
        return cls(
            retry_delays=tuple(settings.retry_delays),
            retry_jitter=settings.retry_jitter,
            breaker_failures=settings.breaker_failures,
            cooldown=timedelta(seconds=settings.breaker_cooldown_seconds),
            disable_after=timedelta(seconds=settings.webhook_disable_after_seconds),
        )


class Why(enum.Enum):
    """Why a delivery is given up."""

    GONE = "gone"  # the endpoint answered 410 Gone (and is disabled)
    FAILING_TOO_LONG = "failing_too_long"  # the endpoint failed for the disable window (and is disabled)
    NOT_RETRIABLE = "not_retriable"  # trying again cannot help (the destination is refused)
    EXHAUSTED = "exhausted"  # the retry schedule has no attempt left


@dataclass(frozen=True, slots=True)
class Succeeded:
    pass


@dataclass(frozen=True, slots=True)
class RetryAt:
    when: datetime


@dataclass(frozen=True, slots=True)
class GiveUp:
    why: Why
    reason: str  # the delivery's failure_reason


Outcome = Succeeded | RetryAt | GiveUp

GONE_REASON = "endpoint answered 410 Gone"


@dataclass(frozen=True, slots=True)
class Decision:
    outcome: Outcome
    # Disable the endpoint, for this reason (its webhook.disabled notice gives it too).
    disable: str | None = None
    # The breaker this failure leaves open: the lane sends nothing until then.
    pause_until: datetime | None = None


def decide(
    result: AttemptResult, *, attempt: int, health: Health, policy: Policy, now: datetime, rand: float
) -> Decision:
    """The decision after attempt number ``attempt`` (1-based). ``health`` is the endpoint's health with this
    attempt counted (after a failure: as recorded in the store, which may include other attempts' failures);
    ``rand`` in [0, 1) places the retry within its jitter."""
    if result.ok:
        return Decision(Succeeded())
    pause_until = health.paused_until(policy.breaker_failures, policy.cooldown)
    if pause_until is not None and pause_until <= now:
        pause_until = None
    if result.status_code == 410:
        return Decision(GiveUp(Why.GONE, f"{GONE_REASON}; it is now disabled"), GONE_REASON, pause_until)
    failing_for = health.failing_for(now)
    if failing_for >= policy.disable_after:
        reason = f"every attempt failed for {failing_for.total_seconds() / 86400:.1f} days" + (
            f" (since {isoformat(health.failing_since)})" if health.failing_since else ""
        )
        return Decision(GiveUp(Why.FAILING_TOO_LONG, f"endpoint disabled: {reason}"), reason, pause_until)
    if not result.retriable:
        return Decision(GiveUp(Why.NOT_RETRIABLE, f"{result.error}; not retried"), None, pause_until)
    delay = retry_delay(
        policy.retry_delays, attempt, jitter=policy.retry_jitter, rand=rand, retry_after=result.retry_after
    )
    if delay is None:
        return Decision(GiveUp(Why.EXHAUSTED, "retry schedule exhausted"), None, pause_until)
    next_at = now + timedelta(seconds=delay)
    if pause_until is not None and pause_until > next_at:
        next_at = pause_until  # no attempt while the breaker is open
    return Decision(RetryAt(next_at), None, pause_until)
