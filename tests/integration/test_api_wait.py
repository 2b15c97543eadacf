"""``Prefer: wait=N`` on GET /v1/generations/{id} and POST /v1/generate, against the real broker and store:
the answer comes as soon as the generation's terminal status event reaches this api process (read from the
status topic, not from a store query held open), or after N seconds with the generation as it is; the answer
says so in ``Preference-Applied``; a foreign id is a 404 at once; a shutdown answers waiting requests at
once."""

from __future__ import annotations

import asyncio

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from tests.support.api import bearer
from tests.support.status_topic import publish_status
from videogen.keys import create_key
from videogen_api import state
from videogen_api.prefer import preferred_wait
from videogen_common.generations import public_view
from videogen_common.settings import CommonSettings
from videogen_common.store import Store
from videogen_common.topics import Topics

Client = TestClient[web.Request, web.Application]
BODY = {"prompt": "a tide pool at dawn", "provider": "mock", "duration": 3}


async def publish_finished(settings: CommonSettings, store: Store, generation_id: str) -> None:
    """A ``completed`` status event for the generation, as the orchestrator would send it, with the store left
    as it is: only the event can tell a waiter."""
    doc = await store.generations.find_one({"_id": generation_id})
    assert doc is not None
    await publish_status(settings, {**doc, "status": "completed", "version": doc["version"] + 1})


async def parked(client: Client) -> None:
    """Until a request waits on the feed (a count in memory, with no event to await: polled)."""
    async with asyncio.timeout(10):
        while client.app[state.FEED].waiting == 0:
            await asyncio.sleep(0.01)


async def test_a_waiting_read_answers_when_the_status_event_arrives(
    client: Client, store: Store, common_settings: CommonSettings, topics: Topics
) -> None:
    key = await create_key(store, "acme")
    created = await (await client.post("/v1/generate", json=BODY, headers=bearer(key))).json()
    await client.app[state.FEED].ready.wait()  # this process reads the status topic from here on

    started = asyncio.get_running_loop().time()
    waiting = asyncio.ensure_future(
        client.get(f"/v1/generations/{created['id']}", headers={**bearer(key), "Prefer": "wait=30"})
    )
    await parked(client)
    await publish_finished(common_settings, store, created["id"])
    response = await waiting
    took = asyncio.get_running_loop().time() - started
    assert response.status == 200
    assert response.headers["Preference-Applied"] == "wait=30"
    body = await response.json()
    assert body["id"] == created["id"] and body["status"] == "completed"
    assert took < 30  # woken by the event (the store still says processing), not by the end of the wait
    stored = await store.generations.find_one({"_id": created["id"]})
    assert stored is not None and public_view(stored)["status"] == "processing"


async def test_a_waiting_create_answers_after_the_wait_with_the_generation_as_it_is(
    client: Client, store: Store
) -> None:
    key = await create_key(store, "acme")
    loop = asyncio.get_running_loop()
    started = loop.time()
    response = await client.post("/v1/generate", json=BODY, headers={**bearer(key), "Prefer": "wait=1"})
    assert response.status == 202
    assert response.headers["Preference-Applied"] == "wait=1"
    assert (await response.json())["status"] == "processing"  # nothing runs it here
    assert loop.time() - started >= 1.0  # it did wait
    assert response.headers["Location"].startswith("/v1/generations/gen_")


async def test_without_the_preference_nothing_waits(client: Client, store: Store) -> None:
    key = await create_key(store, "acme")
    response = await client.post(
        "/v1/generate", json=BODY, headers={**bearer(key), "Prefer": "respond-async"}
    )
    assert response.status == 202 and "Preference-Applied" not in response.headers
    read = await client.get(f"/v1/generations/{(await response.json())['id']}", headers=bearer(key))
    assert read.status == 200 and "Preference-Applied" not in read.headers


async def test_waiting_on_another_accounts_generation_is_a_404_at_once(client: Client, store: Store) -> None:
    acme, globex = await create_key(store, "acme"), await create_key(store, "globex")
    created = await (await client.post("/v1/generate", json=BODY, headers=bearer(acme))).json()
    response = await client.get(
        f"/v1/generations/{created['id']}", headers={**bearer(globex), "Prefer": "wait=60"}
    )
    assert response.status == 404
    assert client.app[state.FEED].waiting == 0


async def test_a_shutdown_answers_waiting_requests_at_once(client: Client, store: Store) -> None:
    key = await create_key(store, "acme")
    created = await (await client.post("/v1/generate", json=BODY, headers=bearer(key))).json()
    waiting = asyncio.ensure_future(
        client.get(f"/v1/generations/{created['id']}", headers={**bearer(key), "Prefer": "wait=60"})
    )
    await parked(client)
    client.app[state.FEED].release()  # what the server does once it stops accepting
    response = await asyncio.wait_for(waiting, 10)
    assert response.status == 200 and (await response.json())["status"] == "processing"


def test_the_preference_is_read_as_rfc_7240_has_it() -> None:
    assert preferred_wait(["wait=5"]) == 5
    assert preferred_wait(["respond-async, wait=10"]) == 10
    assert preferred_wait(["Wait = 7 ; foo=bar"]) == 7
    assert preferred_wait(['wait="3"']) == 3
    assert preferred_wait(["wait=600"]) == 60  # at most a minute
    assert preferred_wait(["wait=0"]) == 0
    assert preferred_wait(["wait=2", "wait=9"]) == 2  # the first one
    for ignored in (["wait=soon"], ["wait=-1"], ["respond-async"], [], ["wait"]):
        assert preferred_wait(ignored) is None


async def test_a_client_deadline_is_stored_from_the_body_or_cancel_after_the_sooner_winning(
    client: Client, store: Store
) -> None:
    key = await create_key(store, "acme")

    async def deadline_of(body: dict[str, object], **headers: str) -> float:
        response = await client.post("/v1/generate", json=body, headers={**bearer(key), **headers})
        assert response.status == 202, await response.text()
        doc = await store.generations.find_one({"_id": (await response.json())["id"]})
        assert doc is not None
        return float((doc["deadline_at"] - doc["created_at"]).total_seconds())

    assert await deadline_of({**BODY, "deadline_seconds": 30}) == 30
    assert await deadline_of(BODY, **{"Cancel-After": "5m"}) == 300
    assert await deadline_of({**BODY, "deadline_seconds": 600}, **{"Cancel-After": "90s"}) == 90
    assert await deadline_of({**BODY, "deadline_seconds": 60}, **{"Cancel-After": "1h"}) == 60


@pytest.mark.parametrize(
    ("body", "headers", "field"),
    [
        ({**BODY, "deadline_seconds": 0}, {}, "deadline_seconds"),
        ({**BODY, "deadline_seconds": 86_401}, {}, "deadline_seconds"),
        ({**BODY, "deadline_seconds": 1.5}, {}, "deadline_seconds"),
        (BODY, {"Cancel-After": "soon"}, "Cancel-After"),
        (BODY, {"Cancel-After": "0s"}, "Cancel-After"),
        (BODY, {"Cancel-After": "2d"}, "Cancel-After"),
        (BODY, {"Cancel-After": "25h"}, "Cancel-After"),
    ],
)
async def test_a_bad_deadline_is_a_422_and_writes_nothing(
    client: Client, store: Store, body: dict[str, object], headers: dict[str, str], field: str
) -> None:
    key = await create_key(store, "acme")
    response = await client.post("/v1/generate", json=body, headers={**bearer(key), **headers})
    assert response.status == 422
    assert [e["field"] for e in (await response.json())["errors"]] == [field]
    assert await store.generations.count_documents({}) == 0
