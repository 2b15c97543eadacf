"""What a request may ask of the video beyond the spec's three fields, at the api on the real store:
GET /v1/providers says what each provider can make; a request asking a provider for something it cannot make,
or with bad metadata, is a 422 naming the field and writes nothing; what is asked comes back on the
generation; metadata filters the listing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from tests.support.api import api_client, bearer
from tests.support.env import settings_for
from videogen_api.schemas.common import ValidationProblem
from videogen_api.schemas.generations import Generation
from videogen_api.schemas.providers import ProviderList
from videogen_api.settings import ApiSettings
from videogen_common.capabilities import CAPABILITIES
from videogen_common.domain import Provider
from videogen_common.store import Store
from videogen_common.topics import Topics

Client = TestClient[web.Request, web.Application]
BODY = {"prompt": "a red fox running through snow", "duration": 5}


@pytest.fixture
async def every(base_env: dict[str, str], store: Store, topics: Topics) -> AsyncIterator[Client]:
    """The api of a deployment that offers every provider."""
    settings = settings_for(ApiSettings, base_env, api_port=0, providers="mock,runway,luma,pika")
    async with api_client(settings) as client:
        yield client


async def _refused(client: Client, key: str, body: dict[str, Any]) -> dict[str, Any]:
    response = await client.post("/v1/generate", json=body, headers=bearer(key))
    assert response.status == 422, await response.text()
    assert response.content_type == "application/problem+json"
    problem: dict[str, Any] = await response.json()
    ValidationProblem.model_validate_json(orjson.dumps(problem))
    return problem


async def test_providers_lists_each_one_whether_it_is_enabled_and_what_it_can_make(
    client: Client, key: str
) -> None:
    response = await client.get("/v1/providers", headers=bearer(key))

    assert response.status == 200
    body = await response.json()
    ProviderList.model_validate_json(orjson.dumps(body))
    assert [p["id"] for p in body["data"]] == [p.value for p in Provider]
    # The test deployment offers the mock only.
    assert {p["id"]: p["enabled"] for p in body["data"]} == {
        "mock": True,
        "runway": False,
        "luma": False,
        "pika": False,
    }
    for entry in body["data"]:
        assert entry["capabilities"] == CAPABILITIES[Provider(entry["id"])].public()
    luma = next(p for p in body["data"] if p["id"] == "luma")["capabilities"]
    assert "4k" in luma["resolutions"] and luma["seed"] is False


async def test_providers_needs_a_key(client: Client) -> None:
    assert (await client.get("/v1/providers")).status == 401


@pytest.mark.parametrize(
    ("provider", "fields", "field", "names"),
    [
        ("runway", {"aspect_ratio": "1:1"}, "aspect_ratio", "16:9, 9:16"),
        ("runway", {"negative_prompt": "fog"}, "negative_prompt", "does not take a negative prompt"),
        ("luma", {"seed": 7}, "seed", "does not take a seed"),
        ("pika", {"resolution": "4k"}, "resolution", "720p, 1080p"),
        ("pika", {"aspect_ratio": "21:9"}, "aspect_ratio", "16:9, 9:16, 1:1, 4:5, 5:4, 3:2, 2:3"),
        ("mock", {"resolution": "4k"}, "resolution", "360p, 480p, 540p, 720p, 1080p"),
    ],
)
async def test_asking_a_provider_for_what_it_cannot_make_is_a_422_naming_what_it_would_accept(
    every: Client, key: str, store: Store, provider: str, fields: dict[str, Any], field: str, names: str
) -> None:
    problem = await _refused(every, key, {**BODY, "provider": provider, **fields})

    assert [(e["field"], e["code"]) for e in problem["errors"]] == [(field, "unsupported_by_provider")]
    assert names in problem["errors"][0]["message"]
    assert await store.generations.count_documents({}) == 0


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"aspect_ratio": "2:1"}, "aspect_ratio"),
        ({"resolution": "8k"}, "resolution"),
        ({"seed": -1}, "seed"),
        ({"seed": 4_294_967_296}, "seed"),
        ({"seed": "7"}, "seed"),
        ({"negative_prompt": "  "}, "negative_prompt"),
        ({"metadata": {f"k{i}": "v" for i in range(17)}}, "metadata"),
        ({"metadata": {"order.id": "1"}}, "metadata.order.id.[key]"),
        ({"metadata": {"order_id": 42}}, "metadata.order_id"),
        ({"metadata": {"order_id": "x" * 501}}, "metadata.order_id"),
        ({"metadata": ["order_id"]}, "metadata"),
        ({"retention_days": 0}, "retention_days"),
        ({"retention_days": 31}, "retention_days"),  # longer than the deployment's 30: only shorter
    ],
)
async def test_bad_options_and_metadata_are_422s_that_write_nothing(
    client: Client, key: str, store: Store, fields: dict[str, Any], field: str
) -> None:
    problem = await _refused(client, key, {**BODY, "provider": "mock", **fields})

    assert [e["field"] for e in problem["errors"]] == [field]
    assert await store.generations.count_documents({}) == 0


async def test_what_is_asked_comes_back_on_the_generation(client: Client, key: str) -> None:
    fields = {
        "aspect_ratio": "9:16",
        "resolution": "720p",
        "seed": 42,
        "negative_prompt": "blurry",
        "metadata": {"order_id": "42", "team": "ads"},
    }
    response = await client.post(
        "/v1/generate", json={**BODY, "provider": "mock", **fields}, headers=bearer(key)
    )
    assert response.status == 202
    created = await response.json()
    Generation.model_validate_json(orjson.dumps(created))
    assert {name: created[name] for name in fields} == fields

    read = await (await client.get(f"/v1/generations/{created['id']}", headers=bearer(key))).json()
    assert {name: read[name] for name in fields} == fields


async def test_a_request_with_only_the_spec_fields_asks_for_nothing_more(client: Client, key: str) -> None:
    response = await client.post("/v1/generate", json={**BODY, "provider": "mock"}, headers=bearer(key))
    created = await response.json()

    assert [created[n] for n in ("aspect_ratio", "resolution", "seed", "negative_prompt")] == [None] * 4
    assert created["metadata"] == {}


async def test_metadata_filters_the_listing(client: Client, key: str) -> None:
    ids = {}
    for order, team in (("1", "ads"), ("2", "ads"), ("3", "web")):
        body = {**BODY, "provider": "mock", "metadata": {"order_id": order, "team": team}}
        ids[order] = (await (await client.post("/v1/generate", json=body, headers=bearer(key))).json())["id"]

    async def listed(query: str) -> list[str]:
        response = await client.get(f"/v1/generations?{query}", headers=bearer(key))
        assert response.status == 200, await response.text()
        return [g["id"] for g in (await response.json())["data"]]

    assert await listed("metadata[team]=ads") == [ids["2"], ids["1"]]
    assert await listed("metadata[team]=ads&metadata[order_id]=1") == [ids["1"]]
    assert await listed("metadata[team]=nobody") == []
    response = await client.get("/v1/generations?metadata[a.b]=1", headers=bearer(key))
    assert response.status == 422
    assert [e["field"] for e in (await response.json())["errors"]] == ["metadata[a.b]"]
