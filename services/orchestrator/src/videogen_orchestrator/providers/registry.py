"""The adapters a deployment offers, built from its settings: the mock and each real provider that
``VIDEOGEN_PROVIDERS`` enables (settings validation has already required their credentials)."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping

from videogen_common.domain import Provider
from videogen_common.records.admission import pool_id
from videogen_orchestrator.providers.base import ProviderAdapter
from videogen_orchestrator.providers.http import ProviderHTTP, RetryPolicy
from videogen_orchestrator.providers.luma import LumaAdapter
from videogen_orchestrator.providers.mock import MockProvider
from videogen_orchestrator.providers.pika import PikaAdapter
from videogen_orchestrator.providers.rate import RateLimiter
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


def build_limiters(settings: OrchestratorSettings) -> dict[Provider, RateLimiter]:
    """A request-rate cap for each enabled provider that has one (the mock makes no API calls)."""
    limiters: dict[Provider, RateLimiter] = {}
    for provider in settings.providers:
        rate = settings.max_requests_per_second(provider)
        if rate is not None and provider is not Provider.MOCK:
            limiters[provider] = RateLimiter(rate)
    return limiters


def build_providers(
    settings: OrchestratorSettings, limiters: Mapping[Provider, RateLimiter] | None = None
) -> dict[str, ProviderAdapter]:
    """The adapters by pool id (``records.admission.pool_id``): one per key of each enabled provider, the
    keys of one provider sharing its request-rate cap (``limiters``)."""
    enabled = settings.providers
    policy = retry_policy(settings)
    providers: dict[str, ProviderAdapter] = {}
    if Provider.MOCK in enabled:
        providers[pool_id(Provider.MOCK.value)] = MockProvider(
            latency_ms=settings.mock_latency_ms,
            failure_rate=settings.mock_failure_rate,
            cache_entries=settings.mock_render_cache_entries,
        )
    for provider in (Provider.RUNWAY, Provider.LUMA, Provider.PIKA):
        if provider not in enabled:
            continue
        limiter = (limiters or {}).get(provider)
        for pool in settings.pools(provider):
            if pool.key is None:  # settings validation requires a key for an enabled provider
                raise ValueError(f"no API key for {provider.value}")
            http = ProviderHTTP(
                name=provider.value,
                base_url=_base_url(settings, provider),
                headers=_headers(settings, provider, pool.key),
                policy=policy,
                timeout_seconds=settings.provider_timeout_seconds,
                limiter=limiter,
            )
            providers[pool_id(provider.value, pool.name)] = _adapter(settings, provider, http)
    return providers


def _base_url(settings: OrchestratorSettings, provider: Provider) -> str:
    return {
        Provider.RUNWAY: settings.runway_base_url,
        Provider.LUMA: settings.luma_base_url,
        Provider.PIKA: settings.fal_base_url,
    }[provider]


def _headers(settings: OrchestratorSettings, provider: Provider, key: str) -> dict[str, str]:
    if provider is Provider.RUNWAY:
        return RunwayAdapter.headers(key, settings.runway_api_version)
    return _MODEL_RESOLUTION[provider].headers(key)


# The adapters made from a model and a resolution (each provider's resolution is a setting of its own).
_MODEL_RESOLUTION: dict[Provider, type[LumaAdapter] | type[PikaAdapter]] = {
    Provider.LUMA: LumaAdapter,
    Provider.PIKA: PikaAdapter,
}


def _adapter(settings: OrchestratorSettings, provider: Provider, http: ProviderHTTP) -> ProviderAdapter:
    model, cadence = settings.model_of(provider)[0], settings.poll_interval_of(provider)
    if provider is Provider.RUNWAY:
        image_model = settings.runway_image_model
        return RunwayAdapter(http, model=model, image_model=image_model, poll_interval_seconds=cadence)
    resolution = settings.luma_resolution if provider is Provider.LUMA else settings.pika_resolution
    return _MODEL_RESOLUTION[provider](
        http, model=model, resolution=resolution, poll_interval_seconds=cadence
    )


async def close_providers(providers: Mapping[str, ProviderAdapter]) -> None:
    """Close the adapters' connection pools (on shutdown)."""
    for adapter in providers.values():
        with contextlib.suppress(Exception):
            await adapter.close()
