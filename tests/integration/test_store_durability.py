"""Acknowledged means durable, the store's own crash included.

Concurrent writers go through the project's own write paths — creation's grouped inserts (the api), the
compare-and-set transition (the orchestrator and the api's cancel) and delivery records (the notifier) —
against a store of this test's own; the store is killed with SIGKILL mid-load and restarted on the same files.
Every write acknowledged before the kill must be there afterwards.

With ``VIDEOGEN_TEST_STORE_DURABILITY=primary-memory`` the same test runs with the store's default write
concern (acknowledged from memory) and shows what that loses."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from pymongo.errors import PyMongoError

from tests.support.engines import EngineProcess, impatient_mongo_url
from tests.support.webhooks import insert_webhook
from videogen_common.domain import Provider, Status
from videogen_common.generations import new_generation, terminal_event
from videogen_common.ids import new_id
from videogen_common.records.generation import GenerationRecord
from videogen_common.repositories.batched_inserts import InsertBatcher
from videogen_common.repositories.generations import GenerationRepository
from videogen_common.repositories.indexes import ensure_indexes
from videogen_common.store import Durability, connect
from videogen_notifier.deliveries import insert_new, new_deliveries

Doc = dict[str, Any]
ACCOUNT = "acme"
LOAD_SECONDS = 2.5
PREPARED = 4000  # generations waiting for a transition; more than the writers get through before the kill


def durability_under_test() -> Durability:
    return Durability(os.environ.get("VIDEOGEN_TEST_STORE_DURABILITY", Durability.MAJORITY_JOURNALED))


def _generation(now: datetime) -> Doc:
    return new_generation(
        generation_id=new_id("gen", now),
        account_id=ACCOUNT,
        prompt="durable",
        provider=Provider.MOCK,
        duration=3,
        now=now,
    )


async def _until_killed(killed: asyncio.Event, write: Callable[[], Awaitable[None]]) -> None:
    """Write again and again until the store is killed; a write that fails is not acknowledged."""
    while not killed.is_set():
        try:
            await write()
        except PyMongoError:
            return


async def test_every_write_acknowledged_before_the_store_is_killed_is_there_after_it_restarts(
    own_store: EngineProcess,
) -> None:
    durability = durability_under_test()
    client, store = connect(
        impatient_mongo_url(own_store), "durability", app_name="tests", durability=durability
    )
    now = datetime.now(UTC)
    await ensure_indexes(store)
    for n in range(2):
        await insert_webhook(
            store, f"http://127.0.0.1:9/{n}", now=now, account_id=ACCOUNT, events=["video.completed"]
        )
    prepared = [_generation(now) for _ in range(PREPARED)]
    await store.generations.insert_many(prepared)

    created: set[str] = set()
    transitioned: set[str] = set()
    recorded: set[str] = set()
    killed = asyncio.Event()
    batcher = InsertBatcher(GenerationRepository(store))
    waiting = iter(prepared)

    async def create() -> None:  # ten concurrent requests' documents, grouped as the api groups them
        docs = [_generation(datetime.now(UTC)) for _ in range(10)]
        outcomes = await asyncio.gather(*(batcher.insert(doc) for doc in docs), return_exceptions=True)
        created.update(doc["_id"] for doc, out in zip(docs, outcomes, strict=True) if out is None)
        failure = next((out for out in outcomes if isinstance(out, BaseException)), None)
        if failure is not None:
            raise failure

    async def complete() -> None:  # the orchestrator's terminal transition
        doc = next(waiting)
        if (
            await GenerationRepository(store).transition(doc, Status.COMPLETED, now=datetime.now(UTC))
            is not None
        ):
            transitioned.add(doc["_id"])

    async def record() -> None:  # the notifier's delivery records for an event
        doc = {**_generation(datetime.now(UTC)), "status": Status.COMPLETED.value, "version": 3}
        event = terminal_event(GenerationRecord.from_doc(doc))
        made = await insert_new(store, await new_deliveries(store, event, datetime.now(UTC)))
        recorded.update(delivery.id for delivery in made)

    writers = [
        asyncio.create_task(_until_killed(killed, work))
        for work in [create] * 3 + [complete] * 3 + [record] * 2
    ]
    await asyncio.sleep(LOAD_SECONDS)  # the load runs for a while; nothing to await but time
    await asyncio.to_thread(own_store.stop, kill=True)
    killed.set()
    await asyncio.gather(*writers)
    await client.close()

    await asyncio.to_thread(own_store.start)
    client, store = connect(impatient_mongo_url(own_store), "durability", app_name="tests")
    try:
        found_created = {d["_id"] async for d in store.generations.find({"_id": {"$in": list(created)}})}
        done = store.generations.find({"_id": {"$in": list(transitioned)}, "status": Status.COMPLETED.value})
        done_docs = [d async for d in done]
        found_transitioned = {d["_id"] for d in done_docs}
        # Each terminal transition's event, carried by the same write.
        found_events = {
            d["_id"] for d in done_docs if [e["type"] for e in d.get("outbox") or ()] == ["video.completed"]
        }
        found_recorded = {d["_id"] async for d in store.deliveries.find({"_id": {"$in": list(recorded)}})}
    finally:
        await client.close()

    lost = {
        "creations": len(created - found_created),
        "transitions": len(transitioned - found_transitioned),
        "their events": len(transitioned - found_events),
        "delivery records": len(recorded - found_recorded),
    }
    acknowledged = {
        "creations": len(created),
        "transitions": len(transitioned),
        "their events": len(transitioned),
        "delivery records": len(recorded),
    }
    print(f"durability={durability.value} acknowledged={acknowledged} lost={lost}")  # noqa: T201
    assert all(acknowledged.values()), acknowledged  # every path was under load when the store died
    assert len(transitioned) < PREPARED  # and the transitions had not run out of work
    assert lost == dict.fromkeys(lost, 0)
