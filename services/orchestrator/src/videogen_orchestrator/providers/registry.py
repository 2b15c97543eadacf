"""The adapters a deployment offers, built from its settings: the mock and each real provider that
``VIDEOGEN_PROVIDERS`` enables (settings validation has already required their credentials)."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping

from videogen_common.domain import Provider
from videogen_orchestrator.providers.base import ProviderAdapter
from videogen_orchestrator.providers.http import ProviderHTTP, RetryPolicy
from videogen_orchestrator.providers.luma import LumaAdapter
from videogen_orchestrator.providers.mock import MockProvider
from videogen_orchestrator.providers.pika import PikaAdapter
from videogen_orchestrator.providers.runway import RunwayAdapter
from videogen_orchestrator.settings import OrchestratorSettings


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


def build_providers(settings: OrchestratorSettings) -> dict[str, ProviderAdapter]:
    enabled = settings.providers
    policy = retry_policy(settings)

    def http(name: str, base_url: str, headers: dict[str, str]) -> ProviderHTTP:
        return ProviderHTTP(
            name=name,
            base_url=base_url,
            headers=headers,
            policy=policy,
            timeout_seconds=settings.provider_timeout_seconds,
        )

    providers: dict[str, ProviderAdapter] = {}
    if Provider.MOCK in enabled:
        providers[Provider.MOCK.value] = MockProvider(
            latency_ms=settings.mock_latency_ms,
            failure_rate=settings.mock_failure_rate,
            cache_entries=settings.mock_render_cache_entries,
        )
    if Provider.RUNWAY in enabled:
        key = _secret(settings, "runway_api_key")
        providers[Provider.RUNWAY.value] = RunwayAdapter(
            http("runway", settings.runway_base_url, RunwayAdapter.headers(key, settings.runway_api_version)),
            model=settings.runway_model,
        )
    if Provider.LUMA in enabled:
        key = _secret(settings, "luma_api_key")
        providers[Provider.LUMA.value] = LumaAdapter(
            http("luma", settings.luma_base_url, LumaAdapter.headers(key)),
            model=settings.luma_model,
            resolution=settings.luma_resolution,
        )
    if Provider.PIKA in enabled:
        key = _secret(settings, "fal_api_key")
        providers[Provider.PIKA.value] = PikaAdapter(
            http("pika", settings.fal_base_url, PikaAdapter.headers(key)),
            model=settings.pika_model,
            resolution=settings.pika_resolution,
        )
    return providers


async def close_providers(providers: Mapping[str, ProviderAdapter]) -> None:
    """Close the adapters' connection pools (on shutdown)."""
    for adapter in providers.values():
        with contextlib.suppress(Exception):
            await adapter.close()
