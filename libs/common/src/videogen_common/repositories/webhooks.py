"""The ``webhooks`` collection: every query and compare-and-set on webhook endpoints, for the api (an
account's endpoints, their changes and secrets) and the notifier (reading an endpoint, its health, disabling
it, the endpoints an event goes to, the gauges).

Query shapes and the embedded store: the notifier finds the endpoints an event goes to by account alone
(``subscribers_of``), which ``by_account`` answers; on MongoDB 7 the query would also say ``active: true`` and
``events: <type>``, but the embedded store scans every webhook for a condition on another field beside the
indexed one, so those are checked here, after the read. A failure is counted with findAndModify on MongoDB
and, on the embedded store, which serves findAndModify with a scan, with an update and a read by id
(``record_failure``, chosen by ``Store.engine()``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from pymongo import ASCENDING, IndexModel, ReturnDocument
from pymongo.asynchronous.collection import AsyncCollection

from videogen_common.outbox import OUTBOX_INDEX, owing
from videogen_common.records.event import Event
from videogen_common.records.webhook import Health, Secret, WebhookEndpoint
from videogen_common.store import Engine, Store

Doc = dict[str, Any]

INDEXES: list[IndexModel] = [
    IndexModel([("account_id", ASCENDING), ("created_at", ASCENDING)], name="by_account"),
    # Endpoints owing their webhook.disabled event (videogen_common.outbox).
    OUTBOX_INDEX,
]

# What the notifier reads of an account's endpoints to route an event.
SUBSCRIPTION_FIELDS = {"_id": 1, "events": 1, "active": 1}


def by_account_only(account_id: str) -> Doc:
    """The query for an account's endpoints when routing: the account alone, which ``by_account`` answers.
    MongoDB 7 would take ``active`` and ``events`` in the query too; the embedded store would scan every
    webhook for them, so ``subscribers_of`` checks them after the read."""
    return {"account_id": account_id}


class WebhookRepository:
    def __init__(self, store: Store) -> None:
        self._store = store

    @property
    def _webhooks(self) -> AsyncCollection[Doc]:
        # Looked up at each use, so a store whose collections change (tests wrap them) is followed.
        return self._store.webhooks

    # An account's endpoints (the api).

    async def count_of_account(self, account_id: str) -> int:
        return await self._webhooks.count_documents({"account_id": account_id})

    async def insert(self, endpoint: WebhookEndpoint) -> None:
        await self._webhooks.insert_one(endpoint.to_doc())

    async def owned(self, webhook_id: str, account_id: str) -> WebhookEndpoint | None:
        doc = await self._webhooks.find_one({"_id": webhook_id, "account_id": account_id})
        return None if doc is None else WebhookEndpoint.from_doc(doc)

    async def of_account(self, account_id: str) -> list[WebhookEndpoint]:
        """The account's endpoints, oldest first."""
        found = self._webhooks.find({"account_id": account_id})
        docs = await found.sort([("created_at", ASCENDING), ("_id", ASCENDING)]).to_list(None)
        return [WebhookEndpoint.from_doc(doc) for doc in docs]

    async def change_settings(
        self,
        current: WebhookEndpoint,
        now: datetime,
        *,
        url: str | None = None,
        events: Sequence[str] | None = None,
        active: bool | None = None,
        disabled_reason: str = "disabled",
    ) -> WebhookEndpoint | None:
        """Change the url, events or active state of an endpoint read as ``current`` (None: left as it is);
        the endpoint as it then is, or None if it is gone. Enabling a disabled endpoint starts its health
        afresh (the notifier's run of failures, so its circuit breaker) and forgets why and when it was
        disabled. Disabling an active one records ``disabled_reason`` and when."""
        changes: Doc = {"updated_at": now}
        removals: list[str] = []
        if url is not None:
            changes["url"] = url
        if events is not None:
            changes["events"] = list(events)
        if active is True and not current.active:
            changes["active"] = True
            removals = ["health", "disabled_reason", "disabled_at"]
        elif active is False and current.active:
            changes.update(active=False, disabled_reason=disabled_reason, disabled_at=now)
        return await self._change(current.id, current.account_id, changes, removals)

    async def _change(
        self, webhook_id: str, account_id: str, changes: Doc, removals: Iterable[str] = ()
    ) -> WebhookEndpoint | None:
        """Set ``changes`` (field names of the document) and remove the fields ``removals`` on the
        account's endpoint; the endpoint as it then is, or None if it is gone."""
        update: Doc = {"$set": changes}
        if unset := dict.fromkeys(removals, ""):
            update["$unset"] = unset
        doc = await self._webhooks.find_one_and_update(
            {"_id": webhook_id, "account_id": account_id}, update, return_document=ReturnDocument.AFTER
        )
        return None if doc is None else WebhookEndpoint.from_doc(doc)

    async def delete_owned(self, webhook_id: str, account_id: str) -> bool:
        deleted = await self._webhooks.delete_one({"_id": webhook_id, "account_id": account_id})
        return deleted.deleted_count == 1

    async def replace_secrets(
        self,
        webhook_id: str,
        account_id: str,
        current: str | None,
        secrets: Sequence[Secret],
        now: datetime,
    ) -> bool:
        """Compare-and-set on the current secret (``current``, the first of the list): a concurrent
        rotation is never silently overwritten. Whether the secrets were replaced."""
        result = await self._webhooks.update_one(
            {"_id": webhook_id, "account_id": account_id, "secrets.0.secret": current},
            {"$set": {"secrets": [s.to_doc() for s in secrets], "updated_at": now}},
        )
        return result.modified_count == 1

    # The notifier.

    async def get(self, webhook_id: str) -> WebhookEndpoint | None:
        doc = await self._webhooks.find_one({"_id": webhook_id})
        return None if doc is None else WebhookEndpoint.from_doc(doc)

    async def subscribers_of(self, account_id: str) -> dict[str, tuple[str, ...]]:
        """The account's active endpoints: each one's id and the events it subscribes to, oldest first, read
        by the account alone (``by_account_only``)."""
        found = self._webhooks.find(by_account_only(account_id), projection=SUBSCRIPTION_FIELDS)
        return {
            endpoint["_id"]: tuple(endpoint.get("events", ()))
            async for endpoint in found
            if endpoint.get("active") is True
        }

    async def record_success(self, webhook_id: str, now: datetime) -> None:
        await self._webhooks.update_one(
            {"_id": webhook_id},
            {
                "$set": {
                    "health.consecutive_failures": 0,
                    "health.failing_since": None,
                    "health.last_success_at": now,
                }
            },
        )

    async def record_failure(self, webhook_id: str, now: datetime) -> Health:
        """Count one more failure and return the health it leaves. One atomic update, so concurrent attempts
        (from this lane or another instance) neither lose a count nor move ``failing_since`` later. On MongoDB
        one findAndModify; on the embedded store, which would scan every webhook for it, the update and then a
        read by id, which may already include failures counted since: the count only grows until a success."""
        update: list[Doc] = [
            {
                "$set": {
                    "health.consecutive_failures": {
                        "$add": [{"$ifNull": ["$health.consecutive_failures", 0]}, 1]
                    },
                    "health.failing_since": {"$ifNull": ["$health.failing_since", now]},
                    "health.last_failure_at": now,
                }
            }
        ]
        if await self._store.engine() is Engine.MONGODB:
            doc = await self._webhooks.find_one_and_update(
                {"_id": webhook_id}, update, projection={"health": 1}, return_document=ReturnDocument.AFTER
            )
            return Health.of(doc or {})
        await self._webhooks.update_one({"_id": webhook_id}, update)
        doc = await self._webhooks.find_one({"_id": webhook_id}, projection={"health": 1})
        return Health.of(doc or {})

    async def disable(self, webhook_id: str, reason: str, now: datetime, owes: Event) -> bool:
        """Disable an endpoint that is still active, owing ``owes`` (its ``webhook.disabled`` event) by the
        same write (``videogen_common.outbox``); whether this call disabled it (one already disabled, by
        another instance or its owner, is left alone)."""
        update = {"$set": {"active": False, "disabled_reason": reason, "disabled_at": now, "updated_at": now}}
        result = await self._webhooks.update_one({"_id": webhook_id, "active": True}, owing(update, owes))
        return result.modified_count == 1

    # The notifier's gauges, store-wide.

    async def count_failing(self) -> int:
        return await self._webhooks.count_documents({"active": True, "health.failing_since": {"$ne": None}})

    async def count_circuit_open(self, now: datetime, failures: int, cooldown: timedelta) -> int:
        return await self._webhooks.count_documents(
            {
                "active": True,
                "health.consecutive_failures": {"$gte": failures},
                "health.last_failure_at": {"$gt": now - cooldown},
            }
        )

    async def count_disabled(self) -> int:
        return await self._webhooks.count_documents({"active": False})
