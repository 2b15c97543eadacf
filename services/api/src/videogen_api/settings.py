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
