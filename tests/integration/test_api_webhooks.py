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


# Hosts deliveries would refuse to connect to, in several spellings: the cloud metadata address, private and
# loopback ranges, IPv6 forms reaching IPv4 ones, legacy IPv4 spellings getaddrinfo takes, and localhost.
REFUSED_HOSTS = [
    "169.254.169.254",
    "10.1.2.3",
    "192.168.0.1",
    "127.0.0.1",
    "2130706433",  # 127.0.0.1
    "0x7f.1",  # 127.0.0.1
    "0251.0376.0251.0376",  # 169.254.169.254
    "[::1]",
    "[::ffff:169.254.169.254]",
    "[fd00::1]",
    "localhost",
    "metadata.localhost",
]


@pytest.fixture
def no_allowed_ranges(api_settings: ApiSettings) -> ApiSettings:
    """A deployment that opens no range to deliveries (production's default)."""
    return api_settings.model_copy(update={"webhook_allow_cidrs": ""})


@pytest.mark.parametrize("host", REFUSED_HOSTS)
async def test_a_url_on_an_address_deliveries_refuse_is_422_at_creation_and_nothing_is_stored(
    no_allowed_ranges: ApiSettings, store: Store, key: str, host: str
) -> None:
    async with api_client(no_allowed_ranges) as client:
        response = await client.post(
            "/v1/webhooks", json={**HOOK, "url": f"https://{host}/x"}, headers=bearer(key)
        )
        assert response.status == 422, await response.text()
        problem = await response.json()
    assert [(e["field"], e["code"]) for e in problem["errors"]] == [("url", "destination_not_allowed")]
    assert await store.webhooks.count_documents({}) == 0
    assert await store.audit_events.count_documents({"type": "webhook.created"}) == 0


async def test_a_url_on_an_address_deliveries_refuse_is_422_on_update_and_nothing_changes(
    no_allowed_ranges: ApiSettings, store: Store, key: str
) -> None:
    async with api_client(no_allowed_ranges) as client:
        created = await (await client.post("/v1/webhooks", json=HOOK, headers=bearer(key))).json()
        before = await store.webhooks.find_one({"_id": created["id"]})
        for host in REFUSED_HOSTS:
            response = await client.patch(
                f"/v1/webhooks/{created['id']}", json={"url": f"http://{host}:8080/x"}, headers=bearer(key)
            )
            assert response.status == 422, host
            [error] = (await response.json())["errors"]
            assert (error["field"], error["code"]) == ("url", "destination_not_allowed")
            assert error["message"].startswith("the URL points at an address deliveries are never sent to (")
    assert await store.webhooks.find_one({"_id": created["id"]}) == before
    assert await store.audit_events.count_documents({"type": "webhook.updated"}) == 0


async def test_the_ranges_the_deployment_opens_to_deliveries_may_be_registered(
    api_settings: ApiSettings, store: Store, key: str
) -> None:
    """The tests' (and the dev stack's) receivers listen on loopback, which VIDEOGEN_WEBHOOK_ALLOW_CIDRS opens
    for the notifier: the api accepts URLs there too, and still refuses the rest."""
    assert api_settings.webhook_allow_cidrs == "127.0.0.0/8"
    async with api_client(api_settings) as client:
        for url in ("http://127.0.0.1:9000/hook", "http://localhost:9000/hook"):
            response = await client.post("/v1/webhooks", json={**HOOK, "url": url}, headers=bearer(key))
            assert response.status == 201, url
        metadata = {**HOOK, "url": "http://169.254.169.254/x"}
        assert (await client.post("/v1/webhooks", json=metadata, headers=bearer(key))).status == 422
