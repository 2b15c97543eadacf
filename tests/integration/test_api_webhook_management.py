"""GET, PATCH and DELETE /v1/webhooks/{id}, POST …/rotate-secret and …/test, and the per-account cap, against
the real store: secrets never in a view, validation exactly as on creation, nothing half-written, tenancy."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import orjson
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from tests.support.api import api_client, bearer
from tests.support.fakes import ManualClock
from videogen_api.settings import ApiSettings
from videogen_common.clock import isoformat
from videogen_common.deliveries import delivery_body, pending_delivery
from videogen_common.disabling import disable_endpoint
from videogen_common.ids import new_id
from videogen_common.records.webhook import WebhookEndpoint
from videogen_common.store import Store

Client = TestClient[web.Request, web.Application]
Doc = dict[str, Any]
HOOK = {"url": "https://example.test/hooks/videogen", "events": ["video.completed", "video.failed"]}
VIEW_FIELDS = {"id", "url", "events", "active", "disabled_reason", "created_at", "updated_at"}


async def create(client: Client, key: str, **fields: Any) -> Doc:
    response = await client.post("/v1/webhooks", json={**HOOK, **fields}, headers=bearer(key))
    assert response.status == 201, await response.text()
    body: Doc = await response.json()
    return body


async def stored(store: Store, webhook_id: str) -> Doc:
    doc = await store.webhooks.find_one({"_id": webhook_id})
    assert doc is not None
    return doc


async def add_delivery(store: Store, webhook: Doc, status: str, clock: ManualClock | None = None) -> str:
    now = clock.now() if clock else (await stored(store, webhook["id"]))["created_at"]
    doc = pending_delivery(
        event_id=new_id("evt", now),
        event_type="video.completed",
        webhook_id=webhook["id"],
        account_id="acme",
        body=delivery_body("video.completed", isoformat(now), {"id": "gen_x"}),
        now=now,
        generation_id="gen_x",
    ).to_doc()
    if status != "pending":
        doc.update(status=status, next_attempt_at=None)
    await store.deliveries.insert_one(doc)
    return str(doc["_id"])


# --- GET ----------------------------------------------------------------------------------------------------


async def test_get_returns_the_view_without_the_secret(client: Client, key: str) -> None:
    created = await create(client, key)
    response = await client.get(f"/v1/webhooks/{created['id']}", headers=bearer(key))
    assert response.status == 200
    body = await response.json()
    assert set(body) == VIEW_FIELDS
    assert body == {k: v for k, v in created.items() if k != "secret"}
    assert created["secret"] not in str(body)


async def test_get_unknown_webhook_is_404_problem(client: Client, key: str) -> None:
    response = await client.get("/v1/webhooks/wh_doesnotexist", headers=bearer(key))
    assert response.status == 404
    assert response.content_type == "application/problem+json"
    assert (await response.json())["type"] == "urn:videogen:problem:not-found"


# --- PATCH --------------------------------------------------------------------------------------------------


async def test_patch_changes_only_the_fields_sent(client: Client, key: str, store: Store) -> None:
    created = await create(client, key)
    before = await stored(store, created["id"])
    response = await client.patch(
        f"/v1/webhooks/{created['id']}",
        json={"url": "https://example.test/v2", "events": ["video.failed"]},
        headers=bearer(key),
    )
    assert response.status == 200
    body = await response.json()
    assert set(body) == VIEW_FIELDS
    assert (body["url"], body["events"], body["active"]) == (
        "https://example.test/v2",
        ["video.failed"],
        True,
    )
    assert body["created_at"] == created["created_at"]
    assert created["secret"] not in str(body)
    after = await stored(store, created["id"])
    assert after["secrets"] == before["secrets"]

    only_events = await client.patch(
        f"/v1/webhooks/{created['id']}", json={"events": ["video.completed"]}, headers=bearer(key)
    )
    assert (await only_events.json())["url"] == "https://example.test/v2"
    assert await (await client.get(f"/v1/webhooks/{created['id']}", headers=bearer(key))).json() == (
        await only_events.json()
    )


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"url": "ftp://example.test/x"}, "url"),
        ({"url": "/relative/path"}, "url"),
        ({"url": "https://user:pw@example.test/x"}, "url"),
        ({"url": "https://example.test/" + "x" * 2048}, "url"),
        ({"url": None}, "url"),
        ({"events": []}, "events"),
        ({"events": ["video.started"]}, "events.0"),
        ({"events": ["video.failed", "video.failed"]}, "events"),
        ({"events": None}, "events"),
        ({"active": "true"}, "active"),
        ({"active": None}, "active"),
        ({"url": "https://example.test/ok", "secret": "whsec_mine"}, "secret"),
        ({"url": "https://example.test/ok", "events": []}, "events"),
        ({}, "body"),
        ([], "body"),
    ],
)
async def test_invalid_patches_are_422_and_change_nothing(
    client: Client, key: str, store: Store, body: Any, field: str
) -> None:
    created = await create(client, key)
    before = await stored(store, created["id"])
    response = await client.patch(
        f"/v1/webhooks/{created['id']}",
        data=orjson.dumps(body),
        headers={**bearer(key), "Content-Type": "application/json"},
    )
    assert response.status == 422
    assert response.content_type == "application/problem+json"
    assert field in [e["field"] for e in (await response.json())["errors"]]
    assert await stored(store, created["id"]) == before


async def test_patch_malformed_json_and_wrong_content_type(client: Client, key: str, store: Store) -> None:
    created = await create(client, key)
    before = await stored(store, created["id"])
    url = f"/v1/webhooks/{created['id']}"
    malformed = await client.patch(
        url, data=b'{"url": ', headers={**bearer(key), "Content-Type": "application/json"}
    )
    assert malformed.status == 400
    wrong_type = await client.patch(url, data=b"{}", headers={**bearer(key), "Content-Type": "text/plain"})
    assert wrong_type.status == 415
    assert await stored(store, created["id"]) == before


async def test_patch_refuses_plain_http_unless_the_deployment_allows_it(
    api_settings: ApiSettings, store: Store, key: str
) -> None:
    strict = api_settings.model_copy(update={"webhook_allow_http": False})
    async with api_client(strict) as client:
        created = await create(client, key)
        before = await stored(store, created["id"])
        response = await client.patch(
            f"/v1/webhooks/{created['id']}", json={"url": "http://example.test/hook"}, headers=bearer(key)
        )
        assert response.status == 422
        assert (await response.json())["errors"][0]["code"] == "https_required"
        assert await stored(store, created["id"]) == before


async def test_patch_active_false_disables_and_true_re_enables_clearing_reason_and_health(
    client: Client, key: str, store: Store
) -> None:
    created = await create(client, key)
    url = f"/v1/webhooks/{created['id']}"
    disabled = await (await client.patch(url, json={"active": False}, headers=bearer(key))).json()
    assert disabled["active"] is False and disabled["disabled_reason"] == "disabled by the account"
    assert (await stored(store, created["id"]))["disabled_at"] is not None

    # As the notifier leaves an endpoint that answered 410, with circuit-breaker state beside it.
    await store.webhooks.update_one(
        {"_id": created["id"]},
        {"$set": {"disabled_reason": "endpoint answered 410 Gone", "health": {"consecutive_failures": 9}}},
    )
    assert (await (await client.get(url, headers=bearer(key))).json())[
        "disabled_reason"
    ] == "endpoint answered 410 Gone"
    again = await (await client.patch(url, json={"active": False}, headers=bearer(key))).json()
    assert again["disabled_reason"] == "endpoint answered 410 Gone"  # an already-disabled endpoint keeps why

    enabled = await client.patch(url, json={"active": True}, headers=bearer(key))
    assert enabled.status == 200
    body = await enabled.json()
    assert body["active"] is True and body["disabled_reason"] is None
    doc = await stored(store, created["id"])
    assert doc["active"] is True
    assert not {"disabled_reason", "disabled_at", "health"} & set(doc)


async def test_re_enabling_at_once_leaves_the_disabled_event_its_why_and_when(
    client: Client, key: str, store: Store
) -> None:
    """The notifier's disable carries its webhook.disabled event, the reason and time in its data: a re-enable
    before the event is delivered forgets them on the endpoint, never in the event."""
    created = await create(client, key)
    endpoint = WebhookEndpoint.from_doc(await stored(store, created["id"]))
    disabled_at = endpoint.created_at
    event = await disable_endpoint(store, endpoint, "failing for 5 days", disabled_at)
    assert event is not None

    response = await client.patch(f"/v1/webhooks/{created['id']}", json={"active": True}, headers=bearer(key))
    assert (await response.json())["disabled_reason"] is None
    doc = await stored(store, created["id"])
    assert doc["active"] is True and not {"disabled_reason", "disabled_at", "health"} & set(doc)
    [owed] = doc["outbox"]
    assert owed["_id"] == event.id and doc["outbox_at"] == disabled_at
    assert owed["data"]["reason"] == "failing for 5 days"
    assert owed["data"]["disabled_at"] == isoformat(disabled_at)


# --- DELETE -------------------------------------------------------------------------------------------------


async def test_delete_answers_204_and_fails_its_pending_deliveries(
    client: Client, key: str, store: Store
) -> None:
    created = await create(client, key)
    kept = await create(client, key, url="https://example.test/other")
    pending = await add_delivery(store, created, "pending")
    succeeded = await add_delivery(store, created, "succeeded")
    other_pending = await add_delivery(store, kept, "pending")

    response = await client.delete(f"/v1/webhooks/{created['id']}", headers=bearer(key))
    assert response.status == 204
    assert await response.read() == b""
    assert await store.webhooks.find_one({"_id": created["id"]}) is None
    assert (await client.get(f"/v1/webhooks/{created['id']}", headers=bearer(key))).status == 404
    assert [
        w["id"] for w in (await (await client.get("/v1/webhooks", headers=bearer(key))).json())["data"]
    ] == [kept["id"]]

    failed = await store.deliveries.find_one({"_id": pending})
    assert failed is not None
    assert (failed["status"], failed["failure_reason"], failed["next_attempt_at"]) == (
        "failed",
        "endpoint deleted",
        None,
    )
    done = await store.deliveries.find_one({"_id": succeeded})
    assert done is not None and done["status"] == "succeeded" and done.get("failure_reason") is None
    untouched = await store.deliveries.find_one({"_id": other_pending})
    assert untouched is not None and untouched["status"] == "pending"
    # The log stays readable.
    read = await client.get(f"/v1/deliveries/{pending}", headers=bearer(key))
    assert read.status == 200 and (await read.json())["failure_reason"] == "endpoint deleted"

    assert (await client.delete(f"/v1/webhooks/{created['id']}", headers=bearer(key))).status == 404


# --- rotate-secret ------------------------------------------------------------------------------------------


async def test_rotate_secret_puts_the_new_one_first_and_expires_the_previous_after_the_overlap(
    api_settings: ApiSettings, store: Store, key: str
) -> None:
    clock = ManualClock()
    async with api_client(api_settings, clock) as client:
        created = await create(client, key)
        first = created["secret"]
        response = await client.post(f"/v1/webhooks/{created['id']}/rotate-secret", headers=bearer(key))
        assert response.status == 200
        body = await response.json()
        assert set(body) == {"id", "secret"} and body["id"] == created["id"]
        second = body["secret"]
        assert second.startswith("whsec_") and second != first
        rotated_at = clock.now()
        secrets = (await stored(store, created["id"]))["secrets"]
        assert [(s["secret"], s["expires_at"]) for s in secrets] == [
            (second, None),
            (first, rotated_at + timedelta(hours=24)),
        ]
        assert secrets[0]["created_at"] == rotated_at

        # A second rotation within the overlap: the first keeps its own expiry, the second gets one.
        clock.advance(timedelta(hours=1))
        third = (
            await (
                await client.post(f"/v1/webhooks/{created['id']}/rotate-secret", headers=bearer(key))
            ).json()
        )["secret"]
        secrets = (await stored(store, created["id"]))["secrets"]
        assert [(s["secret"], s["expires_at"]) for s in secrets] == [
            (third, None),
            (second, clock.now() + timedelta(hours=24)),
            (first, rotated_at + timedelta(hours=24)),
        ]

        # Once the first has expired, the next rotation prunes it.
        clock.advance(timedelta(hours=23, seconds=1))
        fourth = (
            await (
                await client.post(f"/v1/webhooks/{created['id']}/rotate-secret", headers=bearer(key))
            ).json()
        )["secret"]
        secrets = (await stored(store, created["id"]))["secrets"]
        assert [s["secret"] for s in secrets] == [fourth, third, second]

        view = await (await client.get(f"/v1/webhooks/{created['id']}", headers=bearer(key))).json()
        listed = await (await client.get("/v1/webhooks", headers=bearer(key))).json()
        for secret in (first, second, third, fourth):
            assert secret not in str(view) and secret not in str(listed)


async def test_rotate_secret_overlap_is_a_setting(api_settings: ApiSettings, store: Store, key: str) -> None:
    clock = ManualClock()
    settings = api_settings.model_copy(update={"webhook_secret_overlap_seconds": 60.0})
    async with api_client(settings, clock) as client:
        created = await create(client, key)
        await client.post(f"/v1/webhooks/{created['id']}/rotate-secret", headers=bearer(key))
        secrets = (await stored(store, created["id"]))["secrets"]
        assert secrets[1]["expires_at"] == clock.now() + timedelta(seconds=60)


# --- test event ---------------------------------------------------------------------------------------------


async def test_test_event_creates_a_due_webhook_test_delivery(client: Client, key: str, store: Store) -> None:
    created = await create(client, key, events=["video.failed"])
    response = await client.post(f"/v1/webhooks/{created['id']}/test", headers=bearer(key))
    assert response.status == 202
    body = await response.json()
    assert response.headers["Location"] == f"/v1/deliveries/{body['id']}"
    assert body["webhook_id"] == created["id"] and body["event_type"] == "webhook.test"
    assert body["event_id"].startswith(f"evt_{created['id']}_test_") and body["generation_id"] is None
    assert (body["status"], body["attempts"], body["failure_reason"]) == ("pending", [], None)
    assert body["next_attempt_at"] == body["created_at"]

    doc = await store.deliveries.find_one({"_id": body["id"]})
    assert doc is not None
    assert doc["account_id"] == "acme" and doc["status"] == "pending"
    assert doc["next_attempt_at"] == doc["created_at"]
    payload = orjson.loads(doc["body"])
    assert payload == {
        "event": "webhook.test",
        "timestamp": body["created_at"],
        "data": {"webhook_id": created["id"]},
    }
    assert await (await client.get(f"/v1/deliveries/{body['id']}", headers=bearer(key))).json() == body
    # Its event, recorded with it (and owed nothing more: its one delivery is made), is the account's to read.
    event = await (await client.get(f"/v1/events/{body['event_id']}", headers=bearer(key))).json()
    assert event == {
        "id": body["event_id"],
        "type": "webhook.test",
        "subject": {"type": "webhook", "id": created["id"]},
        "data": {"webhook_id": created["id"]},
        "created_at": body["created_at"],
    }
    assert "outbox" not in await stored(store, created["id"])


async def test_test_event_to_a_disabled_endpoint_is_409_and_creates_nothing(
    client: Client, key: str, store: Store
) -> None:
    created = await create(client, key)
    await client.patch(f"/v1/webhooks/{created['id']}", json={"active": False}, headers=bearer(key))
    response = await client.post(f"/v1/webhooks/{created['id']}/test", headers=bearer(key))
    assert response.status == 409
    assert response.content_type == "application/problem+json"
    assert (await response.json())["type"] == "urn:videogen:problem:endpoint-disabled"
    assert await store.deliveries.count_documents({}) == 0


# --- the cap ------------------------------------------------------------------------------------------------


async def test_creating_beyond_the_per_account_cap_is_409_webhook_limit_and_stores_nothing(
    api_settings: ApiSettings, store: Store, key: str, other_key: str
) -> None:
    settings = api_settings.model_copy(update={"max_webhooks_per_account": 2})
    async with api_client(settings) as client:
        first = await create(client, key)
        await create(client, key)
        response = await client.post("/v1/webhooks", json=HOOK, headers=bearer(key))
        assert response.status == 409
        assert response.content_type == "application/problem+json"
        problem = await response.json()
        assert problem["type"] == "urn:videogen:problem:webhook-limit" and problem["status"] == 409
        assert await store.webhooks.count_documents({"account_id": "acme"}) == 2
        # The cap is per account, and deleting one makes room again.
        await create(client, other_key)
        assert (await client.delete(f"/v1/webhooks/{first['id']}", headers=bearer(key))).status == 204
        await create(client, key)


def test_the_default_cap_is_20_and_the_default_overlap_24_hours() -> None:
    assert ApiSettings.model_fields["max_webhooks_per_account"].default == 20
    assert ApiSettings.model_fields["webhook_secret_overlap_seconds"].default == 86400


# --- tenancy ------------------------------------------------------------------------------------------------

ID_ROUTES = [
    ("GET", "/v1/webhooks/{id}", None),
    ("PATCH", "/v1/webhooks/{id}", {"active": False}),
    ("DELETE", "/v1/webhooks/{id}", None),
    ("POST", "/v1/webhooks/{id}/rotate-secret", None),
    ("POST", "/v1/webhooks/{id}/test", None),
    ("GET", "/v1/webhooks/{id}/deliveries", None),
    ("POST", "/v1/webhooks/{id}/recover", "since"),
]


@pytest.mark.parametrize(("method", "path", "body"), ID_ROUTES)
async def test_another_accounts_webhook_answers_like_an_unknown_one_and_is_untouched(
    client: Client, key: str, other_key: str, store: Store, method: str, path: str, body: Any
) -> None:
    created = await create(client, key)
    await add_delivery(store, created, "failed")
    before_hook = await stored(store, created["id"])
    before_deliveries = await store.deliveries.find({}).to_list(None)
    if body == "since":
        body = {"since": isoformat(before_hook["created_at"] - timedelta(minutes=1))}

    async def call(webhook_id: str) -> tuple[int, str, Doc]:
        kwargs: dict[str, Any] = {"headers": bearer(other_key)}
        if body is not None:
            kwargs["json"] = body
        response = await client.request(method, path.format(id=webhook_id), **kwargs)
        return response.status, response.content_type, await response.json()

    foreign = await call(created["id"])
    unknown = await call("wh_doesnotexist")
    assert foreign[0] == unknown[0] == 404
    assert foreign[1] == unknown[1] == "application/problem+json"
    assert {k: v for k, v in foreign[2].items() if k not in ("detail", "instance")} == {
        k: v for k, v in unknown[2].items() if k not in ("detail", "instance")
    }
    assert await stored(store, created["id"]) == before_hook
    assert await store.deliveries.find({}).to_list(None) == before_deliveries
