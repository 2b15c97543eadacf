from __future__ import annotations

import os
import socket
from typing import Self

from pydantic import Field, SecretStr, model_validator
from pydantic_core import PydanticCustomError

from videogen_common.domain import Provider
from videogen_common.settings import CommonSettings

# The credential each real provider needs, by the setting that holds it (pika is reached through fal.ai).
CREDENTIALS: dict[Provider, str] = {
    Provider.RUNWAY: "runway_api_key",
    Provider.LUMA: "luma_api_key",
    Provider.PIKA: "fal_api_key",
}


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
    max_in_flight: int = Field(default=64, ge=1)
    # Generations one account may have at its providers at once, across all instances; beyond it they wait as
    # `queued` and start oldest first as slots free.
    account_max_in_flight: int = Field(default=16, ge=1)
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
    runway_base_url: str = "https://api.dev.runwayml.com"
    runway_api_version: str = "2024-11-06"
    runway_model: str = "gen4.5"
    luma_api_key: SecretStr | None = None
    luma_base_url: str = "https://api.lumalabs.ai/dream-machine/v1"
    luma_model: str = "ray-2"
    luma_resolution: str = "720p"
    fal_api_key: SecretStr | None = None
    fal_base_url: str = "https://queue.fal.run"
    pika_model: str = "fal-ai/pika/v2.2/text-to-video"
    pika_resolution: str = "720p"
    # A generation not finished this long after its creation fails with provider_timeout.
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

    @model_validator(mode="after")
    def _credentials_of_enabled_providers(self) -> Self:
        for provider in sorted(self.providers):
            setting = CREDENTIALS.get(provider)
            if setting is None:
                continue
            secret = getattr(self, setting)
            if secret is None or not secret.get_secret_value().strip():
                raise PydanticCustomError(
                    "provider_credentials",
                    "VIDEOGEN_{variable} is required because VIDEOGEN_PROVIDERS enables {provider}",
                    {"variable": setting.upper(), "provider": provider.value},
                )
        return self
