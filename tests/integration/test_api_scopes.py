"""Scopes, as a table over every route the api declares (walked from its router, like the OpenAPI document):
a key holding one scope may call exactly the routes whose scope it holds (itself, or the :read its :write
holds), and every other authenticated route answers 403 insufficient-scope naming the scope it needs, with
nothing written anywhere. A refused request carries a valid body aimed at a real resource, so any side
effect would show. A new route without a scope fails before it can be served."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from tests.support.api import api_client, bearer
from tests.support.env import settings_for
from tests.support.fakes import ManualClock
from tests.support.images import solid_image
from videogen_api import openapi
from videogen_api.declare import Endpoint
from videogen_api.settings import ApiSettings
from videogen_common.scopes import Scope, granted
from videogen_common.store import Store

Client = TestClient[web.Request, web.Application]
Doc = dict[str, Any]

# The scope each operation needs: a new route fails test_every_route_needs_the_scope_this_table_names until it
# is here (a route declared without any scope cannot even be served).
SCOPE_OF: dict[str, Scope] = {
    "createGeneration": Scope.GENERATIONS_WRITE,
    "getGeneration": Scope.GENERATIONS_READ,
    "listGenerations": Scope.GENERATIONS_READ,
    "cancelGeneration": Scope.GENERATIONS_WRITE,
    "deleteGeneration": Scope.GENERATIONS_WRITE,
    "streamGenerationEvents": Scope.GENERATIONS_READ,
    "listProviders": Scope.GENERATIONS_READ,
    "listModels": Scope.GENERATIONS_READ,
    "createUpload": Scope.GENERATIONS_WRITE,
    "getUpload": Scope.GENERATIONS_READ,
    "deleteUpload": Scope.GENERATIONS_WRITE,
    "createWebhook": Scope.WEBHOOKS_WRITE,
    "listWebhooks": Scope.WEBHOOKS_READ,
    "getWebhook": Scope.WEBHOOKS_READ,
    "updateWebhook": Scope.WEBHOOKS_WRITE,
    "deleteWebhook": Scope.WEBHOOKS_WRITE,
    "rotateWebhookSecret": Scope.WEBHOOKS_WRITE,
    "sendTestEvent": Scope.WEBHOOKS_WRITE,
    "listDeliveries": Scope.WEBHOOKS_READ,
    "recoverDeliveries": Scope.WEBHOOKS_WRITE,
    "getDelivery": Scope.WEBHOOKS_READ,
    "retryDelivery": Scope.WEBHOOKS_WRITE,
    "listEvents": Scope.EVENTS_READ,
    "getEvent": Scope.EVENTS_READ,
    "getUsage": Scope.USAGE_READ,
    "getBudgets": Scope.USAGE_READ,
    "setBudgets": Scope.BUDGETS_WRITE,
    "listAuditEvents": Scope.AUDIT_READ,
    "createApiKey": Scope.KEYS_WRITE,
    "listApiKeys": Scope.KEYS_READ,
    "getApiKey": Scope.KEYS_READ,
    "updateApiKey": Scope.KEYS_WRITE,
    "revokeApiKey": Scope.KEYS_WRITE,
    "createBatch": Scope.GENERATIONS_WRITE,
    "getBatch": Scope.GENERATIONS_READ,
    "listBatches": Scope.GENERATIONS_READ,
    "listBatchGenerations": Scope.GENERATIONS_READ,
    "getBatchResults": Scope.GENERATIONS_READ,
    "cancelBatch": Scope.GENERATIONS_WRITE,
}

# A request that would change something, for every operation that is not a read: a route without one here
# fails test_every_write_route_has_a_request_here.
WRITES: dict[str, Doc] = {
    "createGeneration": {"json": {"prompt": "a kite", "provider": "mock", "duration": 3}},
    "cancelGeneration": {},
    "deleteGeneration": {},
    "createUpload": {"data": solid_image((9, 9, 9)), "headers": {"Content-Type": "image/png"}},
    "deleteUpload": {},
    "createWebhook": {"json": {"url": "https://example.test/other", "events": ["video.failed"]}},
    "updateWebhook": {"json": {"events": ["video.completed"]}},
    "deleteWebhook": {},
    "rotateWebhookSecret": {},
    "sendTestEvent": {},
    "recoverDeliveries": {"json": {"since": "2026-11-21T00:00:00Z"}},
    "retryDelivery": {},
    "createApiKey": {"json": {"name": "made", "scopes": ["keys:read"]}},
    "updateApiKey": {"json": {"name": "renamed"}},
    "revokeApiKey": {},
    "setBudgets": {"json": {"daily_video_seconds": 1000}},
    "createBatch": {"json": {"items": [{"prompt": "a kite", "provider": "mock", "duration": 3}]}},
    "cancelBatch": {},
}


@pytest.fixture
async def client(base_env: dict[str, str], store: Store) -> AsyncIterator[Client]:
    # Without rate limits nothing but the request's own effect is written.
    settings = settings_for(ApiSettings, base_env, api_port=0, rate_limit_enabled=False)
    async with api_client(settings, ManualClock()) as client:
        yield client


async def ok(client: Client, method: str, path: str, key: str, **kw: Any) -> Doc:
    response = await client.request(method, path, headers=bearer(key), **kw)
    assert response.status < 300, await response.text()
    answer: Doc = await response.json()
    return answer


async def resources(client: Client, key: str, store: Store) -> dict[str, str]:
    """A real resource of the account for every kind of {id}: the one a route's path names."""
    body = WRITES["createGeneration"]["json"]
    running = await ok(client, "POST", "/v1/generate", key, json=body)
    finished = await ok(client, "POST", "/v1/generate", key, json=body)
    await store.generations.update_one({"_id": finished["id"]}, {"$set": {"status": "completed"}})
    hook = await ok(
        client,
        "POST",
        "/v1/webhooks",
        key,
        json={"url": "https://example.test/h", "events": ["video.failed"]},
    )
    delivery = await ok(client, "POST", f"/v1/webhooks/{hook['id']}/test", key)
    victim = await ok(client, "POST", "/v1/api-keys", key, json={"name": "victim", "scopes": ["keys:read"]})
    batch = await ok(client, "POST", "/v1/batches", key, json=WRITES["createBatch"]["json"])
    upload = WRITES["createUpload"]
    made = await client.post("/v1/uploads", data=upload["data"], headers={**bearer(key), **upload["headers"]})
    assert made.status == 201, await made.text()
    return {
        "/v1/uploads/": (await made.json())["id"],
        "/v1/generations/{id}/events": finished["id"],
        "/v1/generations/": running["id"],
        "/v1/webhooks/": hook["id"],
        "/v1/deliveries/": delivery["id"],
        "/v1/events/": delivery["event_id"],
        "/v1/api-keys/": victim["id"],
        "/v1/batches/": batch["id"],
    }


def concrete(path: str, ids: dict[str, str]) -> str:
    if "{id}" not in path:
        return path
    found = ids.get(path) or next(
        v for prefix, v in ids.items() if path.startswith(prefix) and "{" not in prefix
    )
    return path.replace("{id}", found)


async def snapshot(store: Store) -> dict[str, list[Doc]]:
    """Everything stored, but when keys were last used (a key's first use records it, refused or not)."""
    everything: dict[str, list[Doc]] = {}
    for name in sorted(await store.db.list_collection_names()):
        docs = await store.db[name].find().sort("_id", 1).to_list(None)
        everything[name] = [{k: v for k, v in d.items() if k != "last_used_at"} for d in docs]
    return everything


async def call(client: Client, method: str, path: str, key: str, op: Endpoint) -> tuple[int, Doc]:
    request = WRITES.get(op.operation_id, {})
    headers = {**bearer(key), **request.get("headers", {})}
    kw = {k: v for k, v in request.items() if k != "headers"}
    async with client.request(method.upper(), path, headers=headers, **kw) as response:
        if response.status == 403:
            return 403, await response.json()
        return response.status, {}  # an event stream is left open: its answer's status is what counts


def routes(client: Client) -> list[tuple[str, str, Endpoint]]:
    return [(m, p, op) for m, p, op in openapi.endpoints(client.app.router) if not op.public]


async def test_each_scope_allows_exactly_its_routes_and_refuses_the_rest_with_no_side_effect(
    client: Client, key: str, store: Store
) -> None:
    ids = await resources(client, key, store)
    keys = {
        scope: (
            await ok(client, "POST", "/v1/api-keys", key, json={"name": scope.value, "scopes": [scope.value]})
        )["secret"]
        for scope in Scope
    }
    declared = routes(client)
    assert len(declared) >= 27
    # Every refusal first, each scope's against a snapshot of everything stored.
    for scope, secret in keys.items():
        before = await snapshot(store)
        for method, path, op in declared:
            if op.scope in granted([scope.value]):
                continue
            status, problem = await call(client, method, concrete(path, ids), secret, op)
            assert status == 403, (scope, method, path, status)
            assert problem["type"] == "urn:videogen:problem:insufficient-scope"
            assert (
                problem["scope"] == op.scope and op.scope is not None and op.scope.value in problem["detail"]
            )
        assert await snapshot(store) == before, scope
    # Then what each scope allows: answered, whatever the answer, without a 403.
    for scope, secret in keys.items():
        for method, path, op in declared:
            if op.scope in granted([scope.value]):
                status, _ = await call(client, method, concrete(path, ids), secret, op)
                assert status != 403, (scope, method, path)


async def test_every_route_needs_the_scope_this_table_names(client: Client) -> None:
    assert {op.operation_id: op.scope for _, _, op in routes(client)} == SCOPE_OF


async def test_every_write_route_has_a_request_here(client: Client) -> None:
    writes = {op.operation_id for method, _, op in routes(client) if method != "get"}
    assert writes == set(WRITES)


def test_a_route_without_a_scope_is_refused_before_it_is_served() -> None:
    routes_ = web.RouteTableDef()

    @routes_.get("/v1/unscoped")
    @Endpoint(operation_id="unscoped", tag="Account", summary="s", description="d", status=200, answer="a")
    async def unscoped(request: web.Request) -> web.Response:
        raise AssertionError("never served")

    app = web.Application()
    app.add_routes(routes_)
    with pytest.raises(ValueError, match="declares no scope"):
        list(openapi.endpoints(app.router))
