"""fal's webhook signatures, checked as fal documents them: each call carries ``X-Fal-Webhook-Request-Id``,
``X-Fal-Webhook-User-Id``, ``X-Fal-Webhook-Timestamp`` (seconds since the epoch) and
``X-Fal-Webhook-Signature`` (hex); the signed message is the request id, the user id, the timestamp and the
SHA-256 hex of the body, joined by newlines, signed with ED25519 by one of the keys fal publishes as a JWKS
(``VIDEOGEN_FAL_JWKS_URL``). A timestamp more than five minutes from ours is refused (an old call replayed).

The keys are fetched on first use and kept ``cache_seconds``; a signature none of them verifies (a key fal
added since) fetches them again, at most once per ``refetch_seconds``, so forged calls cannot make us fetch
the JWKS more often than that."""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

import aiohttp
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

log = logging.getLogger(__name__)

REQUEST_ID = "X-Fal-Webhook-Request-Id"
USER_ID = "X-Fal-Webhook-User-Id"
TIMESTAMP = "X-Fal-Webhook-Timestamp"
SIGNATURE = "X-Fal-Webhook-Signature"
TOLERANCE_SECONDS = 300.0
FETCH_TIMEOUT_SECONDS = 10.0


def signed_message(request_id: str, user_id: str, timestamp: str, body: bytes) -> bytes:
    """What fal signs for one call."""
    return "\n".join([request_id, user_id, timestamp, hashlib.sha256(body).hexdigest()]).encode()


def parse_jwks(doc: Any) -> list[Ed25519PublicKey]:
    """The ED25519 public keys of a JWKS document (``{"keys": [{"kty": "OKP", "crv": "Ed25519", "x": …}]}``;
    other keys are skipped)."""
    keys: list[Ed25519PublicKey] = []
    entries = doc.get("keys") if isinstance(doc, dict) else None
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict) or entry.get("kty") != "OKP" or entry.get("crv") != "Ed25519":
            continue
        x = entry.get("x")
        if not isinstance(x, str):
            continue
        try:
            raw = base64.urlsafe_b64decode(x + "=" * (-len(x) % 4))
            keys.append(Ed25519PublicKey.from_public_bytes(raw))
        except (ValueError, binascii.Error):
            continue
    return keys


class FalKeys:
    """fal's published keys, cached, and the check of one call's signature against them."""

    def __init__(
        self,
        url: str,
        *,
        cache_seconds: float,
        refetch_seconds: float,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._url = url
        self._cache_seconds = cache_seconds
        self._refetch_seconds = refetch_seconds
        self._monotonic = monotonic
        self._keys: list[Ed25519PublicKey] = []
        self._fetched_at: float | None = None
        self._lock = asyncio.Lock()
        self._session: aiohttp.ClientSession | None = None
        self.fetches = 0

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def verify(self, headers: Mapping[str, str], body: bytes, now: float) -> bool:
        """Whether the call's headers carry fal's signature of ``body``, made within five minutes of ``now``
        (seconds since the epoch)."""
        request_id, user_id = headers.get(REQUEST_ID), headers.get(USER_ID)
        timestamp, signature = headers.get(TIMESTAMP), headers.get(SIGNATURE)
        if not (request_id and user_id and timestamp and signature):
            return False
        try:
            stamped = int(timestamp)
            raw_signature = bytes.fromhex(signature)
        except ValueError:
            return False
        if abs(now - stamped) > TOLERANCE_SECONDS:
            return False
        message = signed_message(request_id, user_id, timestamp, body)
        if self._stale():
            await self._fetch(force=False)
        if _any_verifies(self._keys, raw_signature, message):
            return True
        # Perhaps a key fal added since: fetched again, at most once per refetch interval.
        if await self._fetch(force=True):
            return _any_verifies(self._keys, raw_signature, message)
        return False

    def _stale(self) -> bool:
        return self._fetched_at is None or self._monotonic() - self._fetched_at >= self._cache_seconds

    async def _fetch(self, *, force: bool) -> bool:
        """Fetch the keys (unless another call just did, or ``force`` and the last fetch was within the
        refetch interval); True if new keys were read. A failed fetch keeps the keys already known."""
        async with self._lock:
            now = self._monotonic()
            if self._fetched_at is not None:
                since = now - self._fetched_at
                if force and since < self._refetch_seconds:
                    return False
                if not force and since < self._cache_seconds:
                    return False
            self._fetched_at = now
            self.fetches += 1
            try:
                if self._session is None:
                    self._session = aiohttp.ClientSession(
                        timeout=aiohttp.ClientTimeout(total=FETCH_TIMEOUT_SECONDS)
                    )
                async with self._session.get(self._url) as response:
                    response.raise_for_status()
                    keys = parse_jwks(await response.json(content_type=None))
            except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
                extra = {"url": self._url, "error": repr(exc)}
                log.warning("could not fetch fal's webhook keys", extra=extra)
                return False
            if not keys:
                log.warning("fal's JWKS held no ED25519 key", extra={"url": self._url})
                return False
            self._keys = keys
            return True


def _any_verifies(keys: list[Ed25519PublicKey], signature: bytes, message: bytes) -> bool:
    for key in keys:
        try:
            key.verify(signature, message)
        except InvalidSignature:
            continue
        return True
    return False
