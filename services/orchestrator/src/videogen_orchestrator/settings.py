from __future__ import annotations

import os
import socket

from pydantic import Field

from videogen_common.settings import CommonSettings


def _default_instance() -> str:
    return f"{socket.gethostname()}-{os.getpid()}"


class OrchestratorSettings(CommonSettings):
    orchestrator_group: str = "videogen-orchestrator"
    # Identifies this process as a lease owner. Defaults to host-pid, unique per process.
    orchestrator_instance: str = Field(default_factory=_default_instance)
    lease_seconds: float = Field(default=30.0, gt=0)
    # A generation nobody has leased this long after creation is assumed to have lost its request message.
    dispatch_grace_seconds: float = Field(default=10.0, ge=0)
    reconcile_interval_seconds: float = Field(default=5.0, gt=0)
    max_in_flight: int = Field(default=64, ge=1)
    poll_interval_seconds: float = Field(default=1.0, gt=0)
    mock_latency_ms: int = Field(default=0, ge=0)
    mock_failure_rate: float = Field(default=0.0, ge=0.0, le=1.0)
    shutdown_timeout_seconds: float = Field(default=10.0, gt=0)
