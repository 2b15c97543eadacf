"""POST /v1/webhooks and GET /v1/webhooks: the secret is shown once, never listed; tenancy; validation."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from tests.support.api import api_client, bearer
from videogen_api.settings import ApiSettings
from videogen_common.store import Store

Client = TestClient[web.Request, web.Application]
HOOK = {"url": "https://example.test/hooks/videogen", "events": ["video.completed", "video.failed"]}


async def test_create_returns_201_with_a_secret_shown_only_once(
    client: Client, key: str, store: Store
) -> None:
    response = await client.post("/v1/webhooks", json=HOOK, headers=bearer(key))
    assert response.status == 201
    body: dict[str, Any] = await response.json()
    assert set(body) == {
        "id",
        "url",
        "events",
        "secret",
        "active",
        "disabled_reason",
        "created_at",
        "updated_at",
    }
    assert body["disabled_reason"] is None and body["updated_at"] == body["created_at"]
    assert (body["url"], body["events"], body["active"]) == (HOOK["url"], HOOK["events"], True)
    assert response.headers["Location"] == f"/v1/webhooks/{body['id']}"
    assert body["secret"].startswith("whsec_")
    assert len(base64.b64decode(body["secret"].removeprefix("whsec_"))) == 32

    listed = await (await client.get("/v1/webhooks", headers=bearer(key))).json()
    assert listed == {"data": [{k: v for k, v in body.items() if k != "secret"}]}
    assert body["secret"] not in str(listed)
    stored = await store.webhooks.find_one({"_id": body["id"]})
    assert stored is not None and stored["account_id"] == "acme"


async def test_each_account_lists_only_its_own_webhooks(client: Client, key: str, other_key: str) -> None:
    mine = await (await client.post("/v1/webhooks", json=HOOK, headers=bearer(key))).json()
    theirs = await (await client.post("/v1/webhooks", json=HOOK, headers=bearer(other_key))).json()
    assert [
        w["id"] for w in (await (await client.get("/v1/webhooks", headers=bearer(key))).json())["data"]
    ] == [mine["id"]]
    other = await (await client.get("/v1/webhooks", headers=bearer(other_key))).json()
    assert [w["id"] for w in other["data"]] == [theirs["id"]]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({**HOOK, "url": "ftp://example.test/x"}, "url"),
        ({**HOOK, "url": "/relative/path"}, "url"),
        ({**HOOK, "url": "https://user:pw@example.test/x"}, "url"),
        ({**HOOK, "url": "https://example.test/" + "x" * 2048}, "url"),
        ({**HOOK, "events": []}, "events"),
        ({**HOOK, "events": ["video.started"]}, "events.0"),
        ({**HOOK, "events": ["video.failed", "video.failed"]}, "events"),
        ({"url": HOOK["url"]}, "events"),
    ],
)
async def test_invalid_webhooks_are_422_and_store_nothing(
    client: Client, key: str, store: Store, body: dict[str, Any], field: str
) -> None:
    response = await client.post("/v1/webhooks", json=body, headers=bearer(key))
    assert response.status == 422
    assert response.content_type == "application/problem+json"
    assert field in [e["field"] for e in (await response.json())["errors"]]
    assert await store.webhooks.count_documents({}) == 0


async def test_plain_http_is_refused_unless_the_deployment_allows_it(
    api_settings: ApiSettings, store: Store, key: str
) -> None:
    strict = api_settings.model_copy(update={"webhook_allow_http": False})
    async with api_client(strict) as client:
        response = await client.post(
            "/v1/webhooks", json={**HOOK, "url": "http://example.test/hook"}, headers=bearer(key)
        )
        assert response.status == 422
        assert (await response.json())["errors"][0]["code"] == "https_required"
        allowed = await client.post("/v1/webhooks", json=HOOK, headers=bearer(key))
        assert allowed.status == 201


async def test_an_endpoint_can_subscribe_to_webhook_disabled_notices(client: Client, key: str) -> None:
    response = await client.post(
        "/v1/webhooks", json={**HOOK, "events": ["webhook.disabled"]}, headers=bearer(key)
    )
    assert response.status == 201
    assert (await response.json())["events"] == ["webhook.disabled"]
