"""POST /v1/generate, GET /v1/generations/{id}, GET /v1/generations against the real store and broker."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from tests.support.api import bearer
from tests.support.public_fields import PUBLIC_FIELDS
from tests.support.topic_reads import Record, topic_records
from videogen_api.settings import ApiSettings
from videogen_common.events import REQUESTED, Envelope
from videogen_common.store import Store
from videogen_common.topics import Topics

Client = TestClient[web.Request, web.Application]
VALID = {"prompt": "a red fox running through snow", "provider": "mock", "duration": 5}


async def create(client: Client, key: str, **fields: Any) -> dict[str, Any]:
    response = await client.post("/v1/generate", json={**VALID, **fields}, headers=bearer(key))
    assert response.status == 202, await response.text()
    body: dict[str, Any] = await response.json()
    return body


async def test_create_answers_202_with_the_generation_and_location(
    client: Client, key: str, store: Store
) -> None:
    response = await client.post("/v1/generate", json=VALID, headers=bearer(key))
    assert response.status == 202
    body = await response.json()
    assert response.headers["Location"] == f"/v1/generations/{body['id']}"
    assert set(body) == PUBLIC_FIELDS
    assert body["status"] == "processing"
    assert (body["progress"], body["queue_reason"], body["queue_position"]) == (None, None, None)
    assert body["priority"] == "normal"
    assert body["timeline"] == [{"status": "processing", "at": body["created_at"]}]
    assert (body["prompt"], body["provider"], body["duration"]) == (VALID["prompt"], "mock", 5)
    assert body["video_url"] is None and body["thumbnail_url"] is None and body["error"] is None
    assert body["created_at"].endswith("Z")
    stored = await store.generations.find_one({"_id": body["id"]})
    assert stored is not None and stored["account_id"] == "acme" and stored["status"] == "processing"


async def test_create_publishes_the_request_to_kafka_keyed_by_generation(
    client: Client, key: str, topics: Topics, api_settings: ApiSettings
) -> None:
    body = await create(client, key, prompt="kafka bound")

    def about(records: list[Record]) -> list[Record]:
        return [r for r in records if Envelope.from_json(r.value or b"").generation_id == body["id"]]

    # Sent in the background after the answer: read until it is there.
    records = await topic_records(
        api_settings.kafka_bootstrap, topics.requested, lambda found: bool(about(found))
    )
    [record] = about(records)
    envelope = Envelope.from_json(record.value or b"")
    assert record.key == body["id"].encode()
    assert envelope.type == REQUESTED and envelope.account_id == "acme"
    assert envelope.generation == body
    assert envelope.trace_id and ("x-request-id", envelope.trace_id.encode()) in list(record.headers)


async def test_get_returns_own_generation(client: Client, key: str) -> None:
    created = await create(client, key)
    response = await client.get(f"/v1/generations/{created['id']}", headers=bearer(key))
    assert response.status == 200
    assert await response.json() == created


async def test_another_accounts_generation_is_indistinguishable_from_unknown(
    client: Client, key: str, other_key: str
) -> None:
    created = await create(client, key)
    foreign = await client.get(f"/v1/generations/{created['id']}", headers=bearer(other_key))
    unknown = await client.get("/v1/generations/gen_doesnotexist", headers=bearer(other_key))
    assert foreign.status == unknown.status == 404
    assert foreign.content_type == unknown.content_type == "application/problem+json"
    foreign_body, unknown_body = await foreign.json(), await unknown.json()
    assert foreign_body["type"] == unknown_body["type"] == "urn:videogen:problem:not-found"
    assert created["id"] not in str(
        await (await client.get("/v1/generations", headers=bearer(other_key))).json()
    )


async def test_list_is_newest_first_and_pages_without_skips_or_repeats(
    client: Client, key: str, other_key: str
) -> None:
    made = [await create(client, key, prompt=f"clip {i}") for i in range(7)]
    await create(client, other_key, prompt="not yours")
    seen: list[str] = []
    cursor: str | None = None
    pages = 0
    while True:
        query = {"limit": "3", **({"cursor": cursor} if cursor else {})}
        response = await client.get("/v1/generations", params=query, headers=bearer(key))
        assert response.status == 200
        page = await response.json()
        assert set(page) == {"data", "next_cursor"}
        seen += [g["id"] for g in page["data"]]
        pages += 1
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert pages == 3
    expected = sorted(made, key=lambda g: (g["created_at"], g["id"]), reverse=True)
    assert seen == [g["id"] for g in expected]


@pytest.mark.parametrize("limit", ["0", "101", "ten"])
async def test_list_rejects_bad_limit(client: Client, key: str, limit: str) -> None:
    response = await client.get("/v1/generations", params={"limit": limit}, headers=bearer(key))
    assert response.status == 422
    assert (await response.json())["errors"][0]["field"] == "limit"


async def test_list_rejects_a_forged_cursor(client: Client, key: str) -> None:
    response = await client.get("/v1/generations", params={"cursor": "not-a-cursor"}, headers=bearer(key))
    assert response.status == 422
    assert response.content_type == "application/problem+json"


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        ({**VALID, "duration": 2}, 422, "duration"),
        ({**VALID, "duration": 11}, 422, "duration"),
        ({**VALID, "duration": 4.5}, 422, "duration"),
        ({**VALID, "duration": "5"}, 422, "duration"),
        ({**VALID, "provider": "sora"}, 422, "provider"),
        ({**VALID, "prompt": ""}, 422, "prompt"),
        ({**VALID, "prompt": "   "}, 422, "prompt"),
        ({"provider": "mock", "duration": 5}, 422, "prompt"),
        ({**VALID, "prompt": "x" * 2001}, 422, "prompt"),
        ([1, 2], 422, "body"),
    ],
)
async def test_invalid_bodies_get_problem_details_and_write_nothing(
    client: Client, key: str, store: Store, body: Any, status: int, field: str
) -> None:
    response = await client.post(
        "/v1/generate", data=orjson.dumps(body), headers={**bearer(key), "Content-Type": "application/json"}
    )
    assert response.status == status
    assert response.content_type == "application/problem+json"
    problem = await response.json()
    assert problem["status"] == status and problem["type"] == "urn:videogen:problem:validation-error"
    assert field in [e["field"] for e in problem["errors"]]
    assert await store.generations.count_documents({}) == 0


async def test_malformed_json_is_400(client: Client, key: str, store: Store) -> None:
    response = await client.post(
        "/v1/generate", data=b'{"prompt": "x", ', headers={**bearer(key), "Content-Type": "application/json"}
    )
    assert response.status == 400
    assert (await response.json())["type"] == "urn:videogen:problem:malformed-json"
    assert await store.generations.count_documents({}) == 0


async def test_wrong_content_type_is_415(client: Client, key: str, store: Store) -> None:
    response = await client.post(
        "/v1/generate", data=orjson.dumps(VALID), headers={**bearer(key), "Content-Type": "text/plain"}
    )
    assert response.status == 415
    assert response.content_type == "application/problem+json"
    assert await store.generations.count_documents({}) == 0


async def test_body_over_the_limit_is_413(client: Client, key: str, api_settings: ApiSettings) -> None:
    huge = orjson.dumps({**VALID, "prompt": "x" * (api_settings.max_body_bytes + 10)})
    response = await client.post(
        "/v1/generate", data=huge, headers={**bearer(key), "Content-Type": "application/json"}
    )
    assert response.status == 413
    assert response.content_type == "application/problem+json"


@pytest.mark.parametrize("header", [None, "Bearer", "Basic dXNlcjpwYXNz", "Bearer vg_not_a_real_key"])
async def test_missing_or_wrong_key_is_401(client: Client, header: str | None) -> None:
    headers = {"Authorization": header} if header else {}
    response = await client.get("/v1/generations", headers=headers)
    assert response.status == 401
    assert response.content_type == "application/problem+json"
    assert response.headers["WWW-Authenticate"].startswith("Bearer")


async def test_unknown_route_and_wrong_method_are_problems(client: Client, key: str) -> None:
    missing = await client.get("/v1/nothing-here", headers=bearer(key))
    assert missing.status == 404 and missing.content_type == "application/problem+json"
    wrong = await client.delete("/v1/generate", headers=bearer(key))
    assert wrong.status == 405 and wrong.content_type == "application/problem+json"
    assert "POST" in wrong.headers["Allow"]


async def test_request_id_is_echoed_or_assigned(client: Client, key: str) -> None:
    echoed = await client.get("/v1/generations", headers={**bearer(key), "X-Request-Id": "client-abc-1"})
    assert echoed.headers["X-Request-Id"] == "client-abc-1"
    assigned = await client.get("/v1/generations", headers={"X-Request-Id": "bad id with spaces"})
    assert assigned.status == 401 and assigned.headers["X-Request-Id"].startswith("req_")
