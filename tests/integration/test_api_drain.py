"""The api while draining (shutting down, still serving): not ready, still alive, still answering every
request, and asking each client to close its connection so it reconnects elsewhere."""

from __future__ import annotations

from aiohttp import web
from aiohttp.test_utils import TestClient

from tests.support.api import bearer
from videogen_api import state

Client = TestClient[web.Request, web.Application]
VALID = {"prompt": "a red fox running through snow", "provider": "mock", "duration": 5}


async def test_readiness_turns_503_draining_while_liveness_and_requests_carry_on(
    client: Client, key: str
) -> None:
    ready = await client.get("/readyz")
    assert ready.status == 200
    assert ready.headers.get("Connection", "").lower() != "close"

    client.app[state.DRAIN].start()

    ready = await client.get("/readyz")
    assert ready.status == 503 and (await ready.json())["status"] == "draining"
    alive = await client.get("/healthz")
    assert alive.status == 200
    created = await client.post("/v1/generate", json=VALID, headers=bearer(key))
    assert created.status == 202
    read = await client.get(f"/v1/generations/{(await created.json())['id']}", headers=bearer(key))
    assert read.status == 200
    for response in (ready, alive, created, read):
        assert response.headers["Connection"].lower() == "close"


async def test_problem_answers_while_draining_also_close_the_connection(client: Client) -> None:
    client.app[state.DRAIN].start()
    response = await client.get("/v1/generations/gen_nope", headers=bearer("not-a-key"))
    assert response.status == 401
    assert response.headers["Connection"].lower() == "close"
