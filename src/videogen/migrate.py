"""The migration step: create Kafka topics and MongoDB indexes, store as events what an earlier version left
owed, and make the media an earlier version stored due to the retention sweeper. Idempotent; run before the
services start."""

from __future__ import annotations

from datetime import UTC, datetime

from videogen_common.earlier_outboxes import adopt_owed_events
from videogen_common.repositories.deletions import GenerationDeletions
from videogen_common.repositories.indexes import ensure_indexes, once
from videogen_common.settings import CommonSettings
from videogen_common.store import Store, connect
from videogen_common.topics import Topics, ensure_topics

# The one-time backfill of media due times (``GenerationDeletions.backfill``), as ``migrations`` records it.
MEDIA_DUE_MIGRATION = "media_due"


async def migrate_store(store: Store, media_retention_days: int, now: datetime) -> None:
    """The store's part: indexes and the data migrations, the events an earlier version left owed, and (once)
    the media stored before the retention sweeper existed made due as the deployment's retention says."""
    await ensure_indexes(store)
    await adopt_owed_events(store, now)
    deletions = GenerationDeletions(store)
    await once(store, MEDIA_DUE_MIGRATION, lambda: deletions.backfill(media_retention_days), now)


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
        await migrate_store(store, settings.media_retention_days, datetime.now(UTC))
    finally:
        await client.close()
    return created
