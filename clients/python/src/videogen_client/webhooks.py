"""Verifying a videogen webhook delivery: ``unwrap`` for a typed event, ``verify`` for the plain payload.

    from videogen_client.webhooks import WebhookVerificationError, unwrap

    try:
        event = unwrap(secret, request.headers, await request.read())
    except WebhookVerificationError:
        return 400
    # drop duplicates by request.headers["webhook-id"]: a delivery may arrive more than once

``verify`` checks both signatures a delivery carries, with the secret exactly as issued (``whsec_…``):

- ``webhook-signature`` (Standard Webhooks): ``v1,`` + base64 HMAC-SHA256 of
  ``{webhook-id}.{webhook-timestamp}.{body}``, keyed with the base64-decoded part of the secret after
  ``whsec_``; and ``webhook-timestamp`` must be within ``tolerance_seconds`` of now, so a captured delivery
  cannot be replayed later.
- ``X-Service-Signature``: lowercase hex HMAC-SHA256 of the body, keyed with the whole secret string.

While a secret is being rotated both headers carry one signature per live secret, space-separated; a delivery
is genuine if any of them matches the secret you hold. Comparisons are constant-time.

Only the standard library (and the SDK's models for ``unwrap``): copy ``verify`` anywhere."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from videogen_client._keywords import called_like
from videogen_client.models import WebhookEvent

__all__ = ["DEFAULT_TOLERANCE_SECONDS", "WebhookEvent", "WebhookVerificationError", "unwrap", "verify"]

DEFAULT_TOLERANCE_SECONDS = 300
SECRET_PREFIX = "whsec_"  # noqa: S105 — a prefix, not a secret


class WebhookVerificationError(ValueError):
    """The delivery is not verifiably from videogen (or is too old or too new); the message says why."""


def verify(
    secret: str,
    headers: Mapping[str, str],
    body: bytes,
    *,
    tolerance_seconds: float = DEFAULT_TOLERANCE_SECONDS,
    now: float | datetime | None = None,
) -> dict[str, Any]:
    """Check a delivery's signatures and timestamp; return its parsed JSON payload.

    ``headers`` may be any mapping (a dict, aiohttp's, Flask's, Django's ``request.headers``); names are
    matched without regard to case. ``body`` must be the exact bytes received, before any JSON parsing.
    ``now`` (Unix seconds or an aware datetime) is for tests; it defaults to the current time."""
    lowered = {name.lower(): value for name, value in headers.items()}
    msg_id = _header(lowered, "webhook-id")
    raw_timestamp = _header(lowered, "webhook-timestamp")
    standard = _header(lowered, "webhook-signature")
    service = _header(lowered, "X-Service-Signature")

    try:
        timestamp = int(raw_timestamp)
    except ValueError:
        raise WebhookVerificationError(f"webhook-timestamp is not Unix seconds: {raw_timestamp!r}") from None
    current = time.time() if now is None else now.timestamp() if isinstance(now, datetime) else float(now)
    if timestamp < current - tolerance_seconds:
        raise WebhookVerificationError(
            f"webhook-timestamp is {current - timestamp:.0f} s old, more than the {tolerance_seconds:g} s "
            "tolerance (a replay, or a clock far off)"
        )
    if timestamp > current + tolerance_seconds:
        raise WebhookVerificationError(
            f"webhook-timestamp is {timestamp - current:.0f} s in the future, more than the "
            f"{tolerance_seconds:g} s tolerance (a clock far off)"
        )

    signed = f"{msg_id}.{raw_timestamp}.".encode() + body
    expected = hmac.new(_standard_key(secret), signed, hashlib.sha256).digest()
    if not _any_matches(expected, _standard_signatures(standard)):
        raise WebhookVerificationError("no webhook-signature matches this secret")

    expected_hex = hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest().encode("ascii")
    if not _any_matches(expected_hex, [s.encode("ascii", "replace") for s in service.split()]):
        raise WebhookVerificationError("no X-Service-Signature matches this secret")

    try:
        payload = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise WebhookVerificationError(f"the body is not JSON: {exc}") from None
    if not isinstance(payload, dict):
        raise WebhookVerificationError("the body is not a JSON object")
    return payload


@called_like(verify)
def unwrap(*arguments: Any, **options: Any) -> WebhookEvent:
    """``verify`` (the same arguments), then the payload as a typed event (``event.generation`` for a
    ``video.*`` event)."""
    payload = verify(*arguments, **options)
    try:
        return WebhookEvent.model_validate(payload)
    except ValueError as exc:
        raise WebhookVerificationError(f"the payload is not a videogen event: {exc}") from None


def _header(headers: Mapping[str, str], name: str) -> str:
    value = headers.get(name.lower())
    if not value:
        raise WebhookVerificationError(f"missing header {name}")
    return value


def _standard_key(secret: str) -> bytes:
    try:
        return base64.b64decode(secret.removeprefix(SECRET_PREFIX), validate=True)
    except (binascii.Error, ValueError):
        raise WebhookVerificationError("the secret is not a whsec_ secret as issued") from None


def _standard_signatures(header: str) -> list[bytes]:
    """The ``v1`` signatures in a ``webhook-signature`` header, decoded; other versions are skipped, as the
    Standard Webhooks spec asks."""
    found = []
    for entry in header.split():
        version, _, signature = entry.partition(",")
        if version != "v1":
            continue
        try:
            found.append(base64.b64decode(signature, validate=True))
        except (binascii.Error, ValueError):
            continue
    return found


def _any_matches(expected: bytes, candidates: list[bytes]) -> bool:
    # Every candidate is compared, matched or not, so timing says nothing about which one matched.
    matched = False
    for candidate in candidates:
        matched |= hmac.compare_digest(expected, candidate)
    return matched
