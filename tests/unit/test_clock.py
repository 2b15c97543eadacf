"""videogen_common.clock."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta, timezone

import pytest

from videogen_common.clock import SystemClock, isoformat


@pytest.mark.parametrize(
    ("moment", "expected"),
    [
        (datetime(2026, 11, 21, 8, 47, 0, 123000, tzinfo=UTC), "2026-11-21T08:47:00.123Z"),
        (datetime(2026, 11, 21, 8, 47, 0, tzinfo=UTC), "2026-11-21T08:47:00.000Z"),
        # Truncated to the millisecond, never rounded up.
        (datetime(2026, 11, 21, 8, 47, 0, 123999, tzinfo=UTC), "2026-11-21T08:47:00.123Z"),
        (datetime(2026, 12, 31, 23, 59, 59, 999999, tzinfo=UTC), "2026-12-31T23:59:59.999Z"),
        # Naive datetimes are taken as UTC.
        (datetime(2026, 11, 21, 8, 47, 0, 5000), "2026-11-21T08:47:00.005Z"),
        # Other offsets are converted to UTC.
        (datetime(2026, 11, 21, 10, 47, 0, tzinfo=timezone(timedelta(hours=2))), "2026-11-21T08:47:00.000Z"),
        (
            datetime(2026, 11, 20, 23, 17, 0, 1000, tzinfo=timezone(timedelta(hours=-9, minutes=-30))),
            "2026-11-21T08:47:00.001Z",
        ),
        (datetime(2026, 11, 21, 8, 47, tzinfo=timezone(timedelta(0))), "2026-11-21T08:47:00.000Z"),
    ],
)
def test_isoformat(moment: datetime, expected: str) -> None:
    assert isoformat(moment) == expected


def test_isoformat_naive_is_not_local_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    try:
        assert isoformat(datetime(2026, 1, 1, 12, 0)) == "2026-01-01T12:00:00.000Z"
    finally:
        monkeypatch.undo()
        time.tzset()


def test_system_clock_is_utc_and_millisecond_precise() -> None:
    now = SystemClock().now()
    assert now.utcoffset() == timedelta(0)
    assert now.microsecond % 1000 == 0
    assert abs(now - datetime.now(UTC)) < timedelta(seconds=5)
