"""videogen_notifier.settings: the webhook retry schedule."""

from __future__ import annotations

import os

import pytest

from videogen_common.settings import SettingsError, load_settings
from videogen_notifier.settings import DEFAULT_SCHEDULE, NotifierSettings

VAR = "VIDEOGEN_WEBHOOK_RETRY_SCHEDULE"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("VIDEOGEN_"):
            monkeypatch.delenv(name)


def test_default_schedule() -> None:
    settings = load_settings(NotifierSettings)
    assert settings.webhook_retry_schedule == DEFAULT_SCHEDULE
    assert settings.retry_delays == [5.0, 300.0, 1800.0, 7200.0, 18000.0, 36000.0, 36000.0]


@pytest.mark.parametrize(
    ("raw", "delays"),
    [
        ("1,2,3", [1.0, 2.0, 3.0]),
        ("0.5", [0.5]),
        ("0", [0.0]),
        (" 1 , 2 ,3 ", [1.0, 2.0, 3.0]),
        ("1,,2,", [1.0, 2.0]),
        ("", []),
    ],
)
def test_schedule_from_environment(monkeypatch: pytest.MonkeyPatch, raw: str, delays: list[float]) -> None:
    monkeypatch.setenv(VAR, raw)
    assert load_settings(NotifierSettings).retry_delays == delays


def test_schedule_from_override() -> None:
    assert load_settings(NotifierSettings, webhook_retry_schedule="1,2,3").retry_delays == [1.0, 2.0, 3.0]


@pytest.mark.parametrize(
    "raw",
    [
        "a,b",
        "-1",
        "1,-2,3",
        "1;2",
        "5s",
        "nan",
        "inf",
        "1,nan",
    ],
)
def test_bad_schedule_is_rejected(monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    monkeypatch.setenv(VAR, raw)
    with pytest.raises(SettingsError) as info:
        load_settings(NotifierSettings)
    assert VAR in str(info.value)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("VIDEOGEN_DELIVERY_TIMEOUT_SECONDS", "0"),
        ("VIDEOGEN_DELIVERY_TIMEOUT_SECONDS", "61"),
        ("VIDEOGEN_RETRY_JITTER", "1"),
        ("VIDEOGEN_ENDPOINT_CONCURRENCY", "0"),
    ],
)
def test_other_bad_values_are_rejected(monkeypatch: pytest.MonkeyPatch, name: str, value: str) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError, match=name):
        load_settings(NotifierSettings)
