"""Adding an event type is its definition, a change whose write carries the event (``outbox.owing``), and a
``publish``: a type made up here, in the test, is recorded, listed at ``GET /v1/events`` and delivered,
signed, to the endpoint that subscribed to it, by a notifier process started from its own entry point, whose
code has never heard of the type, and the document that carried it owes it no more.

The api runs in the test's process (its catalog holds the type while the test defines it: subscriptions and
the listing read it); the notifier runs as the deployed process does, knowing no type at all."""

from __future__ import annotations

import asyncio
from pathlib import Path

import orjson
import pytest

from tests.support.api import api_client, bearer
from tests.support.env import settings_for
from tests.support.pipeline import Receiver, verify
from tests.support.stack import ACCOUNT, running_stack
from tests.support.waiting import eventually
from videogen_api import state
from videogen_api.settings import ApiSettings
from videogen_common.clock import SystemClock
from videogen_common.deliveries import delivery_id
from videogen_common.event_types import EVENT_TYPES, Account, EventType, SubjectType
from videogen_common.outbox import owing, publish
from videogen_common.settings import CommonSettings
from videogen_common.store import Store

pytestmark = pytest.mark.e2e

# A kind of event nothing in the services defines: the account's own, with data of its own, made by changes
# to a collection of the test's own (one document per account).
PINGS = "pings"
PINGED: EventType[Account] = EventType(
    "account.pinged",
    owed=True,
    subject=SubjectType.ACCOUNT,
    description="Made up by a test: the account was pinged.",
    data=lambda account: {"id": account.account_id, **(account.details or {})},
    source=PINGS,
)


async def test_a_type_made_up_here_is_stored_listed_and_delivered_signed_by_a_notifier_that_never_knew_it(
    base_env: dict[str, str],
    common_settings: CommonSettings,
    store: Store,
    tmp_path: Path,
    receiver: Receiver,
) -> None:
    with EVENT_TYPES.defined(PINGED):
        async with (
            running_stack(
                base_env, common_settings, store, tmp_path / "logs", services=["notifier"]
            ) as stack,
            # Room for a slow broker's answer to the test's publish (2 s by default) on a loaded machine.
            api_client(settings_for(ApiSettings, base_env, api_port=0, publish_timeout_seconds=30)) as api,
        ):
            key = stack.key
            # The api takes a subscription to the new type: the catalog is read when the body is checked.
            response = await api.post(
                "/v1/webhooks", json={"url": receiver.url, "events": [PINGED.name]}, headers=bearer(key)
            )
            assert response.status == 201, await response.text()
            hook = await response.json()
            elsewhere = await api.post(
                "/v1/webhooks",
                json={"url": receiver.url + "/other", "events": ["video.completed"]},
                headers=bearer(key),
            )
            assert elsewhere.status == 201
            document = await (await api.get("/openapi.json")).json()
            assert PINGED.name in document["components"]["schemas"]["EventType"]["enum"]

            # The change, its write carrying the event, then the event published, as a new kind does it.
            publisher = api.app[state.PUBLISHER]
            await eventually(lambda: _true(publisher.started), what="the api's producer reached the broker")
            now = SystemClock().now()
            event = PINGED.event(Account(ACCOUNT, {"note": "hello"}), change="pinged_1", at=now)
            change = {"$set": {"last_pinged_at": now}, "$inc": {"pings": 1}}
            await store.db[PINGS].update_one({"_id": ACCOUNT}, owing(change, event), upsert=True)
            assert await publish(publisher, event)
            assert event.id == f"evt_{ACCOUNT}_pinged_1" and event.owed

            # Delivered by the notifier process, signed, to the endpoint subscribed, under its webhook-id.
            headers, body = await asyncio.wait_for(receiver.expect(ACCOUNT), 60)
            verify(hook["secret"], headers, body)
            payload = orjson.loads(body)
            assert payload == {
                "event": PINGED.name,
                "timestamp": event.timestamp,
                "data": {"id": ACCOUNT, "note": "hello"},
            }
            assert headers["webhook-id"] == delivery_id(event.id, hook["id"])

            # Recorded, and settled once the notifier recorded its one delivery (the other endpoint did not
            # subscribe to it): the document that carried it owes it no more.
            async def settled() -> bool:
                doc = await store.db[PINGS].find_one({"_id": ACCOUNT})
                return doc is not None and "outbox" not in doc and doc["pings"] == 1

            await eventually(settled, timeout=30, what="the notifier settled the event")
            assert await store.deliveries.count_documents({"event_id": event.id}) == 1
            assert await store.events.count_documents({"_id": event.id}) == 1

            # Listed, and read, like any other event.
            page = await (await api.get(f"/v1/events?type={PINGED.name}", headers=bearer(key))).json()
            expected = {
                "id": event.id,
                "type": PINGED.name,
                "subject": {"type": "account", "id": ACCOUNT},
                "data": {"id": ACCOUNT, "note": "hello"},
                "created_at": event.timestamp,
            }
            assert page == {"data": [expected], "next_cursor": None}
            assert await (await api.get(f"/v1/events/{event.id}", headers=bearer(key))).json() == expected
    assert EVENT_TYPES.get(PINGED.name) is None  # defined for the test only


async def _true(value: bool) -> bool:
    return value
