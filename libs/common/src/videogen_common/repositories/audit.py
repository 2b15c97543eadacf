"""The ``audit_events`` collection: each account's audit trail (see ``videogen_common.audit``)."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from pymongo import ASCENDING, DESCENDING, IndexModel
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.errors import DuplicateKeyError

from videogen_common.records.audit_event import AuditEvent
from videogen_common.repositories.paging import Position, newest_first
from videogen_common.store import Store

Doc = dict[str, Any]

# One account's audit trail newest first (GET /v1/audit-events); _id breaks ties so the cursor is stable.
INDEXES: list[IndexModel] = [
    IndexModel(
        [("account_id", ASCENDING), ("created_at", DESCENDING), ("_id", DESCENDING)], name="by_account"
    ),
]


class AuditRepository:
    def __init__(self, store: Store) -> None:
        self._store = store

    @property
    def _events(self) -> AsyncCollection[Doc]:
        # Looked up at each use, so a store whose collections change (tests wrap them) is followed.
        return self._store.audit_events

    async def record(self, event: AuditEvent) -> None:
        """Store ``event``; one already stored under its id (a repeated repair) is left as it is."""
        with contextlib.suppress(DuplicateKeyError):
            await self._events.insert_one(event.to_doc())

    async def page_of_account(
        self, account_id: str, filters: Mapping[str, Any], position: Position | None, limit: int
    ) -> list[AuditEvent]:
        """Up to ``limit`` of the account's events matching ``filters`` (a store clause on type, target.id and
        created_at), newest first, after ``position``."""
        docs = await newest_first(self._events, {"account_id": account_id, **filters}, position, limit)
        return [AuditEvent.from_doc(doc) for doc in docs]
