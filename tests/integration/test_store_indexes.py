"""The store's indexes as the migration leaves them: every index the code declares, none it has retired."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pymongo import ASCENDING, IndexModel
from pymongo.errors import DuplicateKeyError

from videogen_common.deliveries import delivery_body, pending_delivery
from videogen_common.repositories.indexes import INDEXES, RETIRED_INDEXES, ensure_indexes
from videogen_common.store import Store


async def index_names(store: Store, collection: str) -> set[str]:
    return {index["name"] async for index in await store.db[collection].list_indexes()}


async def test_migration_drops_retired_indexes_and_keeps_declared_ones(store: Store) -> None:
    # As an earlier version left it: deliveries unique on (event_id, webhook_id) through their own index.
    await store.deliveries.create_indexes(
        [IndexModel([("event_id", ASCENDING), ("webhook_id", ASCENDING)], name="one_per_event_endpoint")]
    )
    assert "one_per_event_endpoint" in await index_names(store, "deliveries")

    await ensure_indexes(store)
    await ensure_indexes(store)  # idempotent: nothing left to drop the second time

    for collection, models in INDEXES.items():
        names = await index_names(store, collection)
        assert {model.document["name"] for model in models} <= names
        assert not set(RETIRED_INDEXES.get(collection, [])) & names


async def test_a_delivery_is_unique_on_its_event_and_endpoint_through_its_id(store: Store) -> None:
    now = datetime(2026, 11, 21, tzinfo=UTC)

    def make(event_id: str, webhook_id: str) -> dict[str, object]:
        body = delivery_body("video.completed", "2026-11-21T00:00:00Z", {"id": "gen_1"})
        return pending_delivery(
            event_id=event_id,
            event_type="video.completed",
            webhook_id=webhook_id,
            account_id="acme",
            body=body,
            now=now,
        ).to_doc()

    await store.deliveries.insert_one(make("evt_1", "wh_1"))
    with pytest.raises(DuplicateKeyError):
        await store.deliveries.insert_one(make("evt_1", "wh_1"))
    await store.deliveries.insert_one(make("evt_1", "wh_2"))  # another endpoint
    await store.deliveries.insert_one(make("evt_2", "wh_1"))  # another event
    assert await store.deliveries.count_documents({}) == 3
