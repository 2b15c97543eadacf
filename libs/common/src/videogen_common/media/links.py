"""Signed media links: ``{public_base_url}/v1/media/{key}?exp=…&sig=…``, stable, independent of any provider's
expiring URL and of the storage backend, and valid for the configured retention."""

from __future__ import annotations

import hashlib
import hmac
from datetime import datetime, timedelta
from urllib.parse import urlencode

from videogen_common.media.storage import check_key


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
