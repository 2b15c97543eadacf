"""The callback URL's token (``videogen_common.provider_callbacks``): what we issue verifies, for the
provider, generation and try it was made for only, and nothing else does; the wake-up message reads back."""

from __future__ import annotations

from videogen_common.provider_callbacks import (
    CALLBACK_PATH,
    WakeUp,
    attempt_of,
    callback_token,
    callback_url,
    verify_token,
)

KEY = "a-media-signing-key"


def test_a_token_we_issued_verifies_as_the_wake_up_of_its_task() -> None:
    token = callback_token(KEY, "luma", "gen_01abc", 2)
    assert verify_token(KEY, "luma", token) == WakeUp("luma", "gen_01abc", 2)


def test_a_token_verifies_for_nothing_but_what_it_was_made_for() -> None:
    token = callback_token(KEY, "luma", "gen_01abc", 2)
    generation, attempt, mac = token.split(".")
    assert verify_token(KEY, "pika", token) is None  # another provider
    assert verify_token("another-key", "luma", token) is None  # another deployment's key
    assert verify_token(KEY, "luma", f"gen_01abd.{attempt}.{mac}") is None  # another generation
    assert verify_token(KEY, "luma", f"{generation}.3.{mac}") is None  # another try
    assert verify_token(KEY, "luma", f"{generation}.{attempt}.{mac[:-1]}A") is None  # a guessed mac
    for malformed in ("", "gen_01abc", "gen_01abc.2", "gen_01abc..mac", "gen_01abc.x.mac", ".2.mac"):
        assert verify_token(KEY, "luma", malformed) is None


def test_the_url_puts_the_token_under_the_callback_route_and_the_key_is_not_in_it() -> None:
    url = callback_url("https://videogen.example/", KEY, "pika", "gen_01abc", 0)
    prefix = f"https://videogen.example{CALLBACK_PATH}/pika/"
    assert url.startswith(prefix)
    assert verify_token(KEY, "pika", url.removeprefix(prefix)) == WakeUp("pika", "gen_01abc", 0)
    assert KEY not in url
    # Unguessable: 256 bits of HMAC, URL-safe.
    assert len(url.rsplit(".", 1)[1]) == 43


def test_the_attempt_is_the_count_of_tries_ended() -> None:
    assert attempt_of(None) == 0
    assert attempt_of([{"provider": "runway"}, {"provider": "luma"}]) == 2


def test_a_wake_up_reads_back_and_a_malformed_one_is_none() -> None:
    wake = WakeUp("luma", "gen_01abc", 1)
    assert WakeUp.from_json(wake.to_json()) == wake
    for raw in (b"", b"[]", b'{"provider": "luma"}', b'{"provider": 1, "generation_id": "g", "attempt": 0}'):
        assert WakeUp.from_json(raw) is None
