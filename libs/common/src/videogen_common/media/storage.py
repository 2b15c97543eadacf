"""The media store's interface: keys, what a stat answers, and the content types we serve."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import datetime
from pathlib import PurePosixPath
from typing import Protocol

_KEY = re.compile(r"^[A-Za-z0-9_-]+/[A-Za-z0-9_.-]+$")
_FOLDER = re.compile(r"^[A-Za-z0-9_-]+$")

CHUNK_BYTES = 256 * 1024
# The most keys one S3 DeleteObjects call takes.
DELETE_BATCH = 1000
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

    async def delete(self, keys: Sequence[str]) -> None:
        """Remove these objects (S3: one DeleteObjects call per ``DELETE_BATCH`` keys). A key with no object,
        one already deleted included, is not an error; a key that could not be deleted raises
        ``MediaDeleteFailed``."""
        ...

    async def keys_in(self, folder: str) -> list[str]:
        """The keys of every object in ``folder`` (a generation's or an upload's id): ``{folder}/…``."""
        ...


class MediaDeleteFailed(Exception):
    """Some objects could not be deleted (the storage said why); the others were. ``keys``: which."""

    def __init__(self, message: str, keys: Sequence[str]) -> None:
        super().__init__(message)
        self.keys = tuple(keys)


def check_folder(folder: str) -> str:
    """A plain folder name, as a key's first part."""
    if not _FOLDER.fullmatch(folder):
        raise ValueError(f"bad media folder {folder!r}")
    return folder


def check_key(key: str) -> str:
    """``{folder}/{file}``, both plain names: no traversal, no dot-only segments, no trailing newline."""
    if not _KEY.fullmatch(key) or ".." in key or any(part.strip(".") == "" for part in key.split("/")):
        raise ValueError(f"bad media key {key!r}")
    return key
