"""The decision after an attempt, as a table: each row an attempt's result, its number and the endpoint's
health (with this attempt counted), and what follows — the delivery succeeded, is retried at a given time or
given up, whether the endpoint is disabled, and until when its breaker is open. Each row is the behaviour the
dispatcher had before the rules moved into ``decide``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from videogen_common.records.webhook import Health
from videogen_common.settings import load_settings
from videogen_notifier.decision import Decision, GiveUp, Policy, RetryAt, Succeeded, Why, decide
from videogen_notifier.sender import AttemptResult
from videogen_notifier.settings import NotifierSettings

NOW = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
DAY = timedelta(days=1)
POLICY = Policy(
    retry_delays=(5.0, 300.0),
    retry_jitter=0.0,
    breaker_failures=5,
    cooldown=timedelta(seconds=30),
    disable_after=5 * DAY,
)
GONE = "endpoint answered 410 Gone"


def s(seconds: float) -> datetime:
    return NOW + timedelta(seconds=seconds)


def http(status: int, retry_after: float | None = None) -> AttemptResult:
    error = None if 200 <= status < 300 else f"HTTP {status}"
    return AttemptResult(status, 12.0, error, retry_after)


TIMEOUT = AttemptResult(None, 5000.0, "timeout")
REFUSED = AttemptResult(None, 1.0, "destination not allowed: 127.0.0.1", retriable=False)


def failing(failures: int = 1, since: timedelta = timedelta(0), last: timedelta = timedelta(0)) -> Health:
    """The health a failure leaves: ``failures`` in a row, the first ``since`` ago, the last ``last`` ago."""
    return Health(consecutive_failures=failures, failing_since=NOW - since, last_failure_at=NOW - last)


def gave_up(why: Why, reason: str, disable: str | None = None, pause: datetime | None = None) -> Decision:
    return Decision(GiveUp(why, reason), disable, pause)


ROWS: list[tuple[str, AttemptResult, int, Health, Decision]] = [
    # A 2xx is done, whatever the endpoint's health or the attempt's number.
    ("200", http(200), 1, Health(), Decision(Succeeded())),
    ("204 on a failing endpoint", http(204), 3, failing(7, since=DAY), Decision(Succeeded())),
    ("2xx after the schedule", http(201), 9, Health(), Decision(Succeeded())),
    # 410 Gone: given up, and the endpoint disabled, even with retries left.
    ("410", http(410), 1, failing(), gave_up(Why.GONE, f"{GONE}; it is now disabled", GONE)),
    (
        "410, schedule exhausted",
        http(410),
        3,
        failing(),
        gave_up(Why.GONE, f"{GONE}; it is now disabled", GONE),
    ),
    (
        "410 that opens the breaker",
        http(410),
        1,
        failing(5),
        gave_up(Why.GONE, f"{GONE}; it is now disabled", GONE, s(30)),
    ),
    # Other failures are retried on the schedule: attempt n waits schedule[n-1].
    ("500, first attempt", http(500), 1, failing(), Decision(RetryAt(s(5)))),
    ("500, second attempt", http(500), 2, failing(2), Decision(RetryAt(s(300)))),
    ("400 is retried too", http(400), 1, failing(), Decision(RetryAt(s(5)))),
    ("404 is retried too", http(404), 1, failing(), Decision(RetryAt(s(5)))),
    ("timeout", TIMEOUT, 1, failing(), Decision(RetryAt(s(5)))),
    ("a 3xx is a failure (no redirects)", http(301), 1, failing(), Decision(RetryAt(s(5)))),
    # A longer Retry-After wins, up to an hour; a shorter one does not shorten the schedule.
    ("503 Retry-After 120", http(503, 120), 1, failing(), Decision(RetryAt(s(120)))),
    ("429 Retry-After 2", http(429, 2), 1, failing(), Decision(RetryAt(s(5)))),
    ("503 Retry-After a day", http(503, 86_400), 1, failing(), Decision(RetryAt(s(3600)))),
    ("503 Retry-After 120, second attempt", http(503, 120), 2, failing(2), Decision(RetryAt(s(300)))),
    # The schedule exhausted: failed, the endpoint left alone.
    ("500, schedule exhausted", http(500), 3, failing(3), gave_up(Why.EXHAUSTED, "retry schedule exhausted")),
    (
        "timeout, schedule exhausted",
        TIMEOUT,
        3,
        failing(),
        gave_up(Why.EXHAUSTED, "retry schedule exhausted"),
    ),
    (
        "Retry-After does not extend the schedule",
        http(503, 60),
        3,
        failing(),
        gave_up(Why.EXHAUSTED, "retry schedule exhausted"),
    ),
    # A refused destination is not retried.
    (
        "refused destination",
        REFUSED,
        1,
        failing(),
        gave_up(Why.NOT_RETRIABLE, "destination not allowed: 127.0.0.1; not retried"),
    ),
    # The breaker: the fifth failure in a row opens it for the cooldown from the last failure; a retry due
    # sooner waits for it, a later one keeps its time.
    ("4 failures in a row: closed", http(500), 1, failing(4), Decision(RetryAt(s(5)))),
    ("5 failures in a row: open", http(500), 1, failing(5), Decision(RetryAt(s(30)), None, s(30))),
    ("open, retry due later", http(500), 2, failing(6), Decision(RetryAt(s(300)), None, s(30))),
    (
        "open from another instance's failure 10 s ago",
        http(500),
        1,
        failing(6, last=timedelta(seconds=10)),
        Decision(RetryAt(s(20)), None, s(20)),
    ),
    (
        "the cooldown from the last failure is over",
        http(500),
        1,
        failing(6, last=timedelta(seconds=30)),
        Decision(RetryAt(s(5))),
    ),
    (
        "open, schedule exhausted",
        http(500),
        3,
        failing(5),
        gave_up(Why.EXHAUSTED, "retry schedule exhausted", None, s(30)),
    ),
    # Failing for the disable window (5 days here): disabled, the delivery failed with the reason.
    (
        "failing for 4.9 days",
        http(500),
        1,
        failing(40, since=timedelta(days=4.9), last=timedelta(minutes=1)),
        Decision(RetryAt(s(5))),
    ),
    (
        "failing for 5 days",
        http(500),
        1,
        failing(40, since=5 * DAY, last=timedelta(minutes=1)),
        gave_up(
            Why.FAILING_TOO_LONG,
            "endpoint disabled: every attempt failed for 5.0 days (since 2026-11-20T12:00:00.000Z)",
            "every attempt failed for 5.0 days (since 2026-11-20T12:00:00.000Z)",
        ),
    ),
    (
        "failing for 6 days, a refused destination",
        REFUSED,
        1,
        failing(40, since=6 * DAY, last=timedelta(minutes=1)),
        gave_up(
            Why.FAILING_TOO_LONG,
            "endpoint disabled: every attempt failed for 6.0 days (since 2026-11-19T12:00:00.000Z)",
            "every attempt failed for 6.0 days (since 2026-11-19T12:00:00.000Z)",
        ),
    ),
    (
        "410 on an endpoint failing for 6 days",
        http(410),
        1,
        failing(40, since=6 * DAY, last=timedelta(minutes=1)),
        gave_up(Why.GONE, f"{GONE}; it is now disabled", GONE),
    ),
    (
        "failing for 5 days, its breaker open",
        TIMEOUT,
        2,
        failing(40, since=5 * DAY),
        gave_up(
            Why.FAILING_TOO_LONG,
            "endpoint disabled: every attempt failed for 5.0 days (since 2026-11-20T12:00:00.000Z)",
            "every attempt failed for 5.0 days (since 2026-11-20T12:00:00.000Z)",
            s(30),
        ),
    ),
]


@pytest.mark.parametrize(
    ("result", "attempt", "health", "expected"), [row[1:] for row in ROWS], ids=[row[0] for row in ROWS]
)
def test_the_decision_after_an_attempt(
    result: AttemptResult, attempt: int, health: Health, expected: Decision
) -> None:
    assert decide(result, attempt=attempt, health=health, policy=POLICY, now=NOW, rand=0.5) == expected


@pytest.mark.parametrize(("rand", "seconds"), [(0.0, 4.0), (0.5, 5.0), (0.75, 5.5)])
def test_a_retry_is_spread_by_the_jitter(rand: float, seconds: float) -> None:
    policy = Policy(
        retry_delays=(5.0,),
        retry_jitter=0.2,
        breaker_failures=5,
        cooldown=timedelta(seconds=30),
        disable_after=5 * DAY,
    )
    decision = decide(http(500), attempt=1, health=failing(), policy=policy, now=NOW, rand=rand)
    assert decision == Decision(RetryAt(s(seconds)))


def test_the_policy_is_read_from_the_settings() -> None:
    policy = Policy.of(load_settings(NotifierSettings))
    assert policy == Policy(
        retry_delays=(5.0, 300.0, 1800.0, 7200.0, 18000.0, 36000.0, 36000.0),
        retry_jitter=0.2,
        breaker_failures=5,
        cooldown=timedelta(seconds=30),
        disable_after=5 * DAY,
    )
