"""The migration step: create Kafka topics and MongoDB indexes, and store as events what an earlier version
left owed. Idempotent; run before the services start."""

from __future__ import annotations

from datetime import UTC, datetime

from videogen_common.earlier_outboxes import adopt_owed_events
from videogen_common.repositories.indexes import ensure_indexes
from videogen_common.settings import CommonSettings
from videogen_common.store import connect
from videogen_common.topics import Topics, ensure_topics


async def migrate(settings: CommonSettings) -> list[str]:
    created = await ensure_topics(
        settings.kafka_bootstrap,
        Topics(settings.topic_prefix),
        settings.topic_partitions,
        settings.topic_replication_factor,
    )
    client, store = connect(
        settings.mongo_url,
        settings.mongo_db,
        app_name="videogen-migrate",
        durability=settings.mongo_write_concern,
    )
    try:
        await ensure_indexes(store)
        await adopt_owed_events(store, datetime.now(UTC))
    finally:
        await client.close()
    return created
