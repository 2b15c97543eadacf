"""`videogen config --service X`: the effective settings from the environment, validated, secrets masked."""

from __future__ import annotations

import os

import orjson
import pytest

from videogen.cli import main
from videogen.config import MASK


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("VIDEOGEN_"):
            monkeypatch.delenv(name)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exited:
        main(["config", *args])
    out, err = capsys.readouterr()
    return int(exited.value.code or 0), out, err


def test_json_shows_the_environment_and_defaults_of_the_service(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VIDEOGEN_API_PORT", "9999")
    monkeypatch.setenv("VIDEOGEN_WEBHOOK_ALLOW_HTTP", "true")
    code, out, err = run(capsys, "--service", "api")
    assert code == 0 and err == ""
    values = orjson.loads(out)
    assert values["VIDEOGEN_API_PORT"] == 9999
    assert values["VIDEOGEN_WEBHOOK_ALLOW_HTTP"] is True
    assert values["VIDEOGEN_TOPIC_PREFIX"] == "videogen."  # a default
    assert values["VIDEOGEN_PROVIDERS"] == ["mock"]
    assert "VIDEOGEN_NOTIFIER_PORT" not in values  # another service's setting


@pytest.mark.parametrize(
    ("service", "own"),
    [("orchestrator", "VIDEOGEN_ORCHESTRATOR_PORT"), ("notifier", "VIDEOGEN_NOTIFIER_PORT")],
)
def test_each_service_shows_its_own_settings(
    capsys: pytest.CaptureFixture[str], service: str, own: str
) -> None:
    code, out, _ = run(capsys, "--service", service)
    values = orjson.loads(out)
    assert code == 0
    assert own in values and "VIDEOGEN_API_PORT" not in values


def test_secrets_are_masked_in_both_formats(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    secrets = {
        "VIDEOGEN_MEDIA_SIGNING_KEY": "signing-s3cret",  # typed SecretStr
        "VIDEOGEN_RUNWAY_API_KEY": "runway-s3cret",
        "VIDEOGEN_S3_ACCESS_KEY_ID": "AKIA-s3cret",  # a plain string named like a credential
        "VIDEOGEN_S3_SECRET_ACCESS_KEY": "aws-s3cret",
    }
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("VIDEOGEN_MONGO_URL", "mongodb://videogen:pass-s3cret@db.internal:27017/")
    monkeypatch.setenv("VIDEOGEN_S3_KEY_PREFIX", "videos/")  # named "key", but no secret
    for fmt in ("json", "env"):
        code, out, _ = run(capsys, "--service", "orchestrator", "--format", fmt)
        assert code == 0
        assert "s3cret" not in out
        values = orjson.loads(out) if fmt == "json" else _env_lines(out)
        for name in secrets:
            assert values[name] == MASK, name
        assert values["VIDEOGEN_MONGO_URL"] == f"mongodb://videogen:{MASK}@db.internal:27017/"
        assert values["VIDEOGEN_S3_KEY_PREFIX"] == "videos/"
    assert "# VIDEOGEN_LUMA_API_KEY is not set" in out.splitlines()  # unset stays visibly unset


def _env_lines(out: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in out.splitlines() if not line.startswith("#"))


def test_env_format_prints_key_value_lines_the_services_read_back(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VIDEOGEN_NOTIFIER_PORT", "0")
    code, out, _ = run(capsys, "--service", "notifier", "--format", "env")
    lines = [line for line in out.splitlines() if not line.startswith("#")]
    assert code == 0
    assert all(line.startswith("VIDEOGEN_") and "=" in line for line in lines)
    values = _env_lines(out)
    assert values["VIDEOGEN_NOTIFIER_PORT"] == "0"
    assert values["VIDEOGEN_S3_FORCE_PATH_STYLE"] == "false"
    assert values["VIDEOGEN_PROVIDERS"] == "mock"
    # Read back, unmasked lines give the same settings.
    for name, value in values.items():
        if value != MASK:
            monkeypatch.setenv(name, value)
    code, again, _ = run(capsys, "--service", "notifier", "--format", "env")
    assert code == 0 and again == out


@pytest.mark.parametrize(
    ("service", "name", "value"),
    [
        ("api", "VIDEOGEN_API_PORT", "not-a-port"),
        ("orchestrator", "VIDEOGEN_ORCHESTRATOR_PORT", "70000"),
        ("notifier", "VIDEOGEN_DELIVERY_TIMEOUT_SECONDS", "-1"),
    ],
)
def test_a_bad_variable_is_named_and_exits_2(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, service: str, name: str, value: str
) -> None:
    monkeypatch.setenv(name, value)
    code, out, err = run(capsys, "--service", service)
    assert code == 2
    assert out == ""
    assert name in err and repr(value) in err


def test_a_bad_secret_is_named_but_never_echoed(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VIDEOGEN_S3_SECRET_ACCESS_KEY", "aws-s3cret")  # without its key id: invalid
    code, _, err = run(capsys, "--service", "api")
    assert code == 2
    assert "VIDEOGEN_S3_SECRET_ACCESS_KEY" in err and "s3cret" not in err


def test_an_unknown_service_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "--service", "scheduler")
    assert code == 2 and "scheduler" in err
