"""Provider callbacks (Luma's ``callback_url``, fal's ``webhook_url``): the per-task token in the URL a
provider calls back, and the wake-up the api hands the orchestrator when one arrives.

A callback URL is ``{public_base_url}/v1/provider-callbacks/{provider}/{token}``. The token is
``{generation_id}.{attempt}.{mac}``: the generation, the index of its try at a provider (its ended attempts so
far, so a task of an earlier try has another token), and 32 bytes of HMAC-SHA256 over the three, keyed with a
key derived from the media signing key both services already share (nothing new to configure, nothing
stored): it cannot be guessed or forged without that key, and the api checks it without reading the store.

A callback is only a wake-up: it names the generation, and the orchestrator running it reads the task from
the provider before acting, so a forged, replayed or late callback completes nothing."""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

CALLBACK_PATH = "/v1/provider-callbacks"
# Separates the callback key from the media signing key it is derived from.
_LABEL = b"videogen provider callbacks v1"


def _key(signing_key: str) -> bytes:
    return hmac.new(signing_key.encode(), _LABEL, hashlib.sha256).digest()


def _mac(signing_key: str, provider: str, generation_id: str, attempt: int) -> str:
    message = f"{provider}\n{generation_id}\n{attempt}".encode()
    digest = hmac.new(_key(signing_key), message, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def attempt_of(provider_attempts: Sequence[Mapping[str, Any]] | None) -> int:
    """The index of a generation's try under way: how many of its tries have ended."""
    return len(provider_attempts or ())


def callback_token(signing_key: str, provider: str, generation_id: str, attempt: int) -> str:
    return f"{generation_id}.{attempt}.{_mac(signing_key, provider, generation_id, attempt)}"


def callback_url(base_url: str, signing_key: str, provider: str, generation_id: str, attempt: int) -> str:
    token = callback_token(signing_key, provider, generation_id, attempt)
    return f"{base_url.rstrip('/')}{CALLBACK_PATH}/{provider}/{token}"


@dataclass(frozen=True, slots=True)
class WakeUp:
    """A provider called back about a generation's task (its try ``attempt``): read the task now."""

    provider: str
    generation_id: str
    attempt: int

    def to_json(self) -> bytes:
        return orjson.dumps(
            {"provider": self.provider, "generation_id": self.generation_id, "attempt": self.attempt}
        )

    @classmethod
    def from_json(cls, raw: bytes) -> WakeUp | None:
        """The wake-up a message holds; None for a malformed one."""
        try:
            doc = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return None
        if not isinstance(doc, dict):
            return None
        provider, generation_id, attempt = doc.get("provider"), doc.get("generation_id"), doc.get("attempt")
        if not (isinstance(provider, str) and isinstance(generation_id, str) and isinstance(attempt, int)):
            return None
        return cls(provider, generation_id, attempt)


def verify_token(signing_key: str, provider: str, token: str) -> WakeUp | None:
    """The wake-up a callback's token stands for, if it is one we issued for ``provider``; else None."""
    generation_id, _, rest = token.partition(".")
    attempt_text, _, mac = rest.partition(".")
    if not generation_id or not attempt_text.isdigit() or len(attempt_text) > 6 or not mac:
        return None
    attempt = int(attempt_text)
    expected = _mac(signing_key, provider, generation_id, attempt)
    if not hmac.compare_digest(expected.encode(), mac.encode()):
        return None
    return WakeUp(provider, generation_id, attempt)
