"""Webhook signatures: the spec's ``X-Service-Signature`` and Standard Webhooks' ``webhook-signature``."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

SECRET_PREFIX = "whsec_"  # noqa: S105 — a prefix, not a secret


def new_webhook_secret() -> str:
    """``whsec_`` + base64 of 32 random bytes."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode("ascii")


def service_signature(secret: str, body: bytes) -> str:
    """Lowercase hex HMAC-SHA256 of the exact body bytes, keyed with the secret string as issued (UTF-8)."""
    return hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()


def _standard_key(secret: str) -> bytes:
    # Standard Webhooks: the key is the base64 part after the prefix, decoded.
    return base64.b64decode(secret.removeprefix(SECRET_PREFIX))


def standard_signature(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    """``v1,`` + base64(HMAC-SHA256(key, f"{id}.{timestamp}.{body}"))."""
    signed = f"{msg_id}.{timestamp}.".encode() + body
    digest = hmac.new(_standard_key(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode("ascii")


def hash_api_key(key: str) -> str:
    """API keys are stored only as this hash. They are 256-bit random, so a fast hash is enough."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


API_KEY_PREFIX = "vg_"


def new_api_key() -> str:
    return API_KEY_PREFIX + secrets.token_urlsafe(32)
