"""Opaque, time-ordered identifiers: a prefix, then 10 chars of millisecond time and 16 of randomness
(Crockford base32)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from datetime import datetime
from functools import lru_cache

from videogen_common.clock import to_millis

_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
# Every 10-bit value as its two characters: an id is 13 lookups (ids are made on every request).
_PAIRS = tuple(a + b for a in _ALPHABET for b in _ALPHABET)
_TIME_BITS = (1 << 50) - 1  # 10 characters of time; earlier or later moments keep their low 50 bits

IdFactory = Callable[[str, datetime], str]


@lru_cache(maxsize=8)  # the ids made while handling one request (or one event) share their moment
def _time_part(moment: datetime) -> str:
    m = to_millis(moment) & _TIME_BITS
    p = _PAIRS
    return p[m >> 40] + p[(m >> 30) & 1023] + p[(m >> 20) & 1023] + p[(m >> 10) & 1023] + p[m & 1023]


def new_id(prefix: str, moment: datetime) -> str:
    r = int.from_bytes(os.urandom(10))  # 80 random bits, from the same source as ``secrets``
    p = _PAIRS
    return (
        f"{prefix}_{_time_part(moment)}{p[r >> 70]}{p[(r >> 60) & 1023]}{p[(r >> 50) & 1023]}"
        f"{p[(r >> 40) & 1023]}{p[(r >> 30) & 1023]}{p[(r >> 20) & 1023]}{p[(r >> 10) & 1023]}{p[r & 1023]}"
    )


def derived_id(prefix: str, *parts: str) -> str:
    """An id of ``new_id``'s length made from a hash of ``parts`` (130 bits of BLAKE2b) instead of time and
    randomness: the same parts always give the same id, so a record keyed by it is created at most once
    whoever makes it and however often, with no index beside the one on ``_id``. Not time-ordered."""
    digest = hashlib.blake2b("\x1f".join(parts).encode(), digest_size=17).digest()
    h = int.from_bytes(digest) >> 6  # 136 bits, 130 kept: 13 pairs of characters
    p = _PAIRS
    return prefix + "_" + "".join(p[(h >> (10 * i)) & 1023] for i in range(12, -1, -1))
