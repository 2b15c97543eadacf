"""videogen_common.repositories.batched_inserts against the real store: concurrent inserts share commands,
each returns only once its own document is stored, and each fails on its own (a duplicate key) or with its
command (the store unreachable)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from pymongo import AsyncMongoClient
from pymongo.errors import DuplicateKeyError, ServerSelectionTimeoutError
from pymongo.monitoring import CommandFailedEvent, CommandListener, CommandStartedEvent, CommandSucceededEvent

from tests.support.fakes import ManualClock
from videogen.engines import free_port
from videogen_common.domain import Provider
from videogen_common.generations import new_generation
from videogen_common.repositories.batched_inserts import InsertBatcher
from videogen_common.repositories.generations import GenerationRepository
from videogen_common.settings import CommonSettings
from videogen_common.store import Store

Doc = dict[str, Any]
NOW = ManualClock().now()


class InsertCommands(CommandListener):
    """Records how many documents each insert command carried."""

    def __init__(self) -> None:
        self.sizes: list[int] = []

    def started(self, event: CommandStartedEvent) -> None:
        if event.command_name == "insert":
            self.sizes.append(len(event.command["documents"]))

    def succeeded(self, event: CommandSucceededEvent) -> None:
        pass

    def failed(self, event: CommandFailedEvent) -> None:
        pass


@pytest.fixture
async def watched(
    common_settings: CommonSettings, store: Store
) -> AsyncIterator[tuple[InsertCommands, Store]]:
    commands = InsertCommands()
    client: AsyncMongoClient[Doc] = AsyncMongoClient(
        common_settings.mongo_url, event_listeners=[commands], tz_aware=True
    )
    try:
        yield commands, Store(client[common_settings.mongo_db])
    finally:
        await client.close()


def generation(n: int, **fields: Any) -> Doc:
    doc = new_generation(
        generation_id=f"gen_{n:026d}",
        account_id="acme",
        prompt=f"clip {n}",
        provider=Provider.MOCK,
        duration=5,
        now=NOW,
    )
    return {**doc, **fields}


async def test_concurrent_inserts_share_one_command_and_each_returns_once_its_document_is_stored(
    watched: tuple[InsertCommands, Store], store: Store
) -> None:
    commands, watched_store = watched
    batcher = InsertBatcher(GenerationRepository(watched_store), max_in_flight=1)
    stored_on_return: list[bool] = []

    async def create(n: int) -> None:
        await batcher.insert(generation(n))
        stored_on_return.append(await store.generations.find_one({"_id": generation(n)["_id"]}) is not None)

    await asyncio.gather(*(create(n) for n in range(20)))

    assert commands.sizes == [20]
    assert stored_on_return == [True] * 20


async def test_while_commands_are_out_new_documents_wait_and_leave_together_in_bounded_batches(
    watched: tuple[InsertCommands, Store], store: Store
) -> None:
    commands, watched_store = watched
    batcher = InsertBatcher(GenerationRepository(watched_store), max_batch=8, max_in_flight=1)

    await asyncio.gather(*(batcher.insert(generation(n)) for n in range(20)))
    await batcher.insert(generation(99))  # alone: not held back for company

    assert commands.sizes == [8, 8, 4, 1]
    assert await store.generations.count_documents({}) == 21


async def test_a_duplicate_key_fails_only_its_own_insert(store: Store) -> None:
    await store.generations.insert_one(generation(0))
    batcher = InsertBatcher(GenerationRepository(store))
    docs = [
        generation(0),  # the same _id again
        generation(1, idem="acme\nk"),
        generation(2, idem="acme\nk"),  # the same Idempotency-Key as the one before, in the same command
        generation(3),
    ]

    outcomes = await asyncio.gather(*(batcher.insert(doc) for doc in docs), return_exceptions=True)

    assert [type(o) for o in outcomes] == [DuplicateKeyError, type(None), DuplicateKeyError, type(None)]
    assert all(o.code == 11000 for o in outcomes if isinstance(o, DuplicateKeyError))
    stored = {doc["_id"] async for doc in store.generations.find({}, projection={"_id": 1})}
    assert stored == {generation(n)["_id"] for n in (0, 1, 3)}


async def test_when_the_store_is_unreachable_every_insert_of_the_command_fails() -> None:
    client: AsyncMongoClient[Doc] = AsyncMongoClient(
        f"mongodb://127.0.0.1:{free_port()}/", serverSelectionTimeoutMS=200
    )
    try:
        batcher = InsertBatcher(GenerationRepository(Store(client["nowhere"])))
        outcomes = await asyncio.gather(
            *(batcher.insert(generation(n)) for n in range(3)), return_exceptions=True
        )
    finally:
        await client.close()

    assert [type(o) for o in outcomes] == [ServerSelectionTimeoutError] * 3


def test_limits_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        InsertBatcher(None, max_batch=0)  # type: ignore[arg-type]
