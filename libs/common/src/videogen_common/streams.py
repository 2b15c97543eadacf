"""Options for the worker services' faust apps, in one place (common does not import faust itself)."""

from __future__ import annotations

from typing import Any

from videogen_common.settings import CommonSettings


def faust_options(settings: CommonSettings, group: str) -> dict[str, Any]:
    """Tuned for any Kafka-API broker: at-least-once (no idempotent or transactional producer), no tables
    (MongoDB holds state), committed offsets from the earliest, topics never auto-created, fast group
    joins."""
    datadir = settings.data_dir / "faust" / group
    datadir.mkdir(parents=True, exist_ok=True)
    return {
        "id": group,
        "broker": ";".join(f"kafka://{host.strip()}" for host in settings.kafka_bootstrap.split(",")),
        "store": "memory://",
        "processing_guarantee": "at_least_once",
        "producer_enable_idempotence": False,
        "consumer_auto_offset_reset": "earliest",
        "broker_session_timeout": 6,
        "broker_heartbeat_interval": 1,
        "broker_rebalance_timeout": 6,
        "topic_allow_declare": False,
        "topic_disable_leader": True,
        "web_enabled": False,
        "datadir": str(datadir),
        "autodiscover": False,
    }
