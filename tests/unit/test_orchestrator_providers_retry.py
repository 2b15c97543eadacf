"""The provider HTTP client's pure parts: the backoff schedule with jitter and Retry-After, reading
Retry-After, and the duration a provider is asked for."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from videogen_common.capabilities import nearest_duration
from videogen_orchestrator.providers.http import RetryPolicy, parse_retry_after

POLICY = RetryPolicy(attempts=6, base_delay=0.5, max_delay=4.0, retry_after_max=30.0, jitter=0.2)


@pytest.mark.parametrize(("attempt", "backoff"), [(1, 0.5), (2, 1.0), (3, 2.0), (4, 4.0), (5, 4.0)])
def test_the_backoff_doubles_up_to_its_ceiling(attempt: int, backoff: float) -> None:
    assert POLICY.delay(attempt, rand=0.5) == pytest.approx(backoff)  # rand 0.5: no jitter


@given(attempt=st.integers(1, 10), rand=st.floats(0, 1, exclude_max=True))
def test_jitter_spreads_each_delay_within_its_bound(attempt: int, rand: float) -> None:
    backoff = min(0.5 * 2 ** (attempt - 1), 4.0)
    delay = POLICY.delay(attempt, rand=rand)
    assert backoff * 0.8 <= delay < backoff * 1.2 + 1e-9


def test_a_longer_retry_after_wins_and_is_clamped() -> None:
    assert POLICY.delay(1, rand=0.5, retry_after=7.0) == 7.0
    assert POLICY.delay(1, rand=0.5, retry_after=3600.0) == 30.0  # a provider cannot park us for an hour
    assert POLICY.delay(4, rand=0.5, retry_after=1.0) == pytest.approx(4.0)  # shorter than the backoff


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        ("5", 5.0),
        (" 2.5 ", 2.5),
        ("-3", 0.0),
        ("Sat, 21 Nov 2026 08:47:30 GMT", 30.0),
        ("Sat, 21 Nov 2026 08:46:00 GMT", 0.0),
        ("soon", None),
        (None, None),
    ],
)
def test_retry_after_is_seconds_or_an_http_date(header: str | None, seconds: float | None) -> None:
    now = datetime(2026, 11, 21, 8, 47, 0, tzinfo=UTC)
    assert parse_retry_after(header, now) == seconds


@pytest.mark.parametrize(
    ("requested", "offered", "asked"),
    [
        (3, (5, 9), 5),
        (5, (5, 9), 5),
        (6, (5, 9), 9),
        (10, (5, 9), 9),  # longer than it makes: its longest
        (7, (5, 10), 10),
        (3, (4, 6, 8), 4),
        (10, (8,), 8),
        (7, range(2, 11), 7),
    ],
)
def test_a_request_gets_the_shortest_duration_not_shorter_than_asked(
    requested: int, offered: tuple[int, ...], asked: int
) -> None:
    assert nearest_duration(requested, offered) == asked


def test_a_provider_offers_some_duration() -> None:
    with pytest.raises(ValueError, match="at least one"):
        nearest_duration(5, ())
