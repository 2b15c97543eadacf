"""The SDK's videogen_client.webhooks.verify, the customer's check of a delivery: Standard Webhooks' published
vector, every way a delivery can fail verification, and that the module stands alone (the standard library and
the SDK's models only); unwrap's typed event."""

from __future__ import annotations

import ast
import base64
import hashlib
import hmac
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from multidict import CIMultiDict

import videogen_client.webhooks
from videogen_client.webhooks import WebhookVerificationError, unwrap, verify

# Standard Webhooks' published test vector.
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
MSG_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
TIMESTAMP = 1614265330
BODY = b'{"test": 2432232314}'
SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
# hmac.new(SECRET.encode(), BODY, sha256).hexdigest(), as in tests/unit/test_signing.py
SERVICE_SIGNATURE = "80ec8a89ce3cd22133a1066caecb4d04fea7467657c8514d717ec42c38a5c94c"
OTHER_SECRET = "whsec_" + base64.b64encode(b"k" * 32).decode()


def headers(**changes: str) -> dict[str, str]:
    base = {
        "webhook-id": MSG_ID,
        "webhook-timestamp": str(TIMESTAMP),
        "webhook-signature": SIGNATURE,
        "X-Service-Signature": SERVICE_SIGNATURE,
    }
    return {**base, **{name.replace("_", "-"): value for name, value in changes.items()}}


def sign(secret: str, msg_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    key = base64.b64decode(secret.removeprefix("whsec_"))
    digest = hmac.new(key, f"{msg_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": "v1," + base64.b64encode(digest).decode(),
        "X-Service-Signature": hmac.new(secret.encode(), body, hashlib.sha256).hexdigest(),
    }


def test_the_published_standard_webhooks_vector_verifies_and_returns_the_payload() -> None:
    assert verify(SECRET, headers(), BODY, now=TIMESTAMP) == {"test": 2432232314}


def test_our_own_signer_agrees_with_the_published_vector() -> None:
    assert sign(SECRET, MSG_ID, TIMESTAMP, BODY) == headers()


@pytest.mark.parametrize(
    "case",
    [
        str.lower,
        str.upper,
        str.title,
    ],
    ids=["lower", "upper", "title"],
)
def test_header_names_match_whatever_their_case(case: object) -> None:
    assert callable(case)
    recased = {case(name): value for name, value in headers().items()}
    assert verify(SECRET, recased, BODY, now=TIMESTAMP) == {"test": 2432232314}
    assert verify(SECRET, CIMultiDict(recased), BODY, now=TIMESTAMP) == {"test": 2432232314}


def test_any_of_several_space_separated_signatures_may_match_during_a_rotation() -> None:
    other = sign(OTHER_SECRET, MSG_ID, TIMESTAMP, BODY)
    both = headers(
        webhook_signature=f"{other['webhook-signature']} {SIGNATURE}",
        X_Service_Signature=f"{other['X-Service-Signature']} {SERVICE_SIGNATURE}",
    )
    assert verify(SECRET, both, BODY, now=TIMESTAMP) == {"test": 2432232314}
    assert verify(OTHER_SECRET, both, BODY, now=TIMESTAMP) == {"test": 2432232314}


def test_only_v1_signatures_count() -> None:
    with pytest.raises(WebhookVerificationError, match="webhook-signature"):
        verify(SECRET, headers(webhook_signature=SIGNATURE.replace("v1,", "v2,")), BODY, now=TIMESTAMP)


@pytest.mark.parametrize(("age", "ok"), [(300, True), (-300, True), (301, False), (-301, False)])
def test_the_timestamp_must_be_within_the_default_five_minutes(age: int, ok: bool) -> None:
    now = TIMESTAMP + age  # a negative age: the delivery claims to come from the future
    if ok:
        assert verify(SECRET, headers(), BODY, now=now) == {"test": 2432232314}
        return
    with pytest.raises(WebhookVerificationError, match="s old" if age > 0 else "in the future"):
        verify(SECRET, headers(), BODY, now=now)


def test_the_tolerance_can_be_narrowed_and_now_can_be_a_datetime() -> None:
    moment = datetime.fromtimestamp(TIMESTAMP + 10, UTC)
    assert verify(SECRET, headers(), BODY, now=moment, tolerance_seconds=10) == {"test": 2432232314}
    with pytest.raises(WebhookVerificationError, match="11 s old"):
        verify(SECRET, headers(), BODY, now=TIMESTAMP + 11, tolerance_seconds=10)


def test_now_defaults_to_the_current_time() -> None:
    fresh = sign(SECRET, MSG_ID, int(time.time()), BODY)
    assert verify(SECRET, fresh, BODY) == {"test": 2432232314}
    with pytest.raises(WebhookVerificationError, match="old"):
        verify(SECRET, headers(), BODY)  # the vector is from 2021


@pytest.mark.parametrize(
    ("secret", "hdrs", "body", "message"),
    [
        (OTHER_SECRET, headers(), BODY, "no webhook-signature matches"),
        (SECRET, headers(), b'{"test": 2432232315}', "no webhook-signature matches"),
        (SECRET, headers(), b'{"test":2432232314}', "no webhook-signature matches"),
        (SECRET, headers(webhook_id="msg_other"), BODY, "no webhook-signature matches"),
        (SECRET, headers(webhook_timestamp=str(TIMESTAMP + 1)), BODY, "no webhook-signature matches"),
        (SECRET, headers(webhook_signature="v1,not-base64!"), BODY, "no webhook-signature matches"),
        (SECRET, headers(webhook_signature="garbage"), BODY, "no webhook-signature matches"),
        (SECRET, headers(X_Service_Signature="0" * 64), BODY, "no X-Service-Signature matches"),
        (SECRET, headers(X_Service_Signature=SERVICE_SIGNATURE.upper()), BODY, "no X-Service-Signature"),
        (SECRET, headers(X_Service_Signature="ünïcode"), BODY, "no X-Service-Signature matches"),
        (SECRET, headers(webhook_timestamp="1614265330.5"), BODY, "not Unix seconds"),
        (SECRET, headers(webhook_timestamp="soon"), BODY, "not Unix seconds"),
        ("whsec_***", headers(), BODY, "not a whsec_ secret"),
    ],
    ids=lambda v: v if isinstance(v, str) and len(v) < 40 else None,
)
def test_a_delivery_that_does_not_verify_is_refused_saying_why(
    secret: str, hdrs: dict[str, str], body: bytes, message: str
) -> None:
    with pytest.raises(WebhookVerificationError, match=message):
        verify(secret, hdrs, body, now=TIMESTAMP)


@pytest.mark.parametrize(
    "name", ["webhook-id", "webhook-timestamp", "webhook-signature", "X-Service-Signature"]
)
def test_each_header_is_required(name: str) -> None:
    without = {k: v for k, v in headers().items() if k != name}
    with pytest.raises(WebhookVerificationError, match=f"missing header {name}"):
        verify(SECRET, without, BODY, now=TIMESTAMP)
    with pytest.raises(WebhookVerificationError, match=f"missing header {name}"):
        verify(SECRET, {**without, name: ""}, BODY, now=TIMESTAMP)


@pytest.mark.parametrize(("body", "message"), [(b"not json", "not JSON"), (b"[1, 2]", "not a JSON object")])
def test_a_correctly_signed_body_that_is_not_a_json_object_is_refused(body: bytes, message: str) -> None:
    with pytest.raises(WebhookVerificationError, match=message):
        verify(SECRET, sign(SECRET, MSG_ID, TIMESTAMP, body), body, now=TIMESTAMP)


def test_the_error_is_a_value_error_so_generic_handlers_catch_it() -> None:
    assert issubclass(WebhookVerificationError, ValueError)


def test_the_module_imports_only_the_standard_library_and_the_sdks_models() -> None:
    tree = ast.parse(Path(videogen_client.webhooks.__file__).read_text())
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    } | {
        (node.module or "").split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.level == 0
    }
    assert imported - {"__future__", "videogen_client"} <= set(sys.stdlib_module_names)
    assert "videogen_client" in imported
    assert not any(isinstance(node, ast.ImportFrom) and node.level > 0 for node in ast.walk(tree))


def test_unwrap_returns_the_verified_event_typed_with_its_generation() -> None:
    body = (
        b'{"event": "video.completed", "timestamp": "2026-11-24T10:00:00.000Z", "data": {"id": "gen_1",'
        b' "status": "completed", "prompt": "a fox", "provider": "mock", "duration": 3,'
        b' "video_url": "http://127.0.0.1/v/1.mp4", "thumbnail_url": null, "error": null,'
        b' "created_at": "2026-11-24T09:59:00.000Z", "updated_at": "2026-11-24T10:00:00.000Z"}}'
    )
    event = unwrap(SECRET, sign(SECRET, MSG_ID, TIMESTAMP, body), body, now=TIMESTAMP)
    assert event.event == "video.completed"
    generation = event.generation
    assert generation is not None
    assert (generation.id, generation.status, generation.duration) == ("gen_1", "completed", 3)


def test_unwrap_refuses_a_genuine_body_that_is_not_an_event() -> None:
    with pytest.raises(WebhookVerificationError, match="not a videogen event"):
        unwrap(SECRET, sign(SECRET, MSG_ID, TIMESTAMP, BODY), BODY, now=TIMESTAMP)


def test_unwrap_checks_the_signatures_first() -> None:
    headers = sign("whsec_" + "A" * 32, MSG_ID, TIMESTAMP, BODY)
    with pytest.raises(WebhookVerificationError, match="webhook-signature"):
        unwrap(SECRET, headers, BODY, now=TIMESTAMP)
