"""videogen_api.paging: opaque cursors and the limit parameter."""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta

import pytest
from multidict import MultiDict
from pydantic import BaseModel

from videogen_api.paging import DEFAULT_LIMIT, Cursor, Limit, decode_cursor, encode_cursor
from videogen_api.problems import Problem
from videogen_api.query import parse_query
from videogen_common.repositories.paging import after

MOMENT = datetime(2026, 11, 21, 8, 47, 0, 123000, tzinfo=UTC)


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


@pytest.mark.parametrize(
    ("created_at", "item_id"),
    [
        (MOMENT, "gen_01"),
        (datetime(2026, 1, 1, tzinfo=UTC), "gen_x"),
        (datetime(2037, 12, 31, 23, 59, 59, 999000, tzinfo=UTC), "gen_01"),
        (MOMENT, 'quote " slash \\ é ✓'),
        (MOMENT, ""),
    ],
)
def test_round_trip(created_at: datetime, item_id: str) -> None:
    assert decode_cursor(encode_cursor(created_at, item_id)) == (created_at, item_id)


def test_round_trip_every_millisecond_of_a_second() -> None:
    for ms in range(1000):
        moment = MOMENT.replace(microsecond=ms * 1000)
        assert decode_cursor(encode_cursor(moment, "g"))[0] == moment


def test_cursor_is_url_safe_and_unpadded() -> None:
    cursor = encode_cursor(MOMENT, "gen_01??>>~~")
    assert "=" not in cursor
    assert set(cursor) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def test_decoded_time_is_utc() -> None:
    created_at, _ = decode_cursor(encode_cursor(MOMENT.astimezone(), "g"))
    assert created_at.utcoffset() == timedelta(0)


@pytest.mark.parametrize(
    "cursor",
    [
        "",
        "!!!",
        "abc",
        "é",
        "not a cursor",
        _b64(b"{}"),
        _b64(b"[]"),
        _b64(b"[1]"),
        _b64(b'[1, "a", 3]'),
        _b64(b'["x", "y"]'),
        _b64(b"[1, 2]"),
        _b64(b'[1.5, "a"]'),
        _b64(b'{"a": 1, "b": 2}'),
        _b64(b"null"),
        _b64(b"garbage"),
        _b64(b'[99999999999999999, "a"]'),
        _b64(b'[-99999999999999999, "a"]'),
    ],
    ids=repr,
)
def test_garbage_cursor_is_422(cursor: str) -> None:
    with pytest.raises(Problem) as info:
        decode_cursor(cursor)
    assert info.value.status == 422
    assert info.value.slug == "validation-error"
    assert [e["field"] for e in info.value.extensions["errors"]] == ["cursor"]


def test_before_cursor() -> None:
    # The position a cursor holds keeps what comes strictly after it, newest first (ties by id, descending).
    assert after(None)({"created_at": MOMENT, "_id": "gen_99"})
    later = after(decode_cursor(encode_cursor(MOMENT, "gen_01")))
    earlier = MOMENT - timedelta(milliseconds=1)
    assert later({"created_at": earlier, "_id": "gen_99"})
    assert later({"created_at": MOMENT, "_id": "gen_00"})
    assert not later({"created_at": MOMENT, "_id": "gen_01"})
    assert not later({"created_at": MOMENT, "_id": "gen_02"})
    assert not later({"created_at": MOMENT + timedelta(milliseconds=1), "_id": "gen_00"})


def test_before_cursor_garbage_is_422() -> None:
    with pytest.raises(Problem) as info:
        decode_cursor("!!!")
    assert info.value.status == 422


def test_round_trip_after_2038() -> None:
    moment = datetime(2038, 1, 19, 10, 23, 31, 811000, tzinfo=UTC)
    assert decode_cursor(encode_cursor(moment, "gen_01"))[0] == moment


class _Listing(BaseModel):
    """The paging fields every listing's query model ends with."""

    limit: Limit = DEFAULT_LIMIT
    cursor: Cursor = None


def _limit(raw: str | None) -> int:
    return parse_query(_Listing, MultiDict([] if raw is None else [("limit", raw)])).limit


@pytest.mark.parametrize(("raw", "limit"), [(None, 20), ("1", 1), ("20", 20), ("99", 99), ("100", 100)])
def test_parse_limit_ok(raw: str | None, limit: int) -> None:
    assert _limit(raw) == limit


@pytest.mark.parametrize("raw", ["0", "101", "abc", "-1", "", "5.0", "1e2", "9" * 30])
def test_parse_limit_out_of_bounds_is_422(raw: str) -> None:
    with pytest.raises(Problem) as info:
        _limit(raw)
    assert info.value.status == 422
    assert info.value.extensions["errors"][0]["field"] == "limit"
