"""videogen_common.settings.load_settings."""

from __future__ import annotations

import os

import pytest

from videogen_common.settings import CommonSettings, SettingsError, load_settings


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("VIDEOGEN_"):
            monkeypatch.delenv(name)


def test_defaults() -> None:
    settings = load_settings(CommonSettings)
    assert settings.topic_partitions == 4
    assert settings.topic_prefix == "videogen."
    assert settings.media_dir == settings.data_dir / "media"


def test_reads_prefixed_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VIDEOGEN_TOPIC_PARTITIONS", "8")
    monkeypatch.setenv("VIDEOGEN_MEDIA_SIGNING_KEY", "s3cret")
    settings = load_settings(CommonSettings)
    assert settings.topic_partitions == 8
    assert settings.media_signing_key.get_secret_value() == "s3cret"
    assert "s3cret" not in repr(settings)


def test_overrides_win_over_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VIDEOGEN_TOPIC_PARTITIONS", "8")
    assert load_settings(CommonSettings, topic_partitions=2).topic_partitions == 2


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("VIDEOGEN_TOPIC_PARTITIONS", "abc"),
        ("VIDEOGEN_TOPIC_PARTITIONS", "0"),
        ("VIDEOGEN_MEDIA_RETENTION_DAYS", "-1"),
        ("VIDEOGEN_LOG_FORMAT", "xml"),
    ],
)
def test_bad_variable_raises_settings_error_naming_it(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError) as info:
        load_settings(CommonSettings)
    assert name in str(info.value)
    assert repr(value) in str(info.value)


def test_every_bad_variable_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VIDEOGEN_TOPIC_PARTITIONS", "abc")
    monkeypatch.setenv("VIDEOGEN_LOG_FORMAT", "xml")
    with pytest.raises(SettingsError) as info:
        load_settings(CommonSettings)
    assert "VIDEOGEN_TOPIC_PARTITIONS" in str(info.value)
    assert "VIDEOGEN_LOG_FORMAT" in str(info.value)


def test_settings_error_is_a_value_error() -> None:
    assert issubclass(SettingsError, ValueError)


def test_settings_are_frozen() -> None:
    settings = load_settings(CommonSettings)
    with pytest.raises(ValueError, match="frozen"):
        settings.topic_partitions = 9  # type: ignore[misc]
