"""The media store's interface: keys, what a stat answers, and the content types we serve."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import datetime
from pathlib import PurePosixPath
from typing import Protocol

_KEY = re.compile(r"^[A-Za-z0-9_-]+/[A-Za-z0-9_.-]+$")

CHUNK_BYTES = 256 * 1024
CONTENT_TYPES = {".mp4": "video/mp4", ".jpg": "image/jpeg", ".png": "image/png", ".webp": "image/webp"}


def content_type_of(key: str) -> str:
    return CONTENT_TYPES.get(PurePosixPath(key).suffix, "application/octet-stream")


@dataclass(frozen=True)
class MediaInfo:
    """What the api needs to answer conditional and range requests without reading the object."""

    size: int
    etag: str  # an opaque, strong validator, without the quotes of the HTTP header
    modified: datetime


class MediaChanged(Exception):
    """The object was replaced or removed between ``stat`` and ``open_range``; stat it again."""


class MediaStore(Protocol):
    """Object storage for media. Keys are ``{folder}/{file}`` (see ``check_key``)."""

    async def put(self, key: str, data: bytes) -> None: ...

    async def get(self, key: str) -> bytes | None:
        """The whole object, or None if there is none."""
        ...

    async def stat(self, key: str) -> MediaInfo | None: ...

    def open_range(
        self, key: str, info: MediaInfo, start: int, stop: int
    ) -> AbstractAsyncContextManager[AsyncIterator[bytes]]:
        """Bytes ``[start, stop)`` of the object ``info`` describes, in chunks. Entering opens the object
        (so a failure surfaces before a response is started) and raises ``MediaChanged`` if it is no longer
        the one ``info`` describes; leaving releases it."""
        ...


def check_key(key: str) -> str:
    """``{folder}/{file}``, both plain names: no traversal, no dot-only segments, no trailing newline."""
    if not _KEY.fullmatch(key) or ".." in key or any(part.strip(".") == "" for part in key.split("/")):
        raise ValueError(f"bad media key {key!r}")
    return key
