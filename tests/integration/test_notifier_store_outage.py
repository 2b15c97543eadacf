"""The notifier through a store that fails it: what it holds is sent as soon as the store answers again, never
left to wait in the store for its claim to end.

A delivery the notifier creates with room in its lane is stored claimed by it for ``delivery_hold_seconds``
(60 s by default) and queued at once. If the store then fails an attempt's write, or fails the batch's insert
after all the same writing it, such a delivery used to be dropped from its lane and sent only once that claim
ended: a store outage of seconds became a minute with almost no deliveries, then a burst. Here the hold is an
hour, so a delivery left to its claim would never arrive within the test.

The stores are real: one of the test's own, killed with SIGKILL and restarted; and one that writes a batch but
answers that the write concern could not be met (a write concern no single server can satisfy)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from datetime import UTC, datetime
from typing import Any

import aiohttp
import pytest
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.errors import BulkWriteError
from pymongo.write_concern import WriteConcern

from tests.integration.test_notifier_deliveries import video_event
from tests.support.engines import EngineProcess, impatient_mongo_url
from tests.support.env import settings_for
from tests.support.notifier import NotifierHarness
from tests.support.receivers import Reply, always, receiving
from tests.support.webhooks import insert_webhook
from videogen_common.clock import SystemClock
from videogen_common.deliveries import PENDING, SUCCEEDED
from videogen_common.repositories.indexes import ensure_indexes
from videogen_common.store import Store, connect
from videogen_notifier.deliveries import new_deliveries
from videogen_notifier.dispatcher import Dispatcher
from videogen_notifier.settings import NotifierSettings

ACCOUNT = "acme"
HOUR = "3600"
CONVERGE_S = 30.0


class UnacknowledgingStore(Store):
    """The real store, whose delivery writes carry a write concern no single server can meet while
    ``unacknowledged`` is set: the server writes them and answers with a write concern error."""

    unacknowledged = True

    @property
    def deliveries(self) -> AsyncCollection[dict[str, Any]]:
        collection = super().deliveries
        if self.unacknowledged:
            return collection.with_options(write_concern=WriteConcern(w=3, wtimeout=100))
        return collection


async def settled(store: Store, ids: list[str]) -> dict[str, dict[str, Any]]:
    """The deliveries once none of ``ids`` is pending (polled: the dispatcher's writes have no event)."""
    async with asyncio.timeout(CONVERGE_S):
        while True:
            docs = {d["_id"]: d async for d in store.deliveries.find({"_id": {"$in": ids}})}
            if len(docs) == len(ids) and all(d["status"] != PENDING for d in docs.values()):
                return docs
            await asyncio.sleep(0.05)


@pytest.fixture
async def stack() -> AsyncIterator[AsyncExitStack]:
    async with AsyncExitStack() as stack:
        yield stack


def dispatcher(stack: AsyncExitStack, base_env: dict[str, str], store: Store, **overrides: str) -> Dispatcher:
    settings = settings_for(
        NotifierSettings,
        base_env,
        delivery_hold_seconds=HOUR,
        endpoint_cache_seconds="60",  # the attempts need no endpoint read while the store is gone
        **overrides,
    )
    return NotifierHarness(base_env, store, SystemClock(), stack).dispatcher_with(
        settings, aiohttp.ClientSession()
    )


async def test_deliveries_in_flight_when_the_store_dies_are_sent_and_recorded_once_it_is_back(
    own_store: EngineProcess, base_env: dict[str, str], stack: AsyncExitStack
) -> None:
    client, store = connect(impatient_mongo_url(own_store), "outage", app_name="tests")
    stack.push_async_callback(client.close)
    await ensure_indexes(store)
    answer = asyncio.Event()
    receiver = await stack.enter_async_context(receiving(always(Reply(200, until=answer))))
    await insert_webhook(
        store, receiver.url(), now=datetime.now(UTC), account_id=ACCOUNT, events=["video.completed"]
    )
    notifier = dispatcher(stack, base_env, store, endpoint_concurrency="2")
    ids = []
    for _ in range(4):
        event = video_event("completed", SystemClock().now())
        made = await notifier.create(await new_deliveries(store, event, SystemClock().now()))
        ids += [delivery_id for delivery_id, _ in made]
    assert len(ids) == 4

    await receiver.request(2)  # two attempts in flight (the lane's concurrency), two queued behind them
    await asyncio.to_thread(own_store.stop, kill=True)
    answer.set()  # the receiver answers 200; the attempts' records cannot be written
    await receiver.request(3)  # an attempt met the dead store and was tried again
    await asyncio.to_thread(own_store.start)

    docs = await settled(store, ids)
    assert {d["status"] for d in docs.values()} == {SUCCEEDED}
    assert all(len(d["attempts"]) == 1 for d in docs.values())  # each recorded once, as one attempt
    received = {r.headers["webhook-id"] for r in receiver.requests}
    assert received == set(ids)


async def test_a_batch_the_store_wrote_but_did_not_acknowledge_is_sent_when_it_is_tried_again(
    store: Store, base_env: dict[str, str], stack: AsyncExitStack
) -> None:
    flaky = UnacknowledgingStore(store.db)
    receiver = await stack.enter_async_context(receiving())
    for n in range(2):
        await insert_webhook(
            store,
            receiver.url(f"/{n}"),
            now=datetime.now(UTC),
            account_id=ACCOUNT,
            events=["video.completed"],
        )
    notifier = dispatcher(stack, base_env, flaky)
    event = video_event("completed", SystemClock().now())
    with pytest.raises(BulkWriteError):
        await notifier.create(await new_deliveries(store, event, SystemClock().now()))
    written = [d async for d in store.deliveries.find({"event_id": event.id})]
    assert len(written) == 2  # written all the same, claimed by the notifier for an hour
    assert all(d["status"] == PENDING for d in written)

    flaky.unacknowledged = False
    again = await notifier.create(await new_deliveries(store, event, SystemClock().now()))  # the retry
    assert again == []  # nothing new to store

    ids = [d["_id"] for d in written]
    docs = await settled(store, ids)
    assert {d["status"] for d in docs.values()} == {SUCCEEDED}
    assert sorted(r.headers["webhook-id"] for r in receiver.requests) == sorted(ids)
