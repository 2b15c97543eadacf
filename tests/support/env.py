"""Building a service's settings object from a test's environment dict, the way the service itself would."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any, TypeVar

from pydantic_settings import BaseSettings

from tests.support.engines import Engines
from videogen_common.settings import ENV_PREFIX, load_settings

S = TypeVar("S", bound=BaseSettings)


def settings_for(cls: type[S], env: dict[str, str], **overrides: Any) -> S:
    fields = {k.removeprefix(ENV_PREFIX).lower(): v for k, v in env.items() if k.startswith(ENV_PREFIX)}
    known = {k: v for k, v in fields.items() if k in cls.model_fields}
    return load_settings(cls, **{**known, **overrides})


def isolated_env(engines: Engines, data_dir: Path) -> dict[str, str]:
    """Environment for services under test: a database, topic prefix, consumer groups and data dir of their
    own, so tests sharing the engines never see each other's data."""
    tag = secrets.token_hex(4)
    return {
        "VIDEOGEN_KAFKA_BOOTSTRAP": engines.kafka_bootstrap,
        "VIDEOGEN_MONGO_URL": engines.mongo_url,
        "VIDEOGEN_MONGO_DB": f"test_{tag}",
        "VIDEOGEN_TOPIC_PREFIX": f"t{tag}.",
        "VIDEOGEN_TOPIC_PARTITIONS": "2",
        "VIDEOGEN_DATA_DIR": str(data_dir),
        "VIDEOGEN_ORCHESTRATOR_GROUP": f"orch-{tag}",
        "VIDEOGEN_NOTIFIER_GROUP": f"notif-{tag}",
        "VIDEOGEN_WEBHOOK_ALLOW_HTTP": "true",
        # Test receivers listen on loopback, which the notifier's destination guard refuses by default.
        "VIDEOGEN_WEBHOOK_ALLOW_CIDRS": "127.0.0.0/8",
        "VIDEOGEN_LOG_FORMAT": "json",
        # No load balancer in front of most tests' api: no drain before it stops (the shutdown tests set one).
        "VIDEOGEN_SHUTDOWN_DRAIN_SECONDS": "0",
        # The workers' probe and metrics servers: any free port, so several can run on one machine at once.
        "VIDEOGEN_ORCHESTRATOR_PORT": "0",
        "VIDEOGEN_NOTIFIER_PORT": "0",
        # The Runway fake may be read as often as a test likes (the real Runway asks for five seconds).
        "VIDEOGEN_RUNWAY_POLL_INTERVAL_SECONDS": "0",
    }
