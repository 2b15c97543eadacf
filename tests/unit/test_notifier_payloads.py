"""videogen_notifier.payloads: the delivery body and its signature headers."""

from __future__ import annotations

import base64
import hashlib
import hmac
from typing import Any

import orjson
import pytest

from tests.support.public_fields import DATA_FIELDS
from videogen_common.deliveries import delivery_body as _delivery_body
from videogen_common.deliveries import generation_data
from videogen_notifier.payloads import signature_headers

GENERATION: dict[str, Any] = {
    "id": "gen_01",
    "status": "completed",
    "prompt": "a cat",
    "provider": "mock",
    "model": "mock",
    "duration": 5,
    "video_url": "https://api.example.com/v1/media/gen_01/video.mp4?exp=1&sig=a",
    "thumbnail_url": "https://api.example.com/v1/media/gen_01/thumbnail.jpg?exp=1&sig=b",
    "error": None,
    "created_at": "2026-11-21T08:47:00.123Z",
    "updated_at": "2026-11-21T08:47:05.456Z",
    "progress": 100,
    "queue_reason": None,
    "priority": "high",
    "aspect_ratio": "9:16",
    "resolution": "720p",
    "seed": 42,
    "negative_prompt": None,
    "metadata": {"order_id": "42"},
    "image": {"url": None, "upload_id": "upl_01"},
    "route": {
        "requested": "auto",
        "sort": None,
        "fallback_on_failure": False,
        "candidates": [{"provider": "runway", "reason": "auto"}, {"provider": "mock", "reason": "auto"}],
        "skipped": [],
        "reason": "moved on to mock after runway failed (provider_unavailable)",
    },
    "attempts": [
        {
            "provider": "runway",
            "started_at": "2026-11-21T08:47:00.200Z",
            "ended_at": "2026-11-21T08:47:01.000Z",
            "error_code": "provider_unavailable",
            "cost": 0.0,
        },
        {
            "provider": "mock",
            "started_at": "2026-11-21T08:47:01.100Z",
            "ended_at": "2026-11-21T08:47:05.456Z",
            "error_code": None,
            "cost": 0.0,
        },
    ],
    "estimated_cost": 0.6,
    "cost": 0.0,
    "deleted": False,
    "deleted_at": None,
}

SW_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
SW_MSG_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
SW_TIMESTAMP = 1614265330
SW_BODY = b'{"test": 2432232314}'
SW_SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
SECOND_SECRET = "whsec_" + base64.b64encode(bytes(range(32))).decode()


def _service(secret: str, body: bytes) -> str:
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def _standard(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    key = base64.b64decode(secret.removeprefix("whsec_"))
    digest = hmac.new(key, f"{msg_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def delivery_body(event: str, timestamp: str, generation: dict[str, Any]) -> bytes:
    return _delivery_body(event, timestamp, generation_data(generation))


def test_delivery_body_shape() -> None:
    body = orjson.loads(delivery_body("video.completed", "2026-11-21T08:47:06.000Z", GENERATION))
    assert set(body) == {"event", "timestamp", "data"}
    assert body["event"] == "video.completed"
    assert body["timestamp"] == "2026-11-21T08:47:06.000Z"
    assert set(body["data"]) == DATA_FIELDS
    assert body["data"] == GENERATION


def test_delivery_body_drops_internal_fields() -> None:
    generation = {**GENERATION, "account_id": "acc_1", "version": 3, "lease_owner": "h", "_id": "gen_01"}
    data = orjson.loads(delivery_body("video.completed", "t", generation))["data"]
    assert set(data) == DATA_FIELDS


def test_delivery_body_missing_fields_are_null() -> None:
    error = {"code": "mock_failure", "message": "m", "provider_code": "mock.failure", "retriable": False}
    generation = {"id": "gen_01", "status": "failed", "error": error}
    data = orjson.loads(delivery_body("video.failed", "t", generation))["data"]
    assert set(data) == DATA_FIELDS
    assert data["attempts"] == []  # an event made before attempts were kept
    assert data["error"] == error
    assert data["video_url"] is None
    assert data["thumbnail_url"] is None
    assert data["metadata"] == {}
    assert data["deleted"] is False  # events made before deletes existed


def test_delivery_body_is_compact_json_bytes() -> None:
    body = delivery_body("video.completed", "t", GENERATION)
    assert isinstance(body, bytes)
    assert body.startswith(b'{"event":"video.completed","timestamp":"t","data":{')


def test_signature_headers_one_secret_published_vector() -> None:
    headers = signature_headers([SW_SECRET], SW_MSG_ID, SW_TIMESTAMP, SW_BODY)
    assert headers == {
        "Content-Type": "application/json",
        "X-Service-Signature": "80ec8a89ce3cd22133a1066caecb4d04fea7467657c8514d717ec42c38a5c94c",
        "webhook-id": SW_MSG_ID,
        "webhook-timestamp": "1614265330",
        "webhook-signature": SW_SIGNATURE,
    }


def test_signature_headers_one_secret_real_body() -> None:
    body = delivery_body("video.completed", "2026-11-21T08:47:06.000Z", GENERATION)
    headers = signature_headers([SECOND_SECRET], "evt_1", 1795250826, body)
    assert headers["X-Service-Signature"] == _service(SECOND_SECRET, body)
    assert headers["webhook-signature"] == _standard(SECOND_SECRET, "evt_1", 1795250826, body)
    assert " " not in headers["X-Service-Signature"]
    assert " " not in headers["webhook-signature"]


@pytest.mark.parametrize("secrets", [[SW_SECRET, SECOND_SECRET], [SECOND_SECRET, SW_SECRET]])
def test_signature_headers_two_secrets(secrets: list[str]) -> None:
    body = delivery_body("video.failed", "t", GENERATION)
    headers = signature_headers(secrets, "evt_2", 1795250826, body)
    service = headers["X-Service-Signature"].split(" ")
    standard = headers["webhook-signature"].split(" ")
    assert len(service) == len(standard) == 2
    # Newest first, each verifiable with its own secret.
    for secret, service_sig, standard_sig in zip(secrets, service, standard, strict=True):
        assert hmac.compare_digest(service_sig, _service(secret, body))
        assert hmac.compare_digest(standard_sig, _standard(secret, "evt_2", 1795250826, body))
    assert headers["webhook-id"] == "evt_2"
    assert headers["webhook-timestamp"] == "1795250826"


def test_signatures_change_with_the_body() -> None:
    one = signature_headers([SW_SECRET], SW_MSG_ID, SW_TIMESTAMP, SW_BODY)
    other = signature_headers([SW_SECRET], SW_MSG_ID, SW_TIMESTAMP, SW_BODY + b" ")
    assert one["X-Service-Signature"] != other["X-Service-Signature"]
    assert one["webhook-signature"] != other["webhook-signature"]
