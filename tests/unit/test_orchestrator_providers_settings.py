"""VIDEOGEN_PROVIDERS: one list, read by the api and the orchestrator. The orchestrator refuses to start when
an enabled provider has no credentials; the dev stack enables the mock and every provider it has keys for."""

from __future__ import annotations

import pytest

from tests.support.env import settings_for
from videogen.devstack import DevConfig, enabled_providers
from videogen_common.domain import Provider
from videogen_common.settings import CommonSettings, SettingsError, load_settings
from videogen_orchestrator import main as orchestrator_main
from videogen_orchestrator.providers.luma import LumaAdapter
from videogen_orchestrator.providers.mock import MockProvider
from videogen_orchestrator.providers.pika import PikaAdapter
from videogen_orchestrator.providers.registry import build_providers
from videogen_orchestrator.providers.runway import RunwayAdapter
from videogen_orchestrator.settings import OrchestratorSettings


def test_only_the_mock_is_enabled_by_default() -> None:
    assert load_settings(CommonSettings).providers == {Provider.MOCK}


@pytest.mark.parametrize(
    ("raw", "enabled"),
    [
        ("mock", {Provider.MOCK}),
        ("mock,runway", {Provider.MOCK, Provider.RUNWAY}),
        (" Luma , pika,", {Provider.LUMA, Provider.PIKA}),
    ],
)
def test_the_list_is_comma_separated(
    monkeypatch: pytest.MonkeyPatch, raw: str, enabled: set[Provider]
) -> None:
    monkeypatch.setenv("VIDEOGEN_PROVIDERS", raw)
    assert load_settings(CommonSettings).providers == enabled


@pytest.mark.parametrize("raw", ["mock,sora", "", " , "])
def test_an_unknown_or_empty_list_is_refused_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, raw: str
) -> None:
    monkeypatch.setenv("VIDEOGEN_PROVIDERS", raw)
    with pytest.raises(SettingsError, match="VIDEOGEN_PROVIDERS"):
        load_settings(CommonSettings)


@pytest.mark.parametrize(
    ("provider", "variable"),
    [
        ("runway", "VIDEOGEN_RUNWAY_API_KEY"),
        ("luma", "VIDEOGEN_LUMA_API_KEY"),
        ("pika", "VIDEOGEN_FAL_API_KEY"),
    ],
)
def test_the_orchestrator_refuses_to_start_without_an_enabled_providers_credentials(
    monkeypatch: pytest.MonkeyPatch, provider: str, variable: str
) -> None:
    monkeypatch.setenv("VIDEOGEN_PROVIDERS", f"mock,{provider}")
    monkeypatch.delenv(variable, raising=False)

    with pytest.raises(SystemExit) as exited:
        orchestrator_main.main()  # exits before connecting to anything

    message = str(exited.value.code)
    assert f"{variable} is required because VIDEOGEN_PROVIDERS enables {provider}" in message


def test_a_blank_credential_counts_as_missing() -> None:
    with pytest.raises(SettingsError, match="VIDEOGEN_RUNWAY_API_KEY is required"):
        settings_for(OrchestratorSettings, {}, providers="runway", runway_api_key="  ")


def test_with_their_credentials_every_enabled_provider_gets_its_adapter() -> None:
    settings = settings_for(
        OrchestratorSettings,
        {},
        providers="mock,runway,luma,pika",
        runway_api_key="rk",
        luma_api_key="lk",
        fal_api_key="fk",
    )
    providers = build_providers(settings)

    assert isinstance(providers["mock"], MockProvider)
    assert isinstance(providers["runway"], RunwayAdapter)
    assert isinstance(providers["luma"], LumaAdapter)
    assert isinstance(providers["pika"], PikaAdapter)


def test_a_provider_that_is_not_enabled_gets_no_adapter_even_with_credentials() -> None:
    settings = settings_for(OrchestratorSettings, {}, providers="mock", runway_api_key="rk")
    assert set(build_providers(settings)) == {"mock"}


@pytest.mark.parametrize(
    ("env", "enabled"),
    [
        ({}, "mock"),
        ({"VIDEOGEN_RUNWAY_API_KEY": "rk"}, "mock,runway"),
        ({"VIDEOGEN_FAL_API_KEY": "fk", "VIDEOGEN_LUMA_API_KEY": "lk"}, "mock,luma,pika"),
        ({"VIDEOGEN_LUMA_API_KEY": "  "}, "mock"),
    ],
)
def test_the_dev_stack_enables_the_mock_and_each_provider_it_has_keys_for(
    env: dict[str, str], enabled: str
) -> None:
    assert set(enabled_providers(env).split(",")) == set(enabled.split(","))


def test_the_dev_stack_passes_its_provider_list_to_every_service(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VIDEOGEN_PROVIDERS", raising=False)
    monkeypatch.setenv("VIDEOGEN_RUNWAY_API_KEY", "rk")
    config = DevConfig.from_env()

    assert config.service_env()["VIDEOGEN_PROVIDERS"] == "mock,runway"


def all_providers(**overrides: object) -> OrchestratorSettings:
    return settings_for(
        OrchestratorSettings,
        {},
        providers="mock,runway,luma,pika",
        runway_api_key="rk",
        luma_api_key="lk",
        fal_api_key="fk",
        **overrides,
    )


def test_runway_is_read_at_most_every_five_seconds_by_default_and_the_others_at_the_deployments_pace() -> (
    None
):
    providers = build_providers(all_providers())

    assert {name: adapter.poll_interval_seconds for name, adapter in providers.items()} == {
        "mock": 0.0,
        "runway": 5.0,
        "luma": 0.0,
        "pika": 0.0,
    }


def test_each_providers_cadence_is_its_own_setting() -> None:
    settings = all_providers(
        runway_poll_interval_seconds=8.0, luma_poll_interval_seconds=2.0, pika_poll_interval_seconds=0.5
    )
    providers = build_providers(settings)

    assert [providers[p].poll_interval_seconds for p in ("runway", "luma", "pika")] == [8.0, 2.0, 0.5]
    with pytest.raises(SettingsError, match="RUNWAY_POLL_INTERVAL_SECONDS"):
        all_providers(runway_poll_interval_seconds=-1)


def test_runways_models_are_the_ones_it_serves() -> None:
    runway = build_providers(all_providers(runway_model="veo3.1_fast", runway_image_model="gen4_turbo"))[
        "runway"
    ]
    assert isinstance(runway, RunwayAdapter)
    assert (runway.model, runway.image_model) == ("veo3.1_fast", "gen4_turbo")
    # veo3 is no longer among Runway's models; gen4_turbo makes videos only from an image.
    for refused in ({"runway_model": "veo3"}, {"runway_model": "gen4_turbo"}, {"runway_image_model": "veo3"}):
        with pytest.raises(ValueError, match="Runway"):
            build_providers(all_providers(**refused))
