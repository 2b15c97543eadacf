"""videogen_common.signing, against fixed vectors computed independently here."""

from __future__ import annotations

import base64
import hashlib
import hmac
import string

import pytest

from videogen_common.signing import (
    hash_api_key,
    new_api_key,
    new_webhook_secret,
    service_signature,
    standard_signature,
)

# Standard Webhooks' published test vector.
SW_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
SW_MSG_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
SW_TIMESTAMP = 1614265330
SW_BODY = b'{"test": 2432232314}'
SW_SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="

# hmac.new(b"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", b'{"test": 2432232314}', sha256).hexdigest()
SERVICE_SIGNATURE = "80ec8a89ce3cd22133a1066caecb4d04fea7467657c8514d717ec42c38a5c94c"


def test_service_signature_fixed_vector() -> None:
    assert service_signature(SW_SECRET, SW_BODY) == SERVICE_SIGNATURE


def test_service_signature_is_hmac_sha256_hex_keyed_with_the_whole_secret_string() -> None:
    expected = hmac.new(SW_SECRET.encode("utf-8"), SW_BODY, hashlib.sha256).hexdigest()
    assert service_signature(SW_SECRET, SW_BODY) == expected
    assert expected == SERVICE_SIGNATURE


@pytest.mark.parametrize(
    ("secret", "body"),
    [
        ("whsec_other", SW_BODY),
        (SW_SECRET, b'{"test": 2432232315}'),
        (SW_SECRET, b'{"test":2432232314}'),
    ],
)
def test_service_signature_depends_on_secret_and_exact_bytes(secret: str, body: bytes) -> None:
    assert service_signature(secret, body) != SERVICE_SIGNATURE


def test_service_signature_is_lowercase_hex() -> None:
    sig = service_signature(new_webhook_secret(), b"{}")
    assert len(sig) == 64
    assert set(sig) <= set("0123456789abcdef")


def test_standard_signature_published_vector() -> None:
    assert standard_signature(SW_SECRET, SW_MSG_ID, SW_TIMESTAMP, SW_BODY) == SW_SIGNATURE


def test_standard_signature_independent_computation() -> None:
    secret = new_webhook_secret()
    key = base64.b64decode(secret.removeprefix("whsec_"))
    digest = hmac.new(key, b"msg_1.1700000000." + b'{"a":1}', hashlib.sha256).digest()
    expected = "v1," + base64.b64encode(digest).decode()
    assert standard_signature(secret, "msg_1", 1700000000, b'{"a":1}') == expected


@pytest.mark.parametrize(
    ("msg_id", "timestamp", "body"),
    [
        ("msg_other", SW_TIMESTAMP, SW_BODY),
        (SW_MSG_ID, SW_TIMESTAMP + 1, SW_BODY),
        (SW_MSG_ID, SW_TIMESTAMP, b'{"test": 2432232315}'),
    ],
)
def test_standard_signature_covers_id_timestamp_and_body(msg_id: str, timestamp: int, body: bytes) -> None:
    assert standard_signature(SW_SECRET, msg_id, timestamp, body) != SW_SIGNATURE


def test_new_webhook_secret_format() -> None:
    secret = new_webhook_secret()
    assert secret.startswith("whsec_")
    raw = base64.b64decode(secret.removeprefix("whsec_"), validate=True)
    assert len(raw) == 32


def test_new_webhook_secret_is_canonical_standard_base64() -> None:
    # Round-tripping proves the part after the prefix is padded standard base64, not urlsafe or unpadded.
    for _ in range(50):
        body = new_webhook_secret().removeprefix("whsec_")
        assert len(body) == 44
        assert body.endswith("=")
        assert base64.b64encode(base64.b64decode(body, validate=True)).decode() == body


def test_new_webhook_secret_unique() -> None:
    assert len({new_webhook_secret() for _ in range(200)}) == 200


def test_hash_api_key_fixed_vector() -> None:
    # SHA-256("abc"), FIPS 180-2 appendix B.1.
    assert hash_api_key("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


def test_hash_api_key_is_sha256_of_utf8() -> None:
    key = new_api_key()
    assert hash_api_key(key) == hashlib.sha256(key.encode("utf-8")).hexdigest()
    assert hash_api_key("clé") == hashlib.sha256("clé".encode()).hexdigest()
    assert hash_api_key(key) != hash_api_key(key + "x")


def test_new_api_key_format() -> None:
    key = new_api_key()
    assert key.startswith("vg_")
    body = key.removeprefix("vg_")
    assert set(body) <= set(string.ascii_letters + string.digits + "-_")
    # token_urlsafe(32): 32 random bytes, 43 base64url characters.
    assert len(base64.urlsafe_b64decode(body + "=")) == 32


def test_new_api_key_unique() -> None:
    keys = {new_api_key() for _ in range(500)}
    assert len(keys) == 500
    assert len({hash_api_key(k) for k in keys}) == 500
