from __future__ import annotations

import math

from pydantic import Field, field_validator

from videogen_common.settings import CommonSettings

# Standard Webhooks' spirit: immediately, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h.
DEFAULT_SCHEDULE = "5,300,1800,7200,18000,36000,36000"
FIVE_DAYS_S = 5 * 24 * 3600.0


class NotifierSettings(CommonSettings):
    notifier_group: str = "videogen-notifier"
    # The side HTTP server for /healthz, /readyz and /metrics (0 picks a free port). In a pod: host 0.0.0.0.
    notifier_host: str = "127.0.0.1"
    notifier_port: int = Field(default=8082, ge=0, le=65535)
    # Success is any 2xx within this many seconds (the spec asks receivers to answer within 5 s).
    delivery_timeout_seconds: float = Field(default=5.0, gt=0, le=60)
    # Seconds to wait before each retry after the first, immediate attempt (comma-separated).
    webhook_retry_schedule: str = DEFAULT_SCHEDULE
    retry_jitter: float = Field(default=0.2, ge=0, lt=1)
    endpoint_concurrency: int = Field(default=4, ge=1)
    # Events the agent takes from Kafka at once (all that are waiting, up to this many, or what came within
    # status_batch_seconds; the names are kept from when it read status events): one endpoint read per
    # account and one insert for all their deliveries.
    status_batch_size: int = Field(default=100, ge=1)
    status_batch_seconds: float = Field(default=0.01, gt=0, le=1)
    # Deliveries held in memory per endpoint (queued or in flight), and in all (each with its body, ~2 KB);
    # beyond either they wait in the store, due, and the sweeper brings them in as lanes drain. Bounds what a
    # dead endpoint can cost.
    endpoint_queue_limit: int = Field(default=1000, ge=1)
    queue_limit: int = Field(default=20_000, ge=1)
    # A delivery the notifier creates while its lane has room is stored claimed by this instance for this
    # long (extended if it waits longer): its first attempt needs no claim, and the sweeps do not read it.
    # After a crash it is sent once this claim ends.
    delivery_hold_seconds: float = Field(default=60.0, gt=0)
    # How long a lane reuses the endpoint's document before reading it again: a change made through the API
    # (URL, events, secrets, active) reaches deliveries within this long. 0 reads it for every attempt.
    endpoint_cache_seconds: float = Field(default=1.0, ge=0, le=60)
    sweep_interval_seconds: float = Field(default=1.0, gt=0)
    # At most this many due deliveries per sweep (the store reads every due one whatever the limit).
    sweep_batch: int = Field(default=1000, ge=1)
    shutdown_timeout_seconds: float = Field(default=10.0, gt=0)
    # After this many failed attempts in a row to one endpoint, its lane pauses for the cooldown.
    breaker_failures: int = Field(default=5, ge=1)
    breaker_cooldown_seconds: float = Field(default=30.0, ge=0)
    # An endpoint that has had nothing but failures for this long is disabled (Svix: 5 days).
    webhook_disable_after_seconds: float = Field(default=FIVE_DAYS_S, gt=0)

    @field_validator("webhook_retry_schedule")
    @classmethod
    def _schedule(cls, value: str) -> str:
        try:
            delays = [float(part) for part in value.split(",") if part.strip()]
        except ValueError:
            raise ValueError("must be comma-separated seconds, e.g. '5,300,1800'") from None
        if any(not math.isfinite(d) or d < 0 for d in delays):
            raise ValueError("delays must be finite, non-negative numbers of seconds")
        return value

    @property
    def retry_delays(self) -> list[float]:
        return [float(part) for part in self.webhook_retry_schedule.split(",") if part.strip()]
