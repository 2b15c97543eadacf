"""Media (mp4, jpg) behind one small interface, and the signed links through which the api serves it.

Links are ``{public_base_url}/v1/media/{key}?exp=…&sig=…``: stable, independent of any provider's expiring
URL and of the storage backend, and valid for the configured retention."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import os
import re
import secrets
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path, PurePosixPath
from typing import BinaryIO, Protocol
from urllib.parse import urlencode

from videogen_common.settings import CommonSettings

_KEY = re.compile(r"^[A-Za-z0-9_-]+/[A-Za-z0-9_.-]+$")

CHUNK_BYTES = 256 * 1024
CONTENT_TYPES = {".mp4": "video/mp4", ".jpg": "image/jpeg"}


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


class LocalMediaStore:
    """A folder on disk: the embedded stack's object storage. Writes are atomic (write, then rename), so a
    reader holding a file open keeps reading the version it opened. All file I/O runs in worker threads."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, key: str) -> Path:
        return self.root / check_key(key)

    async def put(self, key: str, data: bytes) -> None:
        await asyncio.to_thread(self._put, self.path(key), data)

    async def get(self, key: str) -> bytes | None:
        return await asyncio.to_thread(self._get, self.path(key))

    async def stat(self, key: str) -> MediaInfo | None:
        return await asyncio.to_thread(self._stat, self.path(key))

    @asynccontextmanager
    async def open_range(
        self, key: str, info: MediaInfo, start: int, stop: int
    ) -> AsyncIterator[AsyncIterator[bytes]]:
        file = await asyncio.to_thread(self._open, self.path(key), info, start)
        try:
            yield self._chunks(file, stop - start)
        finally:
            await asyncio.to_thread(file.close)

    @staticmethod
    async def _chunks(file: BinaryIO, count: int) -> AsyncIterator[bytes]:
        while count > 0:
            chunk = await asyncio.to_thread(file.read, min(CHUNK_BYTES, count))
            if not chunk:
                raise MediaChanged("the file is shorter than when it was opened")
            count -= len(chunk)
            yield chunk

    @staticmethod
    def _put(path: Path, data: bytes) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(8)}.partial")
        tmp.write_bytes(data)
        tmp.replace(path)

    @staticmethod
    def _get(path: Path) -> bytes | None:
        try:
            return path.read_bytes()
        except FileNotFoundError:
            return None

    @staticmethod
    def _info(st: os.stat_result) -> MediaInfo:
        return MediaInfo(
            size=st.st_size,
            etag=f"{st.st_mtime_ns:x}-{st.st_size:x}",
            modified=datetime.fromtimestamp(st.st_mtime, UTC),
        )

    @classmethod
    def _stat(cls, path: Path) -> MediaInfo | None:
        try:
            return cls._info(path.stat())
        except FileNotFoundError:
            return None

    @classmethod
    def _open(cls, path: Path, info: MediaInfo, start: int) -> BinaryIO:
        try:
            file = path.open("rb")
        except FileNotFoundError:
            raise MediaChanged("the file is gone") from None
        if cls._info(os.fstat(file.fileno())) != info:
            file.close()
            raise MediaChanged("the file was replaced")
        file.seek(start)
        return file


@asynccontextmanager
async def open_media_store(settings: CommonSettings) -> AsyncIterator[MediaStore]:
    """The media store the settings choose (``VIDEOGEN_MEDIA_BACKEND``), open for the life of the block."""
    if settings.media_backend == "local":
        yield LocalMediaStore(settings.media_dir)
        return
    # Imported here so that aiobotocore is loaded only by processes that use S3.
    from videogen_common.s3_media import open_s3_media_store  # noqa: PLC0415

    async with open_s3_media_store(settings) as store:
        yield store


def _media_sig(signing_key: str, key: str, expires: int) -> str:
    return hmac.new(signing_key.encode(), f"{key}\n{expires}".encode(), hashlib.sha256).hexdigest()


def signed_media_url(
    base_url: str, signing_key: str, key: str, *, now: datetime, retention: timedelta
) -> str:
    expires = int((now + retention).timestamp())
    query = urlencode({"exp": expires, "sig": _media_sig(signing_key, check_key(key), expires)})
    return f"{base_url.rstrip('/')}/v1/media/{key}?{query}"


def verify_media_link(signing_key: str, key: str, expires: int, sig: str, *, now: datetime) -> bool:
    if expires < now.timestamp():
        return False
    # compare_digest refuses str with non-ASCII characters (TypeError); a signature we issued is hex anyway.
    return sig.isascii() and hmac.compare_digest(_media_sig(signing_key, key, expires), sig)
