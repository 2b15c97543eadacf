"""Opaque, time-ordered identifiers: a prefix, then 10 chars of millisecond time and 16 of randomness
(Crockford base32)."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from datetime import datetime

from videogen_common.clock import to_millis

_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"

IdFactory = Callable[[str, datetime], str]


def _b32(value: int, length: int) -> str:
    chars = []
    for _ in range(length):
        chars.append(_ALPHABET[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def new_id(prefix: str, moment: datetime) -> str:
    millis = to_millis(moment)
    return f"{prefix}_{_b32(millis, 10)}{_b32(secrets.randbits(80), 16)}"
