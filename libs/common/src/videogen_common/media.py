"""Media (mp4, jpg) behind one small interface, and the signed links through which the api serves it.

Links are ``{public_base_url}/v1/media/{key}?exp=…&sig=…``: stable, independent of any provider's expiring
URL, and valid for the configured retention."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import re
import secrets
from datetime import datetime, timedelta
from pathlib import Path
from typing import Protocol
from urllib.parse import urlencode

_KEY = re.compile(r"^[A-Za-z0-9_-]+/[A-Za-z0-9_.-]+$")


class MediaStore(Protocol):
    async def put(self, key: str, data: bytes) -> None: ...
    async def get(self, key: str) -> bytes | None: ...


def check_key(key: str) -> str:
    """``{folder}/{file}``, both plain names: no traversal, no dot-only segments, no trailing newline."""
    if not _KEY.fullmatch(key) or ".." in key or any(part.strip(".") == "" for part in key.split("/")):
        raise ValueError(f"bad media key {key!r}")
    return key


class LocalMediaStore:
    """A folder on disk: the embedded stack's object storage. Writes are atomic (write, then rename)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, key: str) -> Path:
        return self.root / check_key(key)

    async def put(self, key: str, data: bytes) -> None:
        await asyncio.to_thread(self._put, self.path(key), data)

    async def get(self, key: str) -> bytes | None:
        return await asyncio.to_thread(self._get, self.path(key))

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


CONTENT_TYPES = {".mp4": "video/mp4", ".jpg": "image/jpeg"}
