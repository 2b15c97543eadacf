"""API keys as the account's own resource, through the real api and store: a key made with POST
/v1/api-keys answers its secret once and works at once; it is listed and read with its prefix and last four,
never its secret or hash; it is revoked (or expires) and stops working; when it was last used is kept to the
minute without a write per request; no key can give or touch what it does not hold (scopes, budgets); every
change is an audit event; the secret is in no later answer, no log line and no stored document."""

from __future__ import annotations

import logging
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
from videogen_api import state
from videogen_api.schemas.keys import ApiKey, ApiKeyCreated, ApiKeyList, ScopeProblem
from videogen_api.settings import ApiSettings
from videogen_common.clock import isoformat
from videogen_common.scopes import Scope
from videogen_common.signing import hash_api_key
from videogen_common.store import Store

Client = TestClient[web.Request, web.Application]
Doc = dict[str, Any]
NO_COST = {"daily_cost": None, "monthly_cost": None}
ALL = [s.value for s in Scope]


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
async def client(base_env: dict[str, str], store: Store, clock: ManualClock) -> AsyncIterator[Client]:
    async with api_client(settings_for(ApiSettings, base_env, api_port=0), clock) as client:
        yield client


async def make(client: Client, key: str, **body: Any) -> Doc:
    response = await client.post("/v1/api-keys", json={"name": "job", **body}, headers=bearer(key))
    text = await response.text()
    assert response.status == 201, text
    ApiKeyCreated.model_validate_json(text, strict=True)
    made: Doc = orjson.loads(text)
    assert response.headers["Location"] == f"/v1/api-keys/{made['id']}"
    return made


async def status_of(client: Client, key: str, method: str = "GET", path: str = "/v1/generations") -> int:
    response = await client.request(method, path, headers=bearer(key))
    await response.read()
    return response.status


async def test_a_key_made_here_answers_its_secret_once_and_works_at_once(
    client: Client, key: str, store: Store
) -> None:
    made = await make(client, key, name="nightly batch", scopes=["generations:write"])
    secret = made["secret"]
    assert secret.startswith(made["prefix"]) and made["prefix"] == "vg_"
    assert secret.endswith(made["last_four"]) and len(made["last_four"]) == 4
    assert made["scopes"] == ["generations:write"]
    assert made["budgets"] == {"daily_video_seconds": None, "monthly_video_seconds": None, **NO_COST}
    assert (made["expires_at"], made["revoked_at"], made["last_used_at"]) == (None, None, None)

    assert await status_of(client, secret) == 200  # :write holds :read
    one = await client.get(f"/v1/api-keys/{made['id']}", headers=bearer(key))
    view = await one.text()
    ApiKey.model_validate_json(view, strict=True)
    assert orjson.loads(view) == {k: v for k, v in made.items() if k not in {"secret", "last_used_at"}} | {
        "last_used_at": orjson.loads(view)["last_used_at"]
    }
    listed = await client.get("/v1/api-keys", headers=bearer(key))
    page = await listed.text()
    ApiKeyList.model_validate_json(page, strict=True)
    assert secret not in view and secret not in page
    stored = await store.api_keys.find_one({"_id": made["id"]})
    assert stored is not None and stored["key_hash"] == hash_api_key(secret)


async def test_the_secret_is_in_no_later_answer_no_log_line_and_no_stored_document(
    client: Client, key: str, store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    made = await make(client, key, scopes=ALL, budgets={"daily_video_seconds": 100})
    secret = made["secret"]
    # Use it for everything it touches: a generation, a webhook, a change of the key, the audit trail.
    await client.post(
        "/v1/generate", json={"prompt": "a kite", "provider": "mock", "duration": 3}, headers=bearer(secret)
    )
    await client.post(
        "/v1/webhooks",
        json={"url": "https://example.test/h", "events": ["video.failed"]},
        headers=bearer(secret),
    )
    await client.patch(f"/v1/api-keys/{made['id']}", json={"name": "renamed"}, headers=bearer(secret))
    answers = [
        await (await client.get(path, headers=bearer(secret))).text()
        for path in (
            "/v1/api-keys",
            f"/v1/api-keys/{made['id']}",
            "/v1/audit-events",
            "/v1/usage",
            "/v1/budgets",
        )
    ]
    await client.delete(f"/v1/api-keys/{made['id']}", headers=bearer(key))
    answers.append(await (await client.get("/v1/audit-events", headers=bearer(key))).text())
    assert not [a for a in answers if secret in a]
    logged = [record for record in caplog.records if secret in f"{record.getMessage()} {record.__dict__}"]
    assert logged == []
    for name in await store.db.list_collection_names():
        async for doc in store.db[name].find():
            assert secret not in str(doc), name


async def test_listing_is_newest_first_paged_and_the_accounts_own(
    client: Client, key: str, other_key: str, clock: ManualClock
) -> None:
    made = []
    for n in range(3):
        clock.advance(timedelta(seconds=1))
        made.append(await make(client, key, name=f"k{n}", scopes=["usage:read"]))
    await make(client, other_key, name="theirs", scopes=["usage:read"])
    first = await (await client.get("/v1/api-keys?limit=2", headers=bearer(key))).json()
    rest = await (
        await client.get(f"/v1/api-keys?limit=2&cursor={first['next_cursor']}", headers=bearer(key))
    ).json()
    names = [k["name"] for k in first["data"] + rest["data"]]
    assert [n for n in names if n is not None] == ["k2", "k1", "k0"]  # and the fixture's, made by an operator
    assert len(names) == 4 and rest["next_cursor"] is None
    theirs = await client.get(f"/v1/api-keys/{made[0]['id']}", headers=bearer(other_key))
    assert theirs.status == 404
    revoke = await client.delete(f"/v1/api-keys/{made[0]['id']}", headers=bearer(other_key))
    assert revoke.status == 404
    assert await status_of(client, made[0]["secret"], path="/v1/usage") == 200


async def test_an_operators_key_holds_every_scope(client: Client, key: str) -> None:
    page = await (await client.get("/v1/api-keys", headers=bearer(key))).json()
    [own] = page["data"]
    assert own["scopes"] == ALL and own["last_four"] == key[-4:]


async def test_a_revoked_key_stops_at_once_here_and_revoking_again_changes_nothing(
    client: Client, key: str, store: Store
) -> None:
    made = await make(client, key, scopes=["generations:read"])
    assert await status_of(client, made["secret"]) == 200  # now cached
    response = await client.delete(f"/v1/api-keys/{made['id']}", headers=bearer(key))
    revoked = await response.json()
    assert response.status == 200 and revoked["revoked_at"] is not None
    assert await status_of(client, made["secret"]) == 401
    again = await client.delete(f"/v1/api-keys/{made['id']}", headers=bearer(key))
    assert again.status == 200 and (await again.json())["revoked_at"] == revoked["revoked_at"]
    renamed = await client.patch(f"/v1/api-keys/{made['id']}", json={"name": "x"}, headers=bearer(key))
    assert renamed.status == 409
    assert (await renamed.json())["type"] == "urn:videogen:problem:api-key-revoked"
    assert await store.audit_events.count_documents({"type": "api_key.revoked"}) == 1


async def test_a_key_stops_at_its_expiry_although_it_is_cached(
    client: Client, key: str, clock: ManualClock
) -> None:
    expires = clock.now() + timedelta(minutes=5)
    made = await make(client, key, scopes=["generations:read"], expires_at=isoformat(expires))
    assert made["expires_at"] == isoformat(expires)
    assert await status_of(client, made["secret"]) == 200
    clock.set(expires - timedelta(milliseconds=1))
    assert await status_of(client, made["secret"]) == 200
    clock.set(expires)
    assert await status_of(client, made["secret"]) == 401
    past = await client.post(
        "/v1/api-keys",
        json={"name": "late", "scopes": ["usage:read"], "expires_at": isoformat(expires)},
        headers=bearer(key),
    )
    assert past.status == 422 and (await past.json())["errors"][0]["field"] == "expires_at"


async def test_last_used_is_kept_to_the_minute_without_a_write_per_request(
    client: Client, key: str, store: Store, clock: ManualClock
) -> None:
    made = await make(client, key, scopes=["generations:read"])
    clock.set(clock.now().replace(second=10))
    minute = clock.now().replace(second=0, microsecond=0)
    keys = client.app[state.KEYS]
    assert await status_of(client, made["secret"]) == 200
    await keys.writes_done()
    stored = await store.api_keys.find_one({"_id": made["id"]})
    assert stored is not None and stored["last_used_at"] == minute
    # Moved back behind the replica's back: a write per request would move it forward again.
    earlier = minute - timedelta(minutes=30)
    await store.api_keys.update_one({"_id": made["id"]}, {"$set": {"last_used_at": earlier}})
    for second in (20, 40, 59):
        clock.set(minute.replace(second=second))
        assert await status_of(client, made["secret"]) == 200
    await keys.writes_done()
    assert (await store.api_keys.find_one({"_id": made["id"]}) or {})["last_used_at"] == earlier
    clock.set(minute + timedelta(minutes=1, seconds=3))
    assert await status_of(client, made["secret"]) == 200
    await keys.writes_done()
    view = await (await client.get(f"/v1/api-keys/{made['id']}", headers=bearer(key))).json()
    assert view["last_used_at"] == isoformat(minute + timedelta(minutes=1))


async def test_a_key_cannot_make_a_key_with_a_scope_it_does_not_hold(
    client: Client, key: str, store: Store
) -> None:
    admin = await make(client, key, scopes=["keys:write", "generations:write"])
    before = await store.api_keys.count_documents({})
    response = await client.post(
        "/v1/api-keys",
        json={"name": "wider", "scopes": ["generations:read", "webhooks:write"]},
        headers=bearer(admin["secret"]),
    )
    text = await response.text()
    assert response.status == 403, text
    ScopeProblem.model_validate_json(text, strict=True)
    problem = orjson.loads(text)
    assert problem["scope"] == "webhooks:write" and "webhooks:write" in problem["detail"]
    assert await store.api_keys.count_documents({}) == before
    # What it holds, it may give: generations:read is held through generations:write.
    narrower = await make(client, admin["secret"], scopes=["generations:read", "keys:read"])
    assert narrower["scopes"] == ["generations:read", "keys:read"]


async def test_a_key_touches_only_keys_whose_scopes_it_holds(client: Client, key: str, store: Store) -> None:
    admin = await make(client, key, scopes=["keys:write", "usage:read"])
    # The operator's key holds every scope: the narrower key can neither revoke nor rename it.
    own_id = (await store.api_keys.find_one({"key_hash": hash_api_key(key)}) or {})["_id"]
    for method, body in (("DELETE", None), ("PATCH", {"name": "mine now"})):
        response = await client.request(
            method, f"/v1/api-keys/{own_id}", json=body, headers=bearer(admin["secret"])
        )
        assert response.status == 403
    assert await status_of(client, key) == 200
    # A key it holds the scopes of, and itself, it may.
    reader = await make(client, admin["secret"], scopes=["usage:read"])
    assert (
        await client.delete(f"/v1/api-keys/{reader['id']}", headers=bearer(admin["secret"]))
    ).status == 200
    assert (await client.delete(f"/v1/api-keys/{admin['id']}", headers=bearer(admin["secret"]))).status == 200
    assert await status_of(client, admin["secret"], path="/v1/usage") == 401


async def test_a_key_gives_no_key_more_budget_than_its_own(client: Client, key: str, store: Store) -> None:
    capped = await make(client, key, scopes=["keys:write"], budgets={"daily_video_seconds": 60})
    for budgets in (None, {"daily_video_seconds": 61}, {"monthly_video_seconds": 10}):
        body: Doc = {"name": "more", "scopes": ["keys:read"], **({"budgets": budgets} if budgets else {})}
        response = await client.post("/v1/api-keys", json=body, headers=bearer(capped["secret"]))
        assert response.status == 422, budgets
        errors = (await response.json())["errors"]
        assert [(e["field"], e["code"]) for e in errors] == [
            ("budgets.daily_video_seconds", "above_own_budget")
        ]
    within = await make(
        client,
        capped["secret"],
        scopes=["keys:read"],
        budgets={"daily_video_seconds": 30, "monthly_video_seconds": 5},
    )
    assert within["budgets"] == {"daily_video_seconds": 30, "monthly_video_seconds": 5, **NO_COST}
    # Nor itself: it may lower its own budget, never lift it.
    own = f"/v1/api-keys/{capped['id']}"
    lifted = await client.patch(own, json={"budgets": {}}, headers=bearer(capped["secret"]))
    assert lifted.status == 422
    lowered = await client.patch(
        own, json={"budgets": {"daily_video_seconds": 50}}, headers=bearer(capped["secret"])
    )
    assert (await lowered.json())["budgets"]["daily_video_seconds"] == 50
    assert (await store.api_keys.find_one({"_id": capped["id"]}) or {})["budgets"] == {
        "daily_video_seconds": 50
    }
    # Cost budgets alike, in dollars (kept in micro-dollars).
    priced = await make(client, key, scopes=["keys:write"], budgets={"monthly_cost": 2.5})
    above = await client.post(
        "/v1/api-keys",
        json={"name": "more", "scopes": ["keys:read"], "budgets": {"monthly_cost": 2.500001}},
        headers=bearer(priced["secret"]),
    )
    [error] = (await above.json())["errors"]
    assert (above.status, error["field"], error["code"]) == (422, "budgets.monthly_cost", "above_own_budget")
    assert "at most 2.5," in error["message"]
    cheaper = await make(client, priced["secret"], scopes=["keys:read"], budgets={"monthly_cost": 0.75})
    assert cheaper["budgets"] == {
        "daily_video_seconds": None,
        "monthly_video_seconds": None,
        "daily_cost": None,
        "monthly_cost": 0.75,
    }
    assert (await store.api_keys.find_one({"_id": cheaper["id"]}) or {})["budgets"] == {
        "monthly_cost": 750_000
    }


async def test_every_change_is_an_audit_event_naming_the_key_that_made_it(
    client: Client, key: str, clock: ManualClock
) -> None:
    admin = await make(client, key, scopes=["keys:write", "usage:read"])
    made = await make(client, admin["secret"], name="dash", scopes=["usage:read"])
    clock.advance(timedelta(seconds=1))
    await client.patch(
        f"/v1/api-keys/{made['id']}",
        json={"name": "dashboard", "budgets": {"monthly_video_seconds": 900}},
        headers=bearer(admin["secret"]),
    )
    clock.advance(timedelta(seconds=1))
    await client.delete(f"/v1/api-keys/{made['id']}", headers=bearer(admin["secret"]))
    trail = await (await client.get(f"/v1/audit-events?target_id={made['id']}", headers=bearer(key))).json()
    events = [(e["type"], e["actor"], e["data"]) for e in reversed(trail["data"])]
    actor = {"type": "api_key", "id": admin["id"]}
    assert events == [
        (
            "api_key.created",
            actor,
            {
                "name": "dash",
                "scopes": ["usage:read"],
                "expires_at": None,
                "budgets": {"daily_video_seconds": None, "monthly_video_seconds": None, **NO_COST},
            },
        ),
        (
            "api_key.updated",
            actor,
            {
                "changes": {
                    "name": {"from": "dash", "to": "dashboard"},
                    "budgets": {
                        "from": {"daily_video_seconds": None, "monthly_video_seconds": None, **NO_COST},
                        "to": {"daily_video_seconds": None, "monthly_video_seconds": 900, **NO_COST},
                    },
                }
            },
        ),
        ("api_key.revoked", actor, {"name": "dashboard"}),
    ]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "x", "scopes": []}, "scopes"),
        ({"name": "x", "scopes": ["keys:admin"]}, "scopes.0"),
        ({"name": "x", "scopes": ["usage:read", "usage:read"]}, "scopes"),
        ({"name": " ", "scopes": ["usage:read"]}, "name"),
        ({"scopes": ["usage:read"]}, "name"),
        ({"name": "x", "scopes": ["usage:read"], "expires_at": "tomorrow"}, "expires_at"),
        (
            {"name": "x", "scopes": ["usage:read"], "budgets": {"daily_video_seconds": -1}},
            "budgets.daily_video_seconds",
        ),
        ({"name": "x", "scopes": ["usage:read"], "budgets": {"daily": 1}}, "budgets.daily"),
    ],
)
async def test_invalid_keys_are_422_and_nothing_is_stored(
    client: Client, key: str, store: Store, body: Doc, field: str
) -> None:
    response = await client.post("/v1/api-keys", json=body, headers=bearer(key))
    assert response.status == 422
    assert field in [e["field"] for e in (await response.json())["errors"]]
    assert await store.api_keys.count_documents({}) == 1
