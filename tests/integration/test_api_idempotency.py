"""Idempotency-Key on POST /v1/generate against the real store and broker: one generation per key and account
however many requests race, the saved 202 replayed, a different body under a used key refused."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient
from multidict import CIMultiDict

from tests.support.api import bearer
from tests.support.env import settings_for
from tests.support.topic_reads import topic_records
from videogen_api import state
from videogen_api.settings import ApiSettings
from videogen_common.domain import Status
from videogen_common.events import Envelope
from videogen_common.repositories.generations import GenerationRepository
from videogen_common.store import Store
from videogen_common.topics import Topics

Client = TestClient[web.Request, web.Application]
VALID = {"prompt": "a red fox running through snow", "provider": "mock", "duration": 5}
PROBLEM = "application/problem+json"


@pytest.fixture
def api_settings(base_env: dict[str, str]) -> ApiSettings:
    """A deployment that offers every provider (VIDEOGEN_PROVIDERS): generations of each are made here."""
    return settings_for(ApiSettings, base_env, api_port=0, providers="mock,runway,luma,pika")


def keyed(key: str, idem: str) -> dict[str, str]:
    return {**bearer(key), "Idempotency-Key": idem}


async def post(client: Client, headers: dict[str, str], body: Any = None) -> tuple[int, Any, Any]:
    response = await client.post("/v1/generate", json=VALID if body is None else body, headers=headers)
    return response.status, response.headers, await response.json()


async def requested_ids(api_settings: ApiSettings, topics: Topics) -> list[str]:
    """The generation id of every message on the requested topic so far (read up to the end offsets)."""
    records = await topic_records(api_settings.kafka_bootstrap, topics.requested)
    return [Envelope.from_json(r.value or b"").generation_id for r in records]


async def test_a_repeated_request_replays_the_saved_202_and_creates_nothing_more(
    client: Client, key: str, store: Store
) -> None:
    first_status, first_headers, first = await post(client, keyed(key, "order-1"))
    again_status, again_headers, again = await post(client, keyed(key, "order-1"))

    assert first_status == again_status == 202
    assert again == first
    assert again_headers["Location"] == first_headers["Location"] == f"/v1/generations/{first['id']}"
    assert again_headers["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first_headers
    assert again_headers["Content-Type"].startswith("application/json")
    docs = await store.generations.find({}).to_list(None)
    assert [d["_id"] for d in docs] == [first["id"]]
    assert docs[0]["idem"] == "acme\norder-1"
    assert len(docs[0]["idem_hash"]) == 64
    assert docs[0]["idem_response"] == first


async def test_the_same_fields_in_another_order_and_spacing_are_the_same_request(
    client: Client, key: str
) -> None:
    _, _, first = await post(client, keyed(key, "k"))
    raw = b'{ "duration" : 5,\n "provider": "mock",  "prompt": "a red fox running through snow" }'
    response = await client.post(
        "/v1/generate", data=raw, headers={**keyed(key, "k"), "Content-Type": "application/json"}
    )
    assert response.status == 202
    assert response.headers["Idempotent-Replayed"] == "true"
    assert await response.json() == first


async def test_concurrent_identical_requests_create_exactly_one_generation_and_one_request_message(
    client: Client, key: str, store: Store, api_settings: ApiSettings, topics: Topics
) -> None:
    results = await asyncio.gather(*(post(client, keyed(key, "race")) for _ in range(10)))

    assert [status for status, _, _ in results] == [202] * 10
    ids = {body["id"] for _, _, body in results}
    assert len(ids) == 1
    (generation_id,) = ids
    assert all(body == results[0][2] for _, _, body in results)
    assert all(headers["Location"] == f"/v1/generations/{generation_id}" for _, headers, _ in results)
    replayed = [headers.get("Idempotent-Replayed") for _, headers, _ in results]
    assert replayed.count(None) == 1 and replayed.count("true") == 9
    assert await store.generations.count_documents({}) == 1
    # Only the request that created it asked the orchestrator to run it. Every handler had handed its message
    # over (or not) before it answered, and it is sent in the background: once that is done, the topic is
    # complete.
    await client.app[state.PUBLISHER].flush()
    assert await requested_ids(api_settings, topics) == [generation_id]


async def test_a_replay_after_the_generation_finished_returns_the_creation_response(
    client: Client, key: str, store: Store
) -> None:
    _, _, created = await post(client, keyed(key, "finish-me"))
    doc = await store.generations.find_one({"_id": created["id"]})
    assert doc is not None
    completed = await GenerationRepository(store).transition(
        doc, Status.COMPLETED, now=doc["updated_at"], fields={"video_url": "https://v/x"}
    )
    assert completed is not None

    status, headers, replayed = await post(client, keyed(key, "finish-me"))

    assert status == 202 and headers["Idempotent-Replayed"] == "true"
    assert replayed == created
    assert replayed["status"] == "processing" and replayed["video_url"] is None
    current = await (await client.get(f"/v1/generations/{created['id']}", headers=bearer(key))).json()
    assert current["status"] == "completed"


@pytest.mark.parametrize(
    "other", [{**VALID, "prompt": "something else"}, {**VALID, "duration": 6}, {**VALID, "provider": "luma"}]
)
async def test_the_same_key_with_a_different_body_is_422_and_writes_nothing(
    client: Client, key: str, store: Store, other: dict[str, Any]
) -> None:
    _, _, created = await post(client, keyed(key, "reused"))

    response = await client.post("/v1/generate", json=other, headers=keyed(key, "reused"))

    assert response.status == 422
    assert response.content_type == PROBLEM
    problem = await response.json()
    assert problem["type"] == "urn:videogen:problem:idempotency-key-reused"
    assert problem["status"] == 422
    assert "Idempotent-Replayed" not in response.headers
    assert [d["_id"] for d in await store.generations.find({}).to_list(None)] == [created["id"]]


async def test_the_same_key_in_two_accounts_makes_two_independent_generations(
    client: Client, key: str, other_key: str, store: Store
) -> None:
    _, acme_headers, acme = await post(client, keyed(key, "shared-key"))
    _, globex_headers, globex = await post(
        client,
        keyed(
            other_key,
            "shared-key",
        ),
        {**VALID, "duration": 7},
    )

    assert acme["id"] != globex["id"]
    assert "Idempotent-Replayed" not in acme_headers and "Idempotent-Replayed" not in globex_headers
    assert {d["account_id"]: d["idem"] for d in await store.generations.find({}).to_list(None)} == {
        "acme": "acme\nshared-key",
        "globex": "globex\nshared-key",
    }
    # Each account's replay is its own.
    _, _, acme_again = await post(client, keyed(key, "shared-key"))
    assert acme_again == acme


async def test_without_a_key_every_request_creates_a_generation_and_stores_no_key(
    client: Client, key: str, store: Store
) -> None:
    first = await post(client, bearer(key))
    second = await post(client, bearer(key))

    assert first[0] == second[0] == 202
    assert first[2]["id"] != second[2]["id"]
    for doc in await store.generations.find({}).to_list(None):
        assert not {"idem", "idem_hash", "idem_response"} & set(doc)


async def test_a_key_of_255_printable_characters_is_accepted(client: Client, key: str) -> None:
    longest = ("a-Z_0 9.~!" * 26)[:255]
    status, _, _ = await post(client, keyed(key, longest))
    again_status, again_headers, _ = await post(client, keyed(key, longest))
    assert status == again_status == 202
    assert again_headers["Idempotent-Replayed"] == "true"


@pytest.mark.parametrize(
    "idem", ["", "x" * 256, "clé", "tab\there"], ids=["empty", "256", "non-ascii", "tab"]
)
async def test_a_bad_key_is_422_and_writes_nothing(client: Client, key: str, store: Store, idem: str) -> None:
    response = await client.post("/v1/generate", json=VALID, headers=keyed(key, idem))
    assert response.status == 422
    assert response.content_type == PROBLEM
    problem = await response.json()
    assert problem["type"] == "urn:videogen:problem:validation-error"
    assert [e["field"] for e in problem["errors"]] == ["Idempotency-Key"]
    assert await store.generations.count_documents({}) == 0


async def test_two_key_headers_are_422(client: Client, key: str, store: Store) -> None:
    headers = CIMultiDict([*bearer(key).items(), ("Idempotency-Key", "a"), ("Idempotency-Key", "b")])
    response = await client.post("/v1/generate", json=VALID, headers=headers)
    assert response.status == 422
    assert await store.generations.count_documents({}) == 0


async def test_an_invalid_body_does_not_use_up_the_key(client: Client, key: str, store: Store) -> None:
    bad = await client.post(
        "/v1/generate",
        data=orjson.dumps({**VALID, "duration": 99}),
        headers={**keyed(key, "retry-me"), "Content-Type": "application/json"},
    )
    assert bad.status == 422
    assert await store.generations.count_documents({}) == 0

    status, headers, _ = await post(client, keyed(key, "retry-me"))
    assert status == 202 and "Idempotent-Replayed" not in headers
