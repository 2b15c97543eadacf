"""GET /v1/generations/{id}/events against the real broker and store: the generation at once, then every
change the status topic brings (progress, status), each once and in order, until it is terminal and the
stream ends; Last-Event-ID resumes with only what is newer; a second api process streams what the first
created; foreign ids are 404; streams are bounded per account; a shutdown ends them."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from tests.support.api import api_client, bearer
from tests.support.env import settings_for
from tests.support.sse import Event, events
from tests.support.status_topic import publish_status
from videogen.keys import create_key
from videogen_api import state
from videogen_api.settings import ApiSettings
from videogen_common.domain import Status
from videogen_common.repositories.generations import GenerationRepository
from videogen_common.settings import CommonSettings
from videogen_common.store import Store
from videogen_common.topics import Topics

Client = TestClient[web.Request, web.Application]
Doc = dict[str, Any]
BODY = {"prompt": "a lighthouse keeper", "provider": "mock", "duration": 3}


async def generation(client: Client, key: str, store: Store) -> Doc:
    created = await (await client.post("/v1/generate", json=BODY, headers=bearer(key))).json()
    doc = await store.generations.find_one({"_id": created["id"]})
    assert doc is not None
    return doc


async def stream(client: Client, key: str, generation_id: str, **headers: str) -> aiohttp.ClientResponse:
    response = await client.get(f"/v1/generations/{generation_id}/events", headers={**bearer(key), **headers})
    await client.app[state.FEED].ready.wait()
    return response


async def next_event(feed: AsyncIterator[Event]) -> Event:
    return await asyncio.wait_for(anext(feed), 30)  # a safety net: the broker is slow on a loaded machine


async def test_the_stream_sends_the_generation_then_each_change_once_and_ends_when_it_is_terminal(
    base_env: dict[str, str], store: Store, topics: Topics, common_settings: CommonSettings
) -> None:
    # What the status topic brings, alone: the feed's recheck (which would read the stored generation, whose
    # progress these messages do not write) is put out of the way; it has its own test below.
    settings = settings_for(ApiSettings, {**base_env, "VIDEOGEN_STATUS_RECHECK_SECONDS": "3600"}, api_port=0)
    async with api_client(settings) as client:
        key = await create_key(store, "acme")
        doc = await generation(client, key, store)
        response = await stream(client, key, doc["_id"])
        assert response.status == 200
        assert response.headers["Content-Type"] == "text/event-stream"
        feed = events(response)
        first = await next_event(feed)
        assert (first.id, first.event, first.data["status"]) == ("1:", "generation", "processing")

        await publish_status(common_settings, {**doc, "progress": 40}, progress=True)
        await publish_status(common_settings, {**doc, "progress": 40}, progress=True)  # a repeat
        await publish_status(common_settings, {**doc, "progress": 20}, progress=True)  # late, older
        await publish_status(common_settings, {**doc, "progress": 70}, progress=True)
        finished = await GenerationRepository(store).transition(doc, Status.COMPLETED, now=doc["created_at"])
        assert finished is not None
        await publish_status(common_settings, {**finished, "progress": 100})

        seen = [event async for event in feed]  # to the end of the stream
    assert [(e.id, e.data["status"], e.data["progress"]) for e in seen] == [
        ("1:40", "processing", 40),
        ("1:70", "processing", 70),
        ("2:100", "completed", 100),
    ]
    assert [step["status"] for step in seen[-1].data["timeline"]] == ["processing", "completed"]


async def test_last_event_id_resumes_with_only_what_is_newer(
    client: Client, store: Store, common_settings: CommonSettings
) -> None:
    key = await create_key(store, "acme")
    doc = await generation(client, key, store)
    queued = await GenerationRepository(store).transition(
        doc, Status.QUEUED, now=doc["created_at"], fields={"queue_reason": "provider"}
    )
    assert queued is not None
    # The client saw version 1 at 40 %, then lost its connection; the generation queued meanwhile.
    response = await stream(client, key, doc["_id"], **{"Last-Event-ID": "1:40"})
    feed = events(response)
    resumed = await next_event(feed)
    assert (resumed.id, resumed.data["status"], resumed.data["queue_reason"]) == ("2:", "queued", "provider")
    assert [s["status"] for s in resumed.data["timeline"]] == ["processing", "queued"]  # nothing missed
    running = await GenerationRepository(store).transition(queued, Status.PROCESSING, now=doc["created_at"])
    assert running is not None
    await publish_status(common_settings, running)
    assert (await next_event(feed)).id == "3:"
    response.close()

    # Caught up already: nothing is sent again until something changes.
    again = await stream(client, key, doc["_id"], **{"Last-Event-ID": "3:"})
    finished = await GenerationRepository(store).transition(running, Status.FAILED, now=doc["created_at"])
    assert finished is not None
    await publish_status(common_settings, finished)
    assert [e.id for e in [event async for event in events(again)]] == ["4:"]


async def test_a_stream_on_another_api_process_hears_the_changes(
    client: Client, store: Store, common_settings: CommonSettings, api_settings: ApiSettings
) -> None:
    key = await create_key(store, "acme")
    doc = await generation(client, key, store)  # created through the first process
    async with api_client(api_settings) as second:
        response = await stream(second, key, doc["_id"])
        feed = events(response)
        assert (await next_event(feed)).data["status"] == "processing"
        finished = await GenerationRepository(store).transition(doc, Status.COMPLETED, now=doc["created_at"])
        assert finished is not None
        await publish_status(common_settings, finished)
        assert (await next_event(feed)).data["status"] == "completed"


async def test_another_accounts_generation_is_a_404(client: Client, store: Store) -> None:
    acme, globex = await create_key(store, "acme"), await create_key(store, "globex")
    doc = await generation(client, acme, store)
    response = await client.get(f"/v1/generations/{doc['_id']}/events", headers=bearer(globex))
    assert response.status == 404
    assert response.content_type == "application/problem+json"


async def test_streams_are_bounded_per_account_and_a_shutdown_ends_them(
    base_env: dict[str, str], store: Store, topics: Topics
) -> None:
    settings = settings_for(ApiSettings, {**base_env, "VIDEOGEN_EVENT_STREAMS_PER_ACCOUNT": "1"}, api_port=0)
    async with api_client(settings) as client:
        acme, globex = await create_key(store, "acme"), await create_key(store, "globex")
        doc = await generation(client, acme, store)
        first = await stream(client, acme, doc["_id"])
        feed = events(first)
        await next_event(feed)
        refused = await client.get(f"/v1/generations/{doc['_id']}/events", headers=bearer(acme))
        assert refused.status == 429
        assert (await refused.json())["type"].endswith("too-many-streams")
        other = await generation(client, globex, store)
        assert (
            await client.get(f"/v1/generations/{other['_id']}/events", headers=bearer(globex))
        ).status == 200

        client.app[state.FEED].release()  # what the server does once it stops accepting
        assert [event async for event in feed] == []  # the stream ends
        assert client.app[state.EVENT_STREAMS].get("acme", 0) == 0


@pytest.mark.parametrize("last", ["garbage", "1:x", ":", "-1:"])
async def test_a_last_event_id_not_ours_counts_as_none(client: Client, store: Store, last: str) -> None:
    key = await create_key(store, "acme")
    doc = await generation(client, key, store)
    response = await stream(client, key, doc["_id"], **{"Last-Event-ID": last})
    assert (await next_event(events(response))).id == "1:"
    response.close()


async def test_a_change_nobody_published_reaches_streams_and_waiting_reads_at_the_next_recheck(
    base_env: dict[str, str], store: Store, topics: Topics
) -> None:
    """The status topic never hears of it (an event lost, or published while this process was not reading):
    the feed's recheck, one query for every generation waited on here, hands it to both kinds of waiter."""
    settings = settings_for(ApiSettings, {**base_env, "VIDEOGEN_STATUS_RECHECK_SECONDS": "0.2"}, api_port=0)
    async with api_client(settings) as client:
        key = await create_key(store, "acme")
        docs = [await generation(client, key, store) for _ in range(3)]
        feeds = [events(await stream(client, key, doc["_id"])) for doc in docs[:2]]
        for feed in feeds:
            assert (await next_event(feed)).data["status"] == "processing"
        headers = {**bearer(key), "Prefer": "wait=60"}  # the longest wait, far beyond a recheck
        waiting = asyncio.ensure_future(client.get(f"/v1/generations/{docs[2]['_id']}", headers=headers))
        while client.app[state.FEED].waiting < 3:
            await asyncio.sleep(0.01)
        loop = asyncio.get_running_loop()
        started = loop.time()
        for doc in docs:  # written, never published
            assert await GenerationRepository(store).transition(doc, Status.COMPLETED, now=doc["created_at"])
        for feed in feeds:
            assert [e.data["status"] for e in [event async for event in feed]] == ["completed"]
        answer = await asyncio.wait_for(waiting, 40)
        assert (await answer.json())["status"] == "completed"
        # Woken by a recheck (every 0.2 s), not by the end of its 60 s wait (which would answer the same).
        assert loop.time() - started < 40
