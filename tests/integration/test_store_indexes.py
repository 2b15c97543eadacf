"""The store's indexes and documents as the migration leaves them: every index the code declares, none it has
retired, and what an earlier version left in a shape this one no longer reads moved to the one it reads."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pymongo import ASCENDING, IndexModel
from pymongo.errors import DuplicateKeyError

from tests.support.fakes import ManualClock
from tests.support.generations import insert_generation, stored_generation
from tests.support.orchestration import Orchestration
from videogen.migrate import MEDIA_DUE_MIGRATION, migrate_store
from videogen_common.deliveries import delivery_body, pending_delivery
from videogen_common.domain import Provider
from videogen_common.generations import new_generation
from videogen_common.ids import new_id
from videogen_common.records.generation import METADATA_PAIRS, GenerationRecord
from videogen_common.repositories.indexes import (
    INDEXES,
    MIGRATIONS,
    RETIRED_INDEXES,
    ensure_indexes,
    fill_metadata_pairs,
)
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


async def test_migration_puts_generations_left_in_an_account_queue_in_line_at_their_provider(
    store: Store, base_env: dict[str, str], tmp_path: Path
) -> None:
    clock = ManualClock()
    # Waiting in its account's queue as the version before admission left it: unleased, "account\nid".
    old = await insert_generation(store, clock.now(), status="queued", slot_wait="acme\ngen_old")
    done = await insert_generation(store, clock.now(), status="completed", slot_wait="acme\ngen_done")
    await ensure_indexes(store)

    migrated = await stored_generation(store, old["_id"])
    assert "slot_wait" not in migrated and migrated["lease_expires_at"] < clock.now()
    assert (await stored_generation(store, done["_id"]))["slot_wait"] == "acme\ngen_done"  # finished: left be

    # The reconciler's next pass resumes it, and admission starts it (nothing else waits).
    wiring = Orchestration(store, base_env, tmp_path / "media", clock=clock)
    runner = wiring.runner()
    await wiring.reconciler(runner).run_once()
    await runner.wait_idle()
    assert (await stored_generation(store, old["_id"]))["status"] == "completed"
    await wiring.stop()


async def test_migration_gives_generations_stored_without_them_their_metadata_pairs(store: Store) -> None:
    # As the version before left them: metadata, and no pairs (nor the migration's mark).
    await store.db[MIGRATIONS].delete_many({})
    now = datetime.now(UTC).replace(microsecond=0)
    old = [_made(now - timedelta(days=n), {"batch": f"b{n}", "customer": "c"}) for n in range(1, 40)]
    plain = _made(now - timedelta(days=3))
    await store.generations.insert_many([*old, plain])

    walked = await fill_metadata_pairs(store, batch=10, now=now)

    assert walked.filled == len(old) and walked.read == len(old) + 1
    for doc in await store.generations.find({"_id": {"$in": [doc["_id"] for doc in old]}}).to_list(None):
        assert sorted(doc[METADATA_PAIRS]) == sorted(f"{k}={v}" for k, v in doc["metadata"].items())
    assert METADATA_PAIRS not in (await store.generations.find_one({"_id": plain["_id"]}) or {})
    # Done: the next run reads only the last hour before its mark, and writes nothing.
    again = await fill_metadata_pairs(store, batch=10, now=now + timedelta(minutes=5))
    assert (again.read, again.filled) == (0, 0)
    # One written meanwhile by a replica of the version before (a rolling update) is found by the next run.
    late = _made(now + timedelta(minutes=1), {"batch": "late"})
    await store.generations.insert_one(late)
    last = await fill_metadata_pairs(store, batch=10, now=now + timedelta(minutes=10))
    assert (last.read, last.filled) == (1, 1)
    assert (await store.generations.find_one({"_id": late["_id"]}) or {})[METADATA_PAIRS] == ["batch=late"]


async def test_media_stored_before_the_sweeper_is_made_due_by_the_first_migration_only(store: Store) -> None:
    now = datetime(2026, 11, 21, tzinfo=UTC)
    # Completed by a version before the retention sweeper: media, and no due time.
    old = await insert_generation(store, now, status="completed", video_key="v/old.mp4", updated_at=now)
    await store.db[MIGRATIONS].delete_many({})
    await migrate_store(store, 30, now)
    assert (await stored_generation(store, old["_id"]))["media_due_at"] == now + timedelta(days=30)
    # Done once: the next migrations read nothing of the generations for it (no shape finds a field they lack
    # without reading them all).
    later = await insert_generation(store, now, status="completed", video_key="v/later.mp4", updated_at=now)
    await migrate_store(store, 30, now + timedelta(days=1))
    assert "media_due_at" not in await stored_generation(store, later["_id"])
    assert (await store.db[MIGRATIONS].find_one({"_id": MEDIA_DUE_MIGRATION}) or {})["done_at"] == now


async def test_a_new_store_is_marked_past_its_one_time_migrations(store: Store) -> None:
    await store.db[MIGRATIONS].delete_many({})
    now = datetime(2026, 11, 21, tzinfo=UTC)
    await migrate_store(store, 30, now)
    assert await store.db[MIGRATIONS].find_one({"_id": MEDIA_DUE_MIGRATION}) is not None


def _made(at: datetime, metadata: dict[str, str] | None = None) -> dict[str, Any]:
    """A generation's document as a version before the metadata's pairs wrote it."""
    doc = new_generation(
        generation_id=new_id("gen", at),
        account_id="acme",
        prompt="a fox",
        provider=Provider.MOCK,
        duration=3,
        now=at,
        metadata=metadata,
    )
    doc.pop(METADATA_PAIRS, None)
    return doc


async def test_a_tombstone_keeps_no_metadata_pairs() -> None:
    doc = new_generation(
        generation_id="gen_1",
        account_id="acme",
        prompt="a fox",
        provider=Provider.MOCK,
        duration=3,
        now=datetime.now(UTC),
        metadata={"batch": "b"},
    )
    record = GenerationRecord.from_doc(doc)
    assert doc[METADATA_PAIRS] == record.to_doc()[METADATA_PAIRS] == ["batch=b"]
    deleted = record.tombstone(datetime.now(UTC), media_due_at=datetime.now(UTC))
    assert METADATA_PAIRS not in deleted.to_doc()
    assert deleted.tombstone_update()["$unset"][METADATA_PAIRS] == ""
