from __future__ import annotations

import math

from pydantic import Field, field_validator

from videogen_common.settings import CommonSettings

# Standard Webhooks' spirit: immediately, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h.
DEFAULT_SCHEDULE = "5,300,1800,7200,18000,36000,36000"


class NotifierSettings(CommonSettings):
    notifier_group: str = "videogen-notifier"
    # Success is any 2xx within this many seconds (the spec asks receivers to answer within 5 s).
    delivery_timeout_seconds: float = Field(default=5.0, gt=0, le=60)
    # Seconds to wait before each retry after the first, immediate attempt (comma-separated).
    webhook_retry_schedule: str = DEFAULT_SCHEDULE
    retry_jitter: float = Field(default=0.2, ge=0, lt=1)
    endpoint_concurrency: int = Field(default=4, ge=1)
    sweep_interval_seconds: float = Field(default=1.0, gt=0)
    sweep_batch: int = Field(default=200, ge=1)
    shutdown_timeout_seconds: float = Field(default=10.0, gt=0)

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
