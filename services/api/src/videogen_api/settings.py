from __future__ import annotations

from pydantic import Field

from videogen_common.settings import CommonSettings


class ApiSettings(CommonSettings):
    api_host: str = "127.0.0.1"
    api_port: int = Field(default=8080, ge=0, le=65535)
    max_body_bytes: int = Field(default=64 * 1024, ge=1024)
    prompt_max_chars: int = Field(default=2000, ge=1)
    # Production requires https webhook URLs; the dev stack allows plain http (and loopback).
    webhook_allow_http: bool = False
    # Valid API keys are cached this long; a revoked key may keep working for at most this many seconds.
    api_key_cache_seconds: float = Field(default=30.0, ge=0)
    # How long creation waits for the broker before answering anyway (the document is already durable,
    # and the orchestrator's reconciler picks up any request whose message never arrived).
    publish_timeout_seconds: float = Field(default=2.0, gt=0)
    shutdown_timeout_seconds: float = Field(default=10.0, gt=0)
    # Webhook endpoints one account may register (POST /v1/webhooks answers 409 webhook-limit beyond it).
    max_webhooks_per_account: int = Field(default=20, ge=1)
    # After a secret rotation the previous secret keeps signing (alongside the new one) this long.
    webhook_secret_overlap_seconds: float = Field(default=86400.0, ge=0)
    # How far back POST /v1/webhooks/{id}/recover may reach.
    webhook_recover_window_seconds: float = Field(default=14 * 86400.0, gt=0)
