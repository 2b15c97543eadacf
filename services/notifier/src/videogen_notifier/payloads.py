"""The headers that sign a delivery."""

from __future__ import annotations

from videogen_common.signing import service_signature, standard_signature


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
