"""The delivery log API against the real store: GET /v1/webhooks/{id}/deliveries (filters, paging),
GET /v1/deliveries/{id}, POST /v1/deliveries/{id}/retry, POST /v1/webhooks/{id}/recover; tenancy; and, with
the notifier's real sweeper and a real receiver, that a test event and a retry arrive correctly signed."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import hmac
from collections.abc import AsyncIterator
from datetime import datetime, timedelta, timezone
from typing import Any

import aiohttp
import orjson
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from tests.support.api import api_client, bearer
from tests.support.env import settings_for
from tests.support.fakes import ManualClock
from tests.support.receivers import Received, Reply, failing, receiving, replies
from tests.support.waiting import eventually
from videogen_api.settings import ApiSettings
from videogen_common.clock import SystemClock, isoformat
from videogen_common.deliveries import delivery_body, pending_delivery
from videogen_common.ids import new_id
from videogen_common.store import Store
from videogen_notifier.dispatcher import Dispatcher
from videogen_notifier.sender import Sender
from videogen_notifier.settings import NotifierSettings

Client = TestClient[web.Request, web.Application]
Doc = dict[str, Any]
HOOK = {"url": "https://example.test/hooks/videogen", "events": ["video.completed", "video.failed"]}
VIEW_FIELDS = {
    "id",
    "webhook_id",
    "event_id",
    "event_type",
    "generation_id",
    "status",
    "failure_reason",
    "attempts",
    "next_attempt_at",
    "created_at",
    "updated_at",
}


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
async def mclient(api_settings: ApiSettings, store: Store, clock: ManualClock) -> AsyncIterator[Client]:
    """The api on a clock the test moves by hand."""
    async with api_client(api_settings, clock) as client:
        yield client


async def create_webhook(client: Client, key: str, **fields: Any) -> str:
    response = await client.post("/v1/webhooks", json={**HOOK, **fields}, headers=bearer(key))
    assert response.status == 201, await response.text()
    webhook_id: str = (await response.json())["id"]
    return webhook_id


async def add_delivery(
    store: Store,
    webhook_id: str,
    created_at: datetime,
    *,
    status: str = "failed",
    event_type: str = "video.completed",
    account_id: str = "acme",
    attempts: list[Doc] | None = None,
) -> str:
    """A delivery record as the notifier leaves it."""
    generation_id = new_id("gen", created_at)
    doc = pending_delivery(
        event_id=f"evt_{generation_id}_completed_3",
        event_type=event_type,
        webhook_id=webhook_id,
        account_id=account_id,
        body=delivery_body(event_type, isoformat(created_at), {"id": generation_id}),
        now=created_at,
        generation_id=generation_id,
    ).to_doc()
    if status != "pending":
        doc.update(
            status=status,
            next_attempt_at=None,
            failure_reason="retry schedule exhausted" if status == "failed" else None,
        )
    if attempts is not None:
        doc["attempts"] = attempts
    await store.deliveries.insert_one(doc)
    return str(doc["_id"])


async def delivery(store: Store, delivery_id: str) -> Doc:
    doc = await store.deliveries.find_one({"_id": delivery_id})
    assert doc is not None
    return doc


async def list_ids(client: Client, key: str, webhook_id: str, **params: str) -> list[str]:
    response = await client.get(f"/v1/webhooks/{webhook_id}/deliveries", params=params, headers=bearer(key))
    assert response.status == 200, await response.text()
    page = await response.json()
    assert page["next_cursor"] is None
    return [d["id"] for d in page["data"]]


# --- listing ------------------------------------------------------------------------------------------------


async def test_list_is_newest_first_pages_without_skips_or_repeats_and_holds_only_that_endpoint(
    mclient: Client, key: str, other_key: str, store: Store, clock: ManualClock
) -> None:
    mine = await create_webhook(mclient, key)
    sibling = await create_webhook(mclient, key, url="https://example.test/sibling")
    theirs = await create_webhook(mclient, other_key)
    start = clock.now()
    # Two share a creation time, so the id breaks the tie.
    times = [start + timedelta(seconds=s) for s in (1, 2, 2, 3, 5, 8, 13)]
    made = [(t, await add_delivery(store, mine, t)) for t in times]
    await add_delivery(store, sibling, start + timedelta(seconds=4))
    await add_delivery(store, theirs, start + timedelta(seconds=4), account_id="globex")

    seen: list[str] = []
    cursor: str | None = None
    pages = 0
    while True:
        params = {"limit": "3", **({"cursor": cursor} if cursor else {})}
        response = await mclient.get(f"/v1/webhooks/{mine}/deliveries", params=params, headers=bearer(key))
        assert response.status == 200
        page = await response.json()
        assert set(page) == {"data", "next_cursor"}
        assert all(set(d) == VIEW_FIELDS and d["webhook_id"] == mine for d in page["data"])
        seen += [d["id"] for d in page["data"]]
        pages += 1
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert pages == 3
    assert seen == [d for _, d in sorted(made, reverse=True)]

    default_page = await (await mclient.get(f"/v1/webhooks/{mine}/deliveries", headers=bearer(key))).json()
    assert len(default_page["data"]) == 7 and default_page["next_cursor"] is None


async def test_list_filters_by_status_event_type_and_creation_time(
    mclient: Client, key: str, store: Store, clock: ManualClock
) -> None:
    hook = await create_webhook(mclient, key)
    t0 = clock.now()
    old_failed = await add_delivery(store, hook, t0 + timedelta(minutes=1), status="failed")
    ok = await add_delivery(store, hook, t0 + timedelta(minutes=2), status="succeeded")
    pending_failed_event = await add_delivery(
        store, hook, t0 + timedelta(minutes=3), status="pending", event_type="video.failed"
    )
    test_event = await add_delivery(
        store, hook, t0 + timedelta(minutes=4), status="succeeded", event_type="webhook.test"
    )
    new_failed = await add_delivery(store, hook, t0 + timedelta(minutes=5), status="failed")
    notice = await add_delivery(
        store, hook, t0 + timedelta(minutes=6), status="succeeded", event_type="webhook.disabled"
    )

    assert await list_ids(mclient, key, hook, status="failed") == [new_failed, old_failed]
    assert await list_ids(mclient, key, hook, status="succeeded") == [notice, test_event, ok]
    assert await list_ids(mclient, key, hook, status="pending") == [pending_failed_event]
    assert await list_ids(mclient, key, hook, event_type="video.failed") == [pending_failed_event]
    assert await list_ids(mclient, key, hook, event_type="webhook.test") == [test_event]
    # Any well-formed type filters, including ones the notifier sends on its own account.
    assert await list_ids(mclient, key, hook, event_type="webhook.disabled") == [notice]
    assert await list_ids(mclient, key, hook, event_type="video.started") == []
    # Bounds are exclusive, and any offset is honoured.
    after = isoformat(t0 + timedelta(minutes=2))
    assert await list_ids(mclient, key, hook, created_after=after) == [
        notice,
        new_failed,
        test_event,
        pending_failed_event,
    ]
    before = isoformat(t0 + timedelta(minutes=4))
    assert await list_ids(mclient, key, hook, created_before=before) == [pending_failed_event, ok, old_failed]
    # A sub-millisecond bound still selects exactly what lies strictly inside it.
    just_after = (t0 + timedelta(minutes=3, microseconds=1)).isoformat()
    assert await list_ids(mclient, key, hook, created_before=just_after) == [
        pending_failed_event,
        ok,
        old_failed,
    ]
    shifted = (t0 + timedelta(minutes=1, seconds=30)).astimezone(timezone(timedelta(hours=2))).isoformat()
    assert await list_ids(
        mclient,
        key,
        hook,
        created_after=shifted,
        created_before=isoformat(t0 + timedelta(minutes=5)),
        status="succeeded",
    ) == [test_event, ok]

    # Filters and the cursor work together.
    first = await (
        await mclient.get(
            f"/v1/webhooks/{hook}/deliveries",
            params={"status": "succeeded", "event_type": "webhook.test", "limit": "1"},
            headers=bearer(key),
        )
    ).json()
    assert [d["id"] for d in first["data"]] == [test_event] and first["next_cursor"] is None
    first = await (
        await mclient.get(
            f"/v1/webhooks/{hook}/deliveries",
            params={"status": "succeeded", "limit": "2"},
            headers=bearer(key),
        )
    ).json()
    assert [d["id"] for d in first["data"]] == [notice, test_event]
    second = await (
        await mclient.get(
            f"/v1/webhooks/{hook}/deliveries",
            params={"status": "succeeded", "limit": "2", "cursor": first["next_cursor"]},
            headers=bearer(key),
        )
    ).json()
    assert [d["id"] for d in second["data"]] == [ok]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"status": "bogus"}, "status"),
        ({"status": "FAILED"}, "status"),
        ({"event_type": "Video Completed!"}, "event_type"),
        ({"event_type": "video"}, "event_type"),
        ({"created_after": "yesterday"}, "created_after"),
        ({"created_before": "2026-13-01T00:00:00Z"}, "created_before"),
        ({"created_after": "2026-11-21T08:47:00"}, "created_after"),
        ({"created_after": "2026-11-21T08:47:00 02:00"}, "created_after"),
        (
            {"created_after": "2026-11-21T10:00:00Z", "created_before": "2026-11-21T09:00:00Z"},
            "created_after",
        ),
        ([("status", "failed"), ("status", "pending")], "status"),
        ({"limit": "0"}, "limit"),
        ({"limit": "101"}, "limit"),
        ({"cursor": "not-a-cursor"}, "cursor"),
        # A trailing newline once passed the event type check (re.match with $).
        ({"event_type": "video.completed\n"}, "event_type"),
    ],
)
async def test_list_rejects_bad_parameters_with_422(
    client: Client, key: str, params: dict[str, str] | list[tuple[str, str]], field: str
) -> None:
    hook = await create_webhook(client, key)
    response = await client.get(f"/v1/webhooks/{hook}/deliveries", params=params, headers=bearer(key))
    assert response.status == 422
    assert response.content_type == "application/problem+json"
    assert field in [e["field"] for e in (await response.json())["errors"]]


async def test_list_bounds_at_the_end_of_time_are_not_a_server_error(client: Client, key: str) -> None:
    # Rounding the upper bound up to the next millisecond overflowed past year 9999: a 500.
    hook = await create_webhook(client, key)
    for bound in ("9999-12-31T23:59:59.9999Z", "9999-12-31T23:59:59.999999+00:00"):
        response = await client.get(
            f"/v1/webhooks/{hook}/deliveries", params={"created_before": bound}, headers=bearer(key)
        )
        assert response.status == 200, await response.text()


async def test_list_of_an_unknown_webhook_is_404(client: Client, key: str) -> None:
    response = await client.get("/v1/webhooks/wh_doesnotexist/deliveries", headers=bearer(key))
    assert response.status == 404 and response.content_type == "application/problem+json"


# --- one delivery -------------------------------------------------------------------------------------------


async def test_get_shows_the_delivery_and_every_attempt(
    mclient: Client, key: str, store: Store, clock: ManualClock
) -> None:
    hook = await create_webhook(mclient, key)
    t0 = clock.now()
    attempts: list[Doc] = [
        {"at": t0, "status_code": 500, "latency_ms": 12.5, "error": "HTTP 500"},
        {"at": t0 + timedelta(seconds=5), "status_code": None, "latency_ms": 5000.1, "error": "timeout"},
    ]
    delivery_id = await add_delivery(store, hook, t0, status="failed", attempts=attempts)
    doc = await delivery(store, delivery_id)

    response = await mclient.get(f"/v1/deliveries/{delivery_id}", headers=bearer(key))
    assert response.status == 200
    assert await response.json() == {
        "id": delivery_id,
        "webhook_id": hook,
        "event_id": doc["event_id"],
        "event_type": "video.completed",
        "generation_id": doc["generation_id"],
        "status": "failed",
        "failure_reason": "retry schedule exhausted",
        "attempts": [
            {"at": isoformat(t0), "status_code": 500, "latency_ms": 12.5, "error": "HTTP 500"},
            {
                "at": isoformat(t0 + timedelta(seconds=5)),
                "status_code": None,
                "latency_ms": 5000.1,
                "error": "timeout",
            },
        ],
        "next_attempt_at": None,
        "created_at": isoformat(t0),
        "updated_at": isoformat(t0),
    }
    unknown = await mclient.get("/v1/deliveries/msg_doesnotexist", headers=bearer(key))
    assert unknown.status == 404 and unknown.content_type == "application/problem+json"


# --- retry --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("status", ["failed", "succeeded"])
async def test_retry_requeues_a_finished_delivery_now_and_keeps_its_history(
    mclient: Client, key: str, store: Store, clock: ManualClock, status: str
) -> None:
    hook = await create_webhook(mclient, key)
    attempts = [{"at": clock.now(), "status_code": 500, "latency_ms": 3.0, "error": "HTTP 500"}]
    delivery_id = await add_delivery(store, hook, clock.now(), status=status, attempts=attempts)
    clock.advance(timedelta(hours=3))

    response = await mclient.post(f"/v1/deliveries/{delivery_id}/retry", headers=bearer(key))
    assert response.status == 202
    body = await response.json()
    assert body["id"] == delivery_id and body["status"] == "pending" and body["failure_reason"] is None
    assert body["next_attempt_at"] == body["updated_at"] == isoformat(clock.now())
    assert len(body["attempts"]) == 1
    doc = await delivery(store, delivery_id)
    assert (doc["status"], doc["next_attempt_at"], doc["failure_reason"]) == ("pending", clock.now(), None)
    assert doc["retry_at"] == clock.now()  # in the retry backlog until it is sent
    assert doc["attempts"] == attempts


async def test_retry_of_a_pending_delivery_is_409_and_changes_nothing(
    mclient: Client, key: str, store: Store, clock: ManualClock
) -> None:
    hook = await create_webhook(mclient, key)
    delivery_id = await add_delivery(store, hook, clock.now(), status="pending")
    before = await delivery(store, delivery_id)
    clock.advance(timedelta(minutes=1))
    response = await mclient.post(f"/v1/deliveries/{delivery_id}/retry", headers=bearer(key))
    assert response.status == 409
    assert response.content_type == "application/problem+json"
    assert (await response.json())["type"] == "urn:videogen:problem:delivery-pending"
    assert await delivery(store, delivery_id) == before


@pytest.mark.parametrize(
    ("action", "slug"), [("disable", "endpoint-disabled"), ("delete", "endpoint-deleted")]
)
async def test_retry_to_a_disabled_or_deleted_endpoint_is_409(
    mclient: Client, key: str, store: Store, clock: ManualClock, action: str, slug: str
) -> None:
    hook = await create_webhook(mclient, key)
    delivery_id = await add_delivery(store, hook, clock.now(), status="failed")
    if action == "disable":
        await mclient.patch(f"/v1/webhooks/{hook}", json={"active": False}, headers=bearer(key))
    else:
        await mclient.delete(f"/v1/webhooks/{hook}", headers=bearer(key))
    before = await delivery(store, delivery_id)
    response = await mclient.post(f"/v1/deliveries/{delivery_id}/retry", headers=bearer(key))
    assert response.status == 409
    assert (await response.json())["type"] == f"urn:videogen:problem:{slug}"
    assert await delivery(store, delivery_id) == before


# --- recover ------------------------------------------------------------------------------------------------


async def test_recover_requeues_every_failed_delivery_of_the_endpoint_created_since(
    mclient: Client, key: str, store: Store, clock: ManualClock
) -> None:
    hook = await create_webhook(mclient, key)
    sibling = await create_webhook(mclient, key, url="https://example.test/sibling")
    t0 = clock.now()
    too_early = await add_delivery(store, hook, t0)
    at_since = await add_delivery(store, hook, t0 + timedelta(hours=1))
    later = await add_delivery(store, hook, t0 + timedelta(hours=2))
    succeeded = await add_delivery(store, hook, t0 + timedelta(hours=2), status="succeeded")
    pending = await add_delivery(store, hook, t0 + timedelta(hours=2), status="pending")
    other_endpoint = await add_delivery(store, sibling, t0 + timedelta(hours=2))
    clock.advance(timedelta(days=1))
    unchanged = {d: await delivery(store, d) for d in (too_early, succeeded, pending, other_endpoint)}

    response = await mclient.post(
        f"/v1/webhooks/{hook}/recover",
        json={"since": isoformat(t0 + timedelta(hours=1))},
        headers=bearer(key),
    )
    assert response.status == 202
    assert await response.json() == {"requeued": 2}
    for delivery_id in (at_since, later):
        doc = await delivery(store, delivery_id)
        assert (doc["status"], doc["next_attempt_at"], doc["retry_at"], doc["failure_reason"]) == (
            "pending",
            clock.now(),
            clock.now(),
            None,
        )
    for delivery_id, before in unchanged.items():
        assert await delivery(store, delivery_id) == before

    again = await mclient.post(
        f"/v1/webhooks/{hook}/recover",
        json={"since": isoformat(t0 + timedelta(hours=1))},
        headers=bearer(key),
    )
    assert await again.json() == {"requeued": 0}


async def test_recover_reaches_back_exactly_the_window_and_no_further(
    mclient: Client, key: str, store: Store, clock: ManualClock
) -> None:
    hook = await create_webhook(mclient, key)
    t0 = clock.now()
    clock.advance(timedelta(days=14))
    recovered = await mclient.post(
        f"/v1/webhooks/{hook}/recover", json={"since": isoformat(t0)}, headers=bearer(key)
    )
    assert recovered.status == 202
    too_old = await mclient.post(
        f"/v1/webhooks/{hook}/recover",
        json={"since": isoformat(t0 - timedelta(milliseconds=1))},
        headers=bearer(key),
    )
    assert too_old.status == 422
    assert (await too_old.json())["errors"][0] == {
        "field": "since",
        "message": "must be within the last 14 days",
        "code": "too_old",
    }


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"since": "future"}, "since"),
        ({"since": "ancient"}, "since"),
        ({"since": "last tuesday"}, "since"),
        ({"since": "2026-11-21T08:47:00"}, "since"),
        ({"since": 1767225600}, "since"),
        ({"since": None}, "since"),
        ({}, "since"),
        ({"since": "now", "status": "failed"}, "status"),
        ([], "body"),
    ],
)
async def test_recover_rejects_a_bad_since_with_422_and_requeues_nothing(
    mclient: Client, key: str, store: Store, clock: ManualClock, body: Any, field: str
) -> None:
    hook = await create_webhook(mclient, key)
    delivery_id = await add_delivery(store, hook, clock.now())
    before = await delivery(store, delivery_id)
    clock.advance(timedelta(hours=1))
    moments = {
        "future": clock.now() + timedelta(seconds=1),
        "ancient": clock.now() - timedelta(days=15),
        "now": clock.now(),
    }
    if isinstance(body, dict) and body.get("since") in moments:
        body = {**body, "since": isoformat(moments[body["since"]])}
    response = await mclient.post(
        f"/v1/webhooks/{hook}/recover",
        data=orjson.dumps(body),
        headers={**bearer(key), "Content-Type": "application/json"},
    )
    assert response.status == 422
    assert response.content_type == "application/problem+json"
    assert field in [e["field"] for e in (await response.json())["errors"]]
    assert await delivery(store, delivery_id) == before


async def test_recover_to_a_disabled_endpoint_is_409_and_requeues_nothing(
    mclient: Client, key: str, store: Store, clock: ManualClock
) -> None:
    hook = await create_webhook(mclient, key)
    delivery_id = await add_delivery(store, hook, clock.now())
    await mclient.patch(f"/v1/webhooks/{hook}", json={"active": False}, headers=bearer(key))
    before = await delivery(store, delivery_id)
    response = await mclient.post(
        f"/v1/webhooks/{hook}/recover", json={"since": isoformat(clock.now())}, headers=bearer(key)
    )
    assert response.status == 409
    assert (await response.json())["type"] == "urn:videogen:problem:endpoint-disabled"
    assert await delivery(store, delivery_id) == before


# --- tenancy ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path"), [("GET", "/v1/deliveries/{id}"), ("POST", "/v1/deliveries/{id}/retry")]
)
async def test_another_accounts_delivery_answers_like_an_unknown_one_and_is_untouched(
    client: Client, key: str, other_key: str, store: Store, method: str, path: str
) -> None:
    hook = await create_webhook(client, key)
    created = (await store.webhooks.find_one({"_id": hook}) or {})["created_at"]
    delivery_id = await add_delivery(store, hook, created, status="failed")
    before = await delivery(store, delivery_id)
    foreign = await client.request(method, path.format(id=delivery_id), headers=bearer(other_key))
    unknown = await client.request(method, path.format(id="msg_doesnotexist"), headers=bearer(other_key))
    assert foreign.status == unknown.status == 404
    assert foreign.content_type == unknown.content_type == "application/problem+json"
    assert (
        (await foreign.json())["type"] == (await unknown.json())["type"] == "urn:videogen:problem:not-found"
    )
    assert await delivery(store, delivery_id) == before
    # The owner still sees it.
    assert (await client.get(f"/v1/deliveries/{delivery_id}", headers=bearer(key))).status == 200


async def test_a_listing_holds_only_the_callers_deliveries_even_when_a_record_names_their_endpoint(
    client: Client, key: str, other_key: str, store: Store
) -> None:
    hook = await create_webhook(client, key)
    created = (await store.webhooks.find_one({"_id": hook}) or {})["created_at"]
    mine = await add_delivery(store, hook, created)
    # A record that names acme's endpoint but belongs to globex must never show up for acme.
    await add_delivery(store, hook, created, account_id="globex")
    assert await list_ids(client, key, hook) == [mine]
    assert (await client.get(f"/v1/webhooks/{hook}/deliveries", headers=bearer(other_key))).status == 404


# --- end to end, with the notifier's sweeper and a real receiver --------------------------------------------


def service_signatures(request: Received) -> list[str]:
    return request.headers["X-Service-Signature"].split(" ")


def standard_signature(secret: str, request: Received) -> str:
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = (
        f"{request.headers['webhook-id']}.{request.headers['webhook-timestamp']}.".encode() + request.body
    )
    return "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()


def hex_signature(secret: str, body: bytes) -> str:
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


# How long a test waits for the sweeper's send: a safety net on a loaded machine (a pass runs every second).
SENT_WITHIN_S = 30


@pytest.fixture
async def notifier(base_env: dict[str, str], store: Store) -> AsyncIterator[Dispatcher]:
    """The notifier's dispatcher, swept as its runtime sweeps it (every ``sweep_interval_seconds``, one
    second by default), sending over a plain session to receivers on 127.0.0.1; no retries after the first
    attempt; the endpoint read afresh for every attempt, so a change made through the API (a rotated
    secret) shows in the next delivery however soon it is sent."""
    settings = settings_for(NotifierSettings, base_env, webhook_retry_schedule="", endpoint_cache_seconds=0)
    async with aiohttp.ClientSession() as session:
        dispatcher = Dispatcher(
            settings=settings,
            store=store,
            sender=Sender(session, settings.delivery_timeout_seconds),
            clock=SystemClock(),
        )

        async def sweep_forever() -> None:
            while True:
                await dispatcher.sweep()
                await asyncio.sleep(settings.sweep_interval_seconds)

        sweeper = asyncio.create_task(sweep_forever())
        try:
            yield dispatcher
        finally:
            sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await sweeper
            await dispatcher.stop()


async def test_a_test_event_is_sent_signed_with_the_current_secret_and_after_rotation_with_both(
    client: Client, key: str, store: Store, notifier: Dispatcher
) -> None:
    async with receiving() as receiver:
        response = await client.post(
            "/v1/webhooks", json={**HOOK, "url": receiver.url()}, headers=bearer(key)
        )
        created = await response.json()
        first_secret = created["secret"]

        sent = await (await client.post(f"/v1/webhooks/{created['id']}/test", headers=bearer(key))).json()
        # Due at once: the sweeper (every second) sends it at its next pass, not after a retry's wait.
        assert sent["status"] == "pending" and sent["next_attempt_at"] == sent["created_at"]
        request = await receiver.request(1, timeout=SENT_WITHIN_S)
        assert request.headers["webhook-id"] == sent["id"]
        assert orjson.loads(request.body) == {
            "event": "webhook.test",
            "timestamp": sent["created_at"],
            "data": {"webhook_id": created["id"]},
        }
        assert service_signatures(request) == [hex_signature(first_secret, request.body)]
        assert request.headers["webhook-signature"] == standard_signature(first_secret, request)

        async def succeeded() -> bool:
            view = await (await client.get(f"/v1/deliveries/{sent['id']}", headers=bearer(key))).json()
            return bool(view["status"] == "succeeded")

        await eventually(succeeded)
        view = await (await client.get(f"/v1/deliveries/{sent['id']}", headers=bearer(key))).json()
        assert [a["status_code"] for a in view["attempts"]] == [200] and view["next_attempt_at"] is None

        rotated = await client.post(f"/v1/webhooks/{created['id']}/rotate-secret", headers=bearer(key))
        new_secret = (await rotated.json())["secret"]
        second = await (await client.post(f"/v1/webhooks/{created['id']}/test", headers=bearer(key))).json()
        request = await receiver.request(2, timeout=SENT_WITHIN_S)
        assert request.headers["webhook-id"] == second["id"]
        assert service_signatures(request) == [
            hex_signature(new_secret, request.body),
            hex_signature(first_secret, request.body),
        ]
        assert request.headers["webhook-signature"].split(" ") == [
            standard_signature(new_secret, request),
            standard_signature(first_secret, request),
        ]


async def test_a_retried_delivery_is_sent_again_with_the_same_webhook_id(
    client: Client, key: str, store: Store, notifier: Dispatcher
) -> None:
    async with receiving(replies(Reply(500))) as receiver:
        response = await client.post(
            "/v1/webhooks", json={**HOOK, "url": receiver.url()}, headers=bearer(key)
        )
        hook = (await response.json())["id"]
        sent = await (await client.post(f"/v1/webhooks/{hook}/test", headers=bearer(key))).json()
        await receiver.request(1, timeout=SENT_WITHIN_S)

        async def failed() -> bool:
            return bool((await delivery(store, sent["id"]))["status"] == "failed")

        await eventually(failed)  # the schedule is empty, so one 500 fails it
        retried = await client.post(f"/v1/deliveries/{sent['id']}/retry", headers=bearer(key))
        assert retried.status == 202
        again = await receiver.request(2, timeout=SENT_WITHIN_S)
        assert again.headers["webhook-id"] == sent["id"]
        assert again.body == (await receiver.request(1)).body

        async def succeeded() -> bool:
            return bool((await delivery(store, sent["id"]))["status"] == "succeeded")

        await eventually(succeeded)
        done = await delivery(store, sent["id"])
        assert [a["status_code"] for a in done["attempts"]] == [500, 200]
        assert "retry_at" not in done  # out of the retry backlog


async def test_a_recovered_delivery_is_sent_again(
    client: Client, key: str, store: Store, notifier: Dispatcher
) -> None:
    async with receiving(failing(1)) as receiver:
        response = await client.post(
            "/v1/webhooks", json={**HOOK, "url": receiver.url()}, headers=bearer(key)
        )
        hook = (await response.json())["id"]
        sent = await (await client.post(f"/v1/webhooks/{hook}/test", headers=bearer(key))).json()

        async def failed() -> bool:
            return bool((await delivery(store, sent["id"]))["status"] == "failed")

        await eventually(failed, SENT_WITHIN_S)  # sent at the sweeper's next pass, and answered 500
        recovered = await client.post(
            f"/v1/webhooks/{hook}/recover", json={"since": sent["created_at"]}, headers=bearer(key)
        )
        assert await recovered.json() == {"requeued": 1}
        assert (await receiver.request(2, timeout=SENT_WITHIN_S)).headers["webhook-id"] == sent["id"]
