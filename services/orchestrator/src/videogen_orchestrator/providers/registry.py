"""The adapters a deployment offers, built from its settings: the mock and each real provider that
``VIDEOGEN_PROVIDERS`` enables (settings validation has already required their credentials)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping

from videogen_common.domain import Provider
from videogen_orchestrator.providers.base import ProviderAdapter
from videogen_orchestrator.providers.http import ProviderHTTP, RetryPolicy
from videogen_orchestrator.providers.luma import LumaAdapter
from videogen_orchestrator.providers.mock import MockProvider
from videogen_orchestrator.providers.pika import PikaAdapter
from videogen_orchestrator.providers.runway import RunwayAdapter
from videogen_orchestrator.settings import CREDENTIALS, OrchestratorSettings


def retry_policy(settings: OrchestratorSettings) -> RetryPolicy:
    return RetryPolicy(
        attempts=settings.provider_retry_attempts,
        base_delay=settings.provider_retry_base_seconds,
        max_delay=settings.provider_retry_max_seconds,
        retry_after_max=settings.provider_retry_after_max_seconds,
        jitter=settings.provider_retry_jitter,
    )


def _secret(settings: OrchestratorSettings, name: str) -> str:
    value = getattr(settings, name)
    if value is None:  # settings validation requires it for an enabled provider
        raise ValueError(f"VIDEOGEN_{name.upper()} is not set")
    secret: str = value.get_secret_value()
    return secret


# Makes the HTTP client of one provider's adapter: its name, base URL and headers.
Http = Callable[[str, str, dict[str, str]], ProviderHTTP]


def _mock(settings: OrchestratorSettings, http: Http) -> ProviderAdapter:
    return MockProvider(
        latency_ms=settings.mock_latency_ms,
        failure_rate=settings.mock_failure_rate,
        cache_entries=settings.mock_render_cache_entries,
    )


def _runway(settings: OrchestratorSettings, http: Http) -> ProviderAdapter:
    key = _secret(settings, CREDENTIALS[Provider.RUNWAY])
    return RunwayAdapter(
        http("runway", settings.runway_base_url, RunwayAdapter.headers(key, settings.runway_api_version)),
        model=settings.runway_model,
    )


def _luma(settings: OrchestratorSettings, http: Http) -> ProviderAdapter:
    key = _secret(settings, CREDENTIALS[Provider.LUMA])
    return LumaAdapter(
        http("luma", settings.luma_base_url, LumaAdapter.headers(key)),
        model=settings.luma_model,
        resolution=settings.luma_resolution,
    )


def _pika(settings: OrchestratorSettings, http: Http) -> ProviderAdapter:
    key = _secret(settings, CREDENTIALS[Provider.PIKA])
    return PikaAdapter(
        http("pika", settings.fal_base_url, PikaAdapter.headers(key)),
        model=settings.pika_model,
        resolution=settings.pika_resolution,
    )


# How each provider's adapter is built: one entry per ``Provider`` (a test holds them to one another).
BUILDERS: dict[Provider, Callable[[OrchestratorSettings, Http], ProviderAdapter]] = {
    Provider.MOCK: _mock,
    Provider.RUNWAY: _runway,
    Provider.LUMA: _luma,
    Provider.PIKA: _pika,
}


def build_providers(settings: OrchestratorSettings) -> dict[str, ProviderAdapter]:
    """An adapter for each provider ``VIDEOGEN_PROVIDERS`` enables, by name, in ``Provider``'s order."""
    policy = retry_policy(settings)

    def http(name: str, base_url: str, headers: dict[str, str]) -> ProviderHTTP:
        return ProviderHTTP(
            name=name,
            base_url=base_url,
            headers=headers,
            policy=policy,
            timeout_seconds=settings.provider_timeout_seconds,
        )

    return {p.value: BUILDERS[p](settings, http) for p in Provider if p in settings.providers}


async def close_providers(providers: Mapping[str, ProviderAdapter]) -> None:
    """Close the adapters' connection pools (on shutdown)."""
    for adapter in providers.values():
        with contextlib.suppress(Exception):
            await adapter.close()
