"""videogen_common.ids: prefix, length, time order, uniqueness."""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime, timedelta

import pytest

from videogen_common.ids import derived_id, new_id

CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"
MOMENT = datetime(2026, 11, 21, 8, 47, 0, 123000, tzinfo=UTC)


def _decode_time(ident: str) -> int:
    """The millisecond timestamp held by the 10 characters after the prefix (decoded independently)."""
    value = 0
    for char in ident.split("_", 1)[1][:10]:
        value = value * 32 + CROCKFORD.index(char)
    return value


@pytest.mark.parametrize("prefix", ["gen", "wh", "evt", "del"])
def test_prefix_and_length(prefix: str) -> None:
    ident = new_id(prefix, MOMENT)
    assert ident.startswith(prefix + "_")
    body = ident.removeprefix(prefix + "_")
    assert len(body) == 26
    assert re.fullmatch(f"[{CROCKFORD}]{{26}}", body)


def test_time_part_holds_the_millisecond() -> None:
    ident = new_id("gen", MOMENT)
    assert _decode_time(ident) == 1795250820123
    assert _decode_time(ident) == int((MOMENT - datetime(1970, 1, 1, tzinfo=UTC)) / timedelta(milliseconds=1))


def test_same_millisecond_shares_the_time_part() -> None:
    a, b = new_id("gen", MOMENT), new_id("gen", MOMENT + timedelta(microseconds=999))
    assert a[:14] == b[:14]
    assert a != b


def test_later_milliseconds_sort_after() -> None:
    moments = [MOMENT + timedelta(milliseconds=ms) for ms in (0, 1, 2, 3, 10, 999, 1000, 60_000, 86_400_000)]
    moments += [MOMENT + timedelta(days=365 * years) for years in (1, 5)]
    ids = [new_id("gen", m) for m in moments]
    assert sorted(ids) == ids
    assert len(set(ids)) == len(ids)


def test_consecutive_milliseconds_sort_after_over_a_range() -> None:
    previous = new_id("gen", MOMENT)
    for ms in range(1, 2000):
        current = new_id("gen", MOMENT + timedelta(milliseconds=ms))
        assert current > previous
        previous = current


def test_unique() -> None:
    ids = {new_id("gen", MOMENT) for _ in range(5000)}
    assert len(ids) == 5000


def test_time_part_is_exact_after_2038() -> None:
    moment = datetime(2038, 1, 19, 10, 23, 31, 811000, tzinfo=UTC)
    assert _decode_time(new_id("gen", moment)) == 2147509411811


def test_random_part_encodes_eighty_random_bits(monkeypatch: pytest.MonkeyPatch) -> None:
    random = bytes(range(0xA5, 0xAF))  # 10 bytes
    monkeypatch.setattr("videogen_common.ids.os.urandom", lambda n: random[:n])
    value = int.from_bytes(random)
    expected = "".join(CROCKFORD[(value >> shift) & 31] for shift in range(75, -1, -5))
    assert new_id("gen", MOMENT)[14:] == expected


def test_time_part_follows_the_moment_after_a_repeat() -> None:
    later = MOMENT + timedelta(milliseconds=1)
    ids = [new_id("gen", m) for m in (MOMENT, MOMENT, later, MOMENT)]
    assert [_decode_time(i) for i in ids] == [1795250820123, 1795250820123, 1795250820124, 1795250820123]


def test_derived_id_is_the_same_for_the_same_parts() -> None:
    assert derived_id("msg", "evt_a", "wh_b") == derived_id("msg", "evt_a", "wh_b")
    body = derived_id("msg", "evt_a", "wh_b").removeprefix("msg_")
    assert re.fullmatch(f"[{CROCKFORD}]{{26}}", body)


def test_derived_id_encodes_130_bits_of_the_parts_hash() -> None:
    digest = hashlib.blake2b(b"evt_a\x1fwh_b", digest_size=17).digest()
    value = int.from_bytes(digest) >> 6
    expected = "".join(CROCKFORD[(value >> shift) & 31] for shift in range(125, -1, -5))
    assert derived_id("msg", "evt_a", "wh_b") == "msg_" + expected


def test_derived_ids_differ_when_any_part_does() -> None:
    # The separator keeps ("ab", "c") and ("a", "bc") apart.
    cases = [("evt_a", "wh_b"), ("evt_a", "wh_c"), ("evt_b", "wh_b"), ("evt_ab", "c"), ("evt_a", "bc")]
    ids = {derived_id("msg", *parts) for parts in cases}
    ids |= {derived_id("msg", f"evt_{n}", "wh_x") for n in range(5000)}
    assert len(ids) == len(cases) + 5000
