"""The migration step: create Kafka topics and MongoDB indexes, store as events what an earlier version left
owed, and make the media an earlier version stored due to the retention sweeper. Idempotent; run before the
services start."""

from __future__ import annotations

from datetime import UTC, datetime

from videogen_common.earlier_outboxes import adopt_owed_events
from videogen_common.repositories.deletions import GenerationDeletions
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
        # Media stored before the retention sweeper existed is due as the deployment's retention says.
        await GenerationDeletions(store).backfill(settings.media_retention_days)
    finally:
        await client.close()
    return created
