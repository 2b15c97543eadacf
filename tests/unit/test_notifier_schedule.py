"""The retry delay: the schedule, spread by ±20% jitter by default, and a receiver's Retry-After."""

from __future__ import annotations

import pytest

from videogen_common.settings import load_settings
from videogen_notifier.schedule import RETRY_AFTER_MAX_SECONDS, retry_delay
from videogen_notifier.settings import NotifierSettings

SCHEDULE = [5.0, 300.0, 1800.0]


def test_the_default_jitter_is_twenty_percent() -> None:
    assert load_settings(NotifierSettings).retry_jitter == 0.2


@pytest.mark.parametrize(("rand", "factor"), [(0.0, 0.8), (0.25, 0.9), (0.5, 1.0), (0.999999, 1.2)])
def test_jitter_spreads_each_delay_within_plus_or_minus_twenty_percent(rand: float, factor: float) -> None:
    for attempt, scheduled in enumerate(SCHEDULE, start=1):
        delay = retry_delay(SCHEDULE, attempt, jitter=0.2, rand=rand)
        assert delay == pytest.approx(scheduled * factor, rel=1e-5)


def test_the_schedule_is_exhausted_after_its_last_delay() -> None:
    assert retry_delay(SCHEDULE, len(SCHEDULE) + 1, jitter=0.2, rand=0.5) is None


def test_a_longer_retry_after_wins_and_is_clamped_to_an_hour() -> None:
    assert retry_delay(SCHEDULE, 1, jitter=0.0, rand=0.5, retry_after=120) == 120
    assert retry_delay(SCHEDULE, 2, jitter=0.0, rand=0.5, retry_after=120) == 300
    assert retry_delay(SCHEDULE, 1, jitter=0.0, rand=0.5, retry_after=86_400) == RETRY_AFTER_MAX_SECONDS
