"""The audit trail against the real store: every change to an account's keys and webhooks — made through the
api, by the notifier disabling an endpoint, or at the command line — is an event at GET /v1/audit-events
saying who (key id, operator or system), when, what changed and which request; never a secret. Newest first,
paged, filtered by type, target and time; one account never sees another's."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import orjson
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from tests.support.api import api_client, bearer
from tests.support.env import settings_for
from tests.support.fakes import ManualClock
from videogen.keys import create_key, revoke_key
from videogen_api.schemas.audit import AuditEventList
from videogen_api.settings import ApiSettings
from videogen_common.clock import isoformat
from videogen_common.deliveries import FAILED, delivery_body, pending_delivery
from videogen_common.disabling import disable_endpoint
from videogen_common.ids import new_id
from videogen_common.records.webhook import WebhookEndpoint
from videogen_common.signing import hash_api_key
from videogen_common.store import Store

Client = TestClient[web.Request, web.Application]
Doc = dict[str, Any]
HOOK = {"url": "https://example.test/hooks", "events": ["video.completed"]}


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
async def client(base_env: dict[str, str], store: Store, clock: ManualClock) -> AsyncIterator[Client]:
    async with api_client(settings_for(ApiSettings, base_env, api_port=0), clock) as client:
        yield client


async def key_id(store: Store, key: str) -> str:
    doc = await store.api_keys.find_one({"key_hash": hash_api_key(key)})
    assert doc is not None
    return str(doc["_id"])


async def call(client: Client, method: str, path: str, key: str, body: Doc | None = None) -> Doc:
    """A request with its own X-Request-Id; returns the answer's body (empty for 204) and its request id."""
    request_id = "req-audit-" + secrets.token_hex(4)
    headers = {**bearer(key), "X-Request-Id": request_id}
    response = await client.request(method, path, json=body, headers=headers)
    assert response.status < 300, await response.text()
    answer: Doc = await response.json() if response.status != 204 else {}
    return {**answer, "_request_id": request_id}


async def events(client: Client, key: str, **params: str) -> list[Doc]:
    """Every audit event the key's account can read with ``params``, walking every page."""
    found: list[Doc] = []
    cursor: str | None = None
    while True:
        query = {**params, **({"cursor": cursor} if cursor else {})}
        response = await client.get("/v1/audit-events", params=query, headers=bearer(key))
        text = await response.text()
        assert response.status == 200, text
        AuditEventList.model_validate_json(text, strict=True)
        page = orjson.loads(text)
        found += page["data"]
        cursor = page["next_cursor"]
        if cursor is None:
            return found


async def test_every_change_to_keys_and_webhooks_is_recorded_with_who_when_and_what(
    client: Client, store: Store, clock: ManualClock
) -> None:
    key = await create_key(store, "acme", now=clock.now())
    actor = {"type": "api_key", "id": await key_id(store, key)}

    def tick() -> None:
        clock.advance(timedelta(seconds=1))  # each change at its own moment, so the order is known

    tick()
    created = await call(client, "POST", "/v1/webhooks", key, HOOK)
    hook = created["id"]
    tick()
    updated = await call(
        client,
        "PATCH",
        f"/v1/webhooks/{hook}",
        key,
        {"url": "https://example.test/v2", "events": ["video.failed"]},
    )
    tick()
    rotated_at = clock.now()
    rotated = await call(client, "POST", f"/v1/webhooks/{hook}/rotate-secret", key)
    tick()
    paused = await call(client, "PATCH", f"/v1/webhooks/{hook}", key, {"active": False})
    tick()
    await call(client, "PATCH", f"/v1/webhooks/{hook}", key, {"active": False})  # no change: no event
    resumed = await call(client, "PATCH", f"/v1/webhooks/{hook}", key, {"active": True})
    tick()
    delivery = pending_delivery(
        event_id=new_id("evt", clock.now()),
        event_type="video.completed",
        webhook_id=hook,
        account_id="acme",
        body=delivery_body("video.completed", isoformat(clock.now()), {"id": "gen_x"}),
        now=clock.now(),
    ).to_doc()
    await store.deliveries.insert_one({**delivery, "status": FAILED, "next_attempt_at": None})
    retried = await call(client, "POST", f"/v1/deliveries/{delivery['_id']}/retry", key)
    tick()
    since = isoformat(clock.now() - timedelta(hours=1))
    recovered = await call(client, "POST", f"/v1/webhooks/{hook}/recover", key, {"since": since})
    tick()
    # The notifier disables the endpoint (a 410): its audit record is written right after the disable,
    # and a second disable (another instance, at once) adds nothing.
    endpoint_doc = await store.webhooks.find_one({"_id": hook})
    assert endpoint_doc is not None
    endpoint = WebhookEndpoint.from_doc(endpoint_doc)
    await disable_endpoint(store, endpoint, "the endpoint answered 410 Gone", clock.now())
    await disable_endpoint(store, endpoint, "the endpoint answered 410 Gone", clock.now())
    disabled_at = clock.now()
    tick()
    deleted = await call(client, "DELETE", f"/v1/webhooks/{hook}", key)
    tick()
    second = await create_key(store, "acme", now=clock.now())
    tick()
    assert await revoke_key(store, second, now=clock.now())
    second_id = await key_id(store, second)

    def activity(before: bool, after: bool) -> Doc:
        return {"changes": {"active": {"from": before, "to": after}}}

    trail = await events(client, key, limit="3")  # three to a page: the walk crosses pages
    seen = [(e["type"], e["actor"], e["target"], e["data"], e["request_id"]) for e in reversed(trail)]
    operator = {"type": "operator", "id": None}
    target = {"type": "webhook", "id": hook}
    assert seen == [
        ("api_key.created", operator, {"type": "api_key", "id": actor["id"]}, {}, None),
        ("webhook.created", actor, target, HOOK, created["_request_id"]),
        (
            "webhook.updated",
            actor,
            target,
            {
                "changes": {
                    "url": {"from": HOOK["url"], "to": "https://example.test/v2"},
                    "events": {"from": ["video.completed"], "to": ["video.failed"]},
                }
            },
            updated["_request_id"],
        ),
        (
            "webhook.secret_rotated",
            actor,
            target,
            {"previous_secret_expires_at": isoformat(rotated_at + timedelta(hours=24))},
            rotated["_request_id"],
        ),
        ("webhook.updated", actor, target, activity(True, False), paused["_request_id"]),
        ("webhook.updated", actor, target, activity(False, True), resumed["_request_id"]),
        (
            "delivery.retry_requested",
            actor,
            {"type": "delivery", "id": delivery["_id"]},
            {"webhook_id": hook, "event_type": "video.completed"},
            retried["_request_id"],
        ),
        (
            "webhook.recovery_requested",
            actor,
            target,
            {"since": since, "requeued": 0},
            recovered["_request_id"],
        ),
        ("webhook.disabled", {"type": "system", "id": "notifier"}, target,
         {"reason": "the endpoint answered 410 Gone"}, None),
        ("webhook.deleted", actor, target, {"url": "https://example.test/v2", "events": ["video.failed"]},
         deleted["_request_id"]),
        ("api_key.created", operator, {"type": "api_key", "id": second_id}, {}, None),
        ("api_key.revoked", operator, {"type": "api_key", "id": second_id}, {}, None),
    ]  # fmt: skip
    disabled = next(e for e in trail if e["type"] == "webhook.disabled")
    assert disabled["created_at"] == isoformat(disabled_at)

    # Never a secret: not the webhook's (issued twice above), not a key, not a key's hash.
    raw = orjson.dumps(trail).decode()
    stored = orjson.dumps(await store.audit_events.find({}).to_list(None), default=str).decode()
    for text in (raw, stored):
        assert "whsec_" not in text
        for secret in (key, second, hash_api_key(key), hash_api_key(second)):
            assert secret not in text

    # Filters: by type (several), by target, by time.
    updates = await events(client, key, type="webhook.updated,webhook.deleted")
    assert [e["type"] for e in updates] == ["webhook.deleted", *["webhook.updated"] * 3]
    on_delivery = await events(client, key, target_id=delivery["_id"])
    assert [e["type"] for e in on_delivery] == ["delivery.retry_requested"]
    late = await events(client, key, created_after=isoformat(disabled_at))
    assert [e["type"] for e in late] == ["api_key.revoked", "api_key.created", "webhook.deleted"]


async def test_one_account_never_sees_anothers_trail(client: Client, store: Store) -> None:
    acme, globex = await create_key(store, "acme"), await create_key(store, "globex")
    await call(client, "POST", "/v1/webhooks", acme, HOOK)
    theirs = await events(client, globex)
    assert [e["type"] for e in theirs] == ["api_key.created"]
    assert theirs[0]["target"]["id"] == await key_id(store, globex)


@pytest.mark.parametrize(
    ("query", "fields"),
    [
        ("type=webhook.exploded", ["type"]),
        ("created_after=yesterday", ["created_after"]),
        ("target_id=a&target_id=b", ["target_id"]),
        ("limit=0", ["limit"]),
        ("cursor=nope", ["cursor"]),
    ],
)
async def test_bad_parameters_are_a_422(client: Client, store: Store, query: str, fields: list[str]) -> None:
    key = await create_key(store, "acme")
    response = await client.get(f"/v1/audit-events?{query}", headers=bearer(key))
    assert response.status == 422
    assert response.content_type == "application/problem+json"
    assert [e["field"] for e in (await response.json())["errors"]] == fields
