from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from typing import Annotated, Self

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator
from pydantic_core import PydanticCustomError

from videogen_common.capabilities import CAPABILITIES
from videogen_common.domain import Provider
from videogen_common.settings import CommonSettings

# The credential each real provider needs, by the setting that holds it (pika is reached through fal.ai); the
# same name with an ``s`` holds several keys instead (``ProviderKey``).
CREDENTIALS: dict[Provider, str] = {
    Provider.RUNWAY: "runway_api_key",
    Provider.LUMA: "luma_api_key",
    Provider.PIKA: "fal_api_key",
}

PositiveLimit = Annotated[int | None, Field(ge=1)]
PositiveRate = Annotated[float | None, Field(gt=0)]


class ProviderKey(BaseModel):
    """One of several API keys for a provider (``VIDEOGEN_RUNWAY_API_KEYS``, ``..._LUMA_API_KEYS``,
    ``..._FAL_API_KEYS``: a JSON list of these): each is its own pool of ``max_concurrency`` generations at
    once (absent: no limit of ours), and the provider's capacity is their sum."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,31}$")
    key: SecretStr
    max_concurrency: int | None = Field(default=None, ge=1)


@dataclass(frozen=True, slots=True)
class PoolConfig:
    """A provider key and its limit: ``name`` is None for a provider's only key."""

    provider: Provider
    name: str | None
    key: str | None
    limit: int | None
    # The model its adapter asks for, and the resolution unless a request says (what it is priced at).
    model: str | None = None
    resolution: str | None = None


def _default_instance() -> str:
    return f"{socket.gethostname()}-{os.getpid()}"


class OrchestratorSettings(CommonSettings):
    orchestrator_group: str = "videogen-orchestrator"
    # The side HTTP server for /healthz, /readyz and /metrics (0 picks a free port). In a pod: host 0.0.0.0.
    orchestrator_host: str = "127.0.0.1"
    orchestrator_port: int = Field(default=8081, ge=0, le=65535)
    # Identifies this process as a lease owner. Defaults to host-pid, unique per process.
    orchestrator_instance: str = Field(default_factory=_default_instance)
    lease_seconds: float = Field(default=30.0, gt=0)
    # A generation nobody has leased this long after creation is assumed to have lost its request message.
    dispatch_grace_seconds: float = Field(default=10.0, ge=0)
    reconcile_interval_seconds: float = Field(default=5.0, gt=0)
    # A batch left `validating` this long (its api stopped while writing its items) is settled by the
    # reconciler: moved on with the items written, or failed if none was (`endings.settle_validating`).
    # Longer than any acceptance (10,000 items take seconds), so a batch still being written is left alone.
    batch_validating_seconds: float = Field(default=300.0, gt=0)
    max_in_flight: int = Field(default=64, ge=1)
    # Generations one account may have at its providers at once, across all instances; beyond it they wait as
    # `queued` and start oldest first as slots free.
    account_max_in_flight: int = Field(default=16, ge=1)
    # While one account's work waits at a full provider, each instance keeps the next of it claimed, on
    # standby, and hands it the slot of its own next task to end (``runner``): a freed slot is refilled in one
    # write instead of ten. Work the fair turn would start first (another account's, a higher priority)
    # joining the line sends it back. Off: each freed slot meets the line when it frees.
    admission_standby: bool = True
    poll_interval_seconds: float = Field(default=1.0, gt=0)
    # A task's progress is written to its generation (and published) at most this often.
    progress_write_seconds: float = Field(default=2.0, gt=0)
    # ... and offered as a `video.progress` webhook at most this often per generation.
    progress_webhook_seconds: float = Field(default=10.0, gt=0)
    mock_latency_ms: int = Field(default=0, ge=0)
    mock_failure_rate: float = Field(default=0.0, ge=0.0, le=1.0)
    # Rendered mock videos kept in memory, by (prompt, duration): a load test is not bound by encoding.
    mock_render_cache_entries: int = Field(default=64, ge=0)

    # Real providers: credentials (required for each provider VIDEOGEN_PROVIDERS enables) and API base URLs.
    runway_api_key: SecretStr | None = None
    runway_api_keys: list[ProviderKey] = Field(default_factory=list)
    runway_base_url: str = "https://api.dev.runwayml.com"
    runway_api_version: str = "2024-11-06"
    # Runway's model for text to video, and from a first frame unless runway_image_model names another
    # (gen4_turbo makes videos only from an image); the adapter refuses at start-up a model Runway does not
    # serve (providers/runway.py: TEXT_MODELS, IMAGE_MODELS). Each *_MODEL is what a request that names no
    # model gets (unset: the catalogue's default model of the provider, videogen_common.catalogue).
    runway_model: str | None = None
    runway_image_model: str | None = None
    luma_api_key: SecretStr | None = None
    luma_api_keys: list[ProviderKey] = Field(default_factory=list)
    luma_base_url: str = "https://api.lumalabs.ai/dream-machine/v1"
    luma_model: str | None = None
    luma_resolution: str = "720p"
    fal_api_key: SecretStr | None = None
    fal_api_keys: list[ProviderKey] = Field(default_factory=list)
    fal_base_url: str = "https://queue.fal.run"
    pika_model: str | None = None
    pika_resolution: str = "720p"
    # Generations the whole deployment runs at a provider at once, across every orchestrator instance (unset:
    # no limit of ours); with several keys (``*_API_KEYS``) each key's ``max_concurrency`` instead.
    mock_max_concurrency: PositiveLimit = None
    runway_max_concurrency: PositiveLimit = None
    luma_max_concurrency: PositiveLimit = None
    pika_max_concurrency: PositiveLimit = None
    # Calls to a provider's API (submits, polls, cancels) per second, all instances together (unset: no cap).
    runway_max_requests_per_second: PositiveRate = None
    luma_max_requests_per_second: PositiveRate = None
    pika_max_requests_per_second: PositiveRate = None
    # The least time between two reads of one task at each provider, whatever the settings below say: Runway
    # asks for five seconds, as its adapter does by default (0: none of the provider's own).
    runway_poll_interval_seconds: float = Field(default=5.0, ge=0)
    luma_poll_interval_seconds: float = Field(default=0.0, ge=0)
    pika_poll_interval_seconds: float = Field(default=0.0, ge=0)
    # Provider callbacks (docs/providers.md, "Callbacks"): on, Luma's creates carry a callback_url and fal's
    # submits a webhook_url, each under VIDEOGEN_PUBLIC_BASE_URL (which the providers must then reach: they
    # already fetch first frames from it), and a task of theirs is read when its provider calls back, else
    # only every provider_callback_poll_seconds (the safety net for a callback lost). Off (the default):
    # every task is polled as below. Runway has no callbacks: it is polled either way.
    provider_callbacks: bool = False
    provider_callback_poll_seconds: float = Field(default=60.0, gt=0)
    # Polls slow down as a task ages: every max(poll_interval_seconds, age x poll_age_fraction) seconds, at
    # most poll_max_interval_seconds apart.
    poll_age_fraction: float = Field(default=0.05, ge=0)
    poll_max_interval_seconds: float = Field(default=5.0, gt=0)
    # A generation not finished this long after it was admitted to its provider fails with provider_timeout
    # (time spent waiting in our queue for capacity does not count).
    generation_deadline_seconds: float = Field(default=1800.0, gt=0)
    # Each call to a provider's API: its timeout, and how transient failures (429, 5xx, resets) are retried.
    provider_timeout_seconds: float = Field(default=30.0, gt=0)
    provider_retry_attempts: int = Field(default=5, ge=1)
    provider_retry_base_seconds: float = Field(default=0.5, ge=0)
    provider_retry_max_seconds: float = Field(default=30.0, ge=0)
    provider_retry_after_max_seconds: float = Field(default=120.0, ge=0)
    provider_retry_jitter: float = Field(default=0.2, ge=0, lt=1)
    # Copying a provider's video into our storage: its size limit and the whole download's timeout.
    download_max_bytes: int = Field(default=512 * 1024 * 1024, ge=1)
    download_timeout_seconds: float = Field(default=300.0, gt=0)
    # Fetching a first frame from the client's URL (at most VIDEOGEN_IMAGE_MAX_BYTES) takes at most this long.
    image_fetch_timeout_seconds: float = Field(default=20.0, gt=0)
    shutdown_timeout_seconds: float = Field(default=10.0, gt=0)
    # Each provider key's breaker (routing): it opens after this many failures in a row through the provider's
    # fault, takes no routed work for the cool-down, then lets one probe at a time through (each probe holds
    # its slot at most ``provider_breaker_probe_seconds``) and closes when one succeeds. The last
    # ``provider_health_window`` outcomes and times to finish are kept for the success rate and p50 time;
    # successes are written together at most ``provider_health_flush_seconds`` after the first (0: each at
    # once), failures at once. (The notifier's ``breaker_*`` are the webhook endpoints'.)
    provider_breaker_failures: int = Field(default=5, ge=1)
    provider_breaker_cooldown_seconds: float = Field(default=30.0, gt=0)
    provider_breaker_probe_seconds: float = Field(default=300.0, gt=0)
    provider_health_window: int = Field(default=50, ge=1, le=1000)
    provider_health_flush_seconds: float = Field(default=1.0, ge=0, le=60)
    # The retention sweeper (media past its retention, deleted generations' folders, expired uploads): a pass
    # this often, on one instance at a time (a leased lock of this many seconds, renewed every batch), this
    # many generations (or uploads) a batch.
    media_sweep_interval_seconds: float = Field(default=60.0, gt=0)
    media_sweep_lease_seconds: float = Field(default=120.0, gt=0)
    media_sweep_batch: int = Field(default=300, ge=1, le=1000)

    def pools(self, provider: Provider) -> list[PoolConfig]:
        """The provider's keys, each with its limit: one pool (named None) for a single key or the mock."""
        setting = CREDENTIALS.get(provider)
        limit: int | None = getattr(self, f"{provider.value}_max_concurrency")
        model, resolution = self.model_of(provider)
        if setting is None:
            return [PoolConfig(provider, None, None, limit, model, resolution)]
        keys: list[ProviderKey] = getattr(self, f"{setting}s")
        if keys:
            return [
                PoolConfig(provider, k.name, k.key.get_secret_value(), k.max_concurrency, model, resolution)
                for k in keys
            ]
        single: SecretStr | None = getattr(self, setting)
        key = single.get_secret_value() if single else None
        return [PoolConfig(provider, None, key, limit, model, resolution)]

    def model_of(self, provider: Provider) -> tuple[str, str]:
        """The model the provider's adapter asks for when a generation names none (its *_MODEL, else the
        catalogue's default), and its resolution unless a request says."""
        chosen: str | None = getattr(self, f"{provider.value}_model", None)
        if chosen is None:
            default = self.catalogue.default(provider.value)
            chosen = default.id if default is not None else provider.value
        resolution: str = getattr(
            self, f"{provider.value}_resolution", CAPABILITIES[provider].default_resolution
        )
        return chosen.strip("/"), resolution

    def max_requests_per_second(self, provider: Provider) -> float | None:
        rate: float | None = getattr(self, f"{provider.value}_max_requests_per_second", None)
        return rate

    def poll_interval_of(self, provider: Provider) -> float:
        """The least time between two reads of one of the provider's tasks (its adapter's cadence)."""
        interval: float = getattr(self, f"{provider.value}_poll_interval_seconds", 0.0)
        return interval

    @model_validator(mode="after")
    def _credentials_of_enabled_providers(self) -> Self:
        for provider in sorted(self.providers):
            setting = CREDENTIALS.get(provider)
            if setting is None:
                continue
            secret = getattr(self, setting)
            keys: list[ProviderKey] = getattr(self, f"{setting}s")
            single = secret is not None and bool(secret.get_secret_value().strip())
            variable = setting.upper()
            if single and keys:
                raise PydanticCustomError(
                    "provider_credentials",
                    "set VIDEOGEN_{variable} or VIDEOGEN_{variable}S, not both",
                    {"variable": variable},
                )
            if keys and getattr(self, f"{provider.value}_max_concurrency") is not None:
                raise PydanticCustomError(
                    "provider_credentials",
                    "VIDEOGEN_{limit} does not apply with VIDEOGEN_{variable}S: give each key its "
                    "max_concurrency",
                    {"limit": f"{provider.value}_max_concurrency".upper(), "variable": variable},
                )
            if len({k.name for k in keys}) != len(keys):
                raise PydanticCustomError(
                    "provider_credentials",
                    "the keys in VIDEOGEN_{variable}S need names of their own",
                    {"variable": variable},
                )
            if not single and not keys:
                raise PydanticCustomError(
                    "provider_credentials",
                    "VIDEOGEN_{variable} is required because VIDEOGEN_PROVIDERS enables {provider}",
                    {"variable": variable, "provider": provider.value},
                )
        return self
