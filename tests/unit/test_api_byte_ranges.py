"""videogen_api.byte_ranges: what part of a file a GET answers with, for each Range and validator header."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from aiohttp.test_utils import make_mocked_request
from hypothesis import given
from hypothesis import strategies as st

from videogen_api.byte_ranges import Plan, plan
from videogen_common.media import MediaInfo

MODIFIED = datetime(2026, 11, 21, 8, 47, 0, tzinfo=UTC)
HTTP_DATE = "Sat, 21 Nov 2026 08:47:00 GMT"
INFO = MediaInfo(size=1000, etag="abc-123", modified=MODIFIED)


def plan_for(headers: dict[str, str], info: MediaInfo = INFO) -> Plan:
    return plan(make_mocked_request("GET", "/v1/media/gen_1/video.mp4", headers=headers), info)


def rfc_9110(size: int, first: int | None, last: int | None) -> Plan:
    """The answer RFC 9110 §14.1.2 gives for ``bytes={first}-{last}``, worked out independently."""
    if first is None:  # suffix: the last `last` bytes (last > 0 here)
        assert last is not None
        return Plan(206, max(size - last, 0), size) if size > 0 else Plan(416)
    if last is not None and last < first:
        return Plan(200, 0, size)  # invalid: ignored
    if first >= size:
        return Plan(416)
    return Plan(206, first, size if last is None else min(last + 1, size))


@given(
    size=st.integers(0, 5000),
    first=st.none() | st.integers(0, 6000),
    last=st.none() | st.integers(0, 6000),
)
def test_single_ranges_follow_rfc_9110(size: int, first: int | None, last: int | None) -> None:
    # aiohttp reads "bytes=-0" as "bytes=0-"; a zero-length suffix is left out.
    if first is None and not last:
        return
    header = f"bytes={'' if first is None else first}-{'' if last is None else last}"
    info = MediaInfo(size=size, etag="e", modified=MODIFIED)
    assert plan_for({"Range": header}, info) == rfc_9110(size, first, last)


def test_no_range_is_the_whole_file() -> None:
    assert plan_for({}) == Plan(200, 0, 1000)


def test_an_empty_file_is_served_empty() -> None:
    assert plan_for({}, MediaInfo(size=0, etag="e", modified=MODIFIED)) == Plan(200, 0, 0)


@pytest.mark.parametrize(
    "headers",
    [
        {"If-None-Match": '"abc-123"'},
        {"If-None-Match": 'W/"abc-123"'},
        {"If-None-Match": '"x", "abc-123"'},
        {"If-None-Match": "*"},
        {"If-Modified-Since": HTTP_DATE},
        {"If-Modified-Since": "Sun, 22 Nov 2026 00:00:00 GMT"},
        {"If-None-Match": '"abc-123"', "Range": "bytes=0-9"},
    ],
)
def test_the_clients_current_copy_is_304(headers: dict[str, str]) -> None:
    assert plan_for(headers) == Plan(304)


@pytest.mark.parametrize(
    "headers",
    [
        {"If-None-Match": '"other"'},
        {"If-Modified-Since": "Fri, 20 Nov 2026 00:00:00 GMT"},
        # If-None-Match wins over If-Modified-Since.
        {"If-None-Match": '"other"', "If-Modified-Since": HTTP_DATE},
        {"If-Modified-Since": "not a date"},
    ],
)
def test_an_older_copy_gets_the_file(headers: dict[str, str]) -> None:
    assert plan_for(headers) == Plan(200, 0, 1000)


def test_modification_times_compare_in_whole_seconds() -> None:
    info = MediaInfo(size=10, etag="e", modified=MODIFIED + timedelta(milliseconds=700))
    assert plan_for({"If-Modified-Since": HTTP_DATE}, info) == Plan(304)
    assert plan_for({"Range": "bytes=0-1", "If-Range": HTTP_DATE}, info) == Plan(206, 0, 2)


@pytest.mark.parametrize(
    ("if_range", "expected"),
    [
        ('"abc-123"', Plan(206, 0, 10)),
        (HTTP_DATE, Plan(206, 0, 10)),
        ('"other"', Plan(200, 0, 1000)),
        ('W/"abc-123"', Plan(200, 0, 1000)),  # If-Range needs a strong validator
        ("Fri, 20 Nov 2026 00:00:00 GMT", Plan(200, 0, 1000)),
        ("Sun, 22 Nov 2026 00:00:00 GMT", Plan(200, 0, 1000)),  # only an exact date is the same version
        ("garbage", Plan(200, 0, 1000)),
    ],
)
def test_if_range_serves_the_range_only_for_the_same_version(if_range: str, expected: Plan) -> None:
    assert plan_for({"Range": "bytes=0-9", "If-Range": if_range}) == expected


@pytest.mark.parametrize("header", ["bytes=0-1,4-5", "items=0-9", "bytes=", "bytes=a-b", "0-9"])
def test_ranges_it_does_not_serve_are_ignored(header: str) -> None:
    assert plan_for({"Range": header}) == Plan(200, 0, 1000)
