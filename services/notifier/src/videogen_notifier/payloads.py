"""What a receiver gets: the spec's body (event, timestamp, data) and the signature headers."""

from __future__ import annotations

from typing import Any

import orjson

from videogen_common.signing import service_signature, standard_signature

DATA_FIELDS = (
    "id",
    "status",
    "prompt",
    "provider",
    "duration",
    "video_url",
    "thumbnail_url",
    "created_at",
    "updated_at",
    "error",
)


def delivery_body(event_type: str, timestamp: str, generation: dict[str, Any]) -> bytes:
    return orjson.dumps(
        {"event": event_type, "timestamp": timestamp, "data": {k: generation.get(k) for k in DATA_FIELDS}}
    )


def signature_headers(secrets: list[str], msg_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    """``secrets`` newest first. During a rotation every live secret signs: Standard Webhooks lists the
    signatures space-separated; ``X-Service-Signature`` carries the newest first, the others after it,
    space-separated."""
    return {
        "Content-Type": "application/json",
        "X-Service-Signature": " ".join(service_signature(s, body) for s in secrets),
        "webhook-id": msg_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": " ".join(standard_signature(s, msg_id, timestamp, body) for s in secrets),
    }
