"""POST /v1/generate refuses a provider this deployment does not enable (VIDEOGEN_PROVIDERS) with a clear 422,
and writes nothing; an enabled one is accepted."""

from __future__ import annotations

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from tests.support.api import api_client, bearer
from tests.support.env import settings_for
from videogen_api.schemas.common import ValidationProblem
from videogen_api.settings import ApiSettings
from videogen_common.store import Store
from videogen_common.topics import Topics

Client = TestClient[web.Request, web.Application]
BODY = {"prompt": "a red fox running through snow", "duration": 5}


@pytest.mark.parametrize("provider", ["runway", "luma", "pika"])
async def test_a_provider_that_is_not_enabled_is_a_422_naming_the_field(
    client: Client, key: str, store: Store, provider: str
) -> None:
    response = await client.post("/v1/generate", json={**BODY, "provider": provider}, headers=bearer(key))

    assert response.status == 422
    assert response.content_type == "application/problem+json"
    problem = await response.json()
    ValidationProblem.model_validate(problem)  # what the OpenAPI document promises for a 422
    assert problem["type"] == "urn:videogen:problem:provider-unavailable"
    assert problem["status"] == 422
    assert f"provider {provider!r} is not enabled" in problem["detail"]
    assert "enabled: mock" in problem["detail"]
    assert [(e["field"], e["code"]) for e in problem["errors"]] == [("provider", "provider_unavailable")]
    assert await store.generations.count_documents({}) == 0


async def test_an_unknown_provider_is_still_a_validation_error(client: Client, key: str) -> None:
    response = await client.post("/v1/generate", json={**BODY, "provider": "sora"}, headers=bearer(key))

    assert response.status == 422
    problem = await response.json()
    assert problem["type"] == "urn:videogen:problem:validation-error"
    assert [e["field"] for e in problem["errors"]] == ["provider"]


async def test_an_enabled_provider_is_accepted(
    base_env: dict[str, str], store: Store, topics: Topics, key: str
) -> None:
    settings = settings_for(ApiSettings, base_env, api_port=0, providers="mock,runway")
    async with api_client(settings) as client:
        response = await client.post("/v1/generate", json={**BODY, "provider": "runway"}, headers=bearer(key))
        accepted = await response.json()
        refused = await client.post("/v1/generate", json={**BODY, "provider": "luma"}, headers=bearer(key))
        problem = await refused.json()

    assert response.status == 202
    assert accepted["provider"] == "runway"
    assert refused.status == 422
    assert "enabled: mock, runway" in problem["detail"]
    assert await store.generations.count_documents({}) == 1
