"""The ``audit_events`` collection: each account's audit trail (see ``videogen_common.audit``)."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from pymongo import ASCENDING, DESCENDING, IndexModel
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.errors import DuplicateKeyError

from videogen_common.records.audit_event import AuditEvent
from videogen_common.repositories.paging import Position, created_between, newest_first
from videogen_common.store import Store

Doc = dict[str, Any]

# How long the audit trail is kept (a year, and a month's margin): the retention sweeper removes older entries
# (``expire_before``) through ``by_created``.
KEPT = timedelta(days=400)

# One account's audit trail newest first (GET /v1/audit-events); _id breaks ties so the cursor is stable.
INDEXES: list[IndexModel] = [
    IndexModel(
        [("account_id", ASCENDING), ("created_at", DESCENDING), ("_id", DESCENDING)], name="by_account"
    ),
    # Its expiry: everything made before a moment (``expire_before``).
    IndexModel([("created_at", ASCENDING), ("_id", ASCENDING)], name="by_created"),
]


@dataclass(frozen=True)
class AuditFilter:
    """What a listing of an account's audit events keeps: each given condition must hold (types: any of
    those listed; the target by its id; created strictly between the bounds)."""

    types: Sequence[str] = ()
    target_id: str | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None

    def clause(self) -> Doc:
        """As a store query; empty without conditions."""
        clause: Doc = created_between(self.created_after, self.created_before)
        if self.types:
            clause["type"] = {"$in": list(self.types)}
        if self.target_id is not None:
            clause["target.id"] = self.target_id
        return clause


class AuditRepository:
    def __init__(self, store: Store) -> None:
        self._store = store

    async def expire_before(self, cutoff: datetime) -> int:
        """Remove every audit event made before ``cutoff`` (a range of ``by_created``); returns how many."""
        removed = await self._store.audit_events.delete_many({"created_at": {"$lt": cutoff}})
        return removed.deleted_count

    @property
    def _events(self) -> AsyncCollection[Doc]:
        # Looked up at each use, so a store whose collections change (tests wrap them) is followed.
        return self._store.audit_events

    async def record(self, event: AuditEvent) -> None:
        """Store ``event``; one already stored under its id (a repeated repair) is left as it is."""
        with contextlib.suppress(DuplicateKeyError):
            await self._events.insert_one(event.to_doc())

    async def page_of_account(
        self, account_id: str, kept: AuditFilter, position: Position | None, limit: int
    ) -> list[AuditEvent]:
        """Up to ``limit`` of the account's events that ``kept`` keeps, newest first, after ``position``:
        read window by window of ``by_account`` (``paging``), the types and the target checked on what each
        window returns."""
        types = set(kept.types)

        def keep(doc: Doc) -> bool:
            if types and doc.get("type") not in types:
                return False
            return kept.target_id is None or (doc.get("target") or {}).get("id") == kept.target_id

        query = {"account_id": account_id, **created_between(kept.created_after, kept.created_before)}
        filtered = bool(types) or kept.target_id is not None
        docs = await newest_first(
            self._events, query, position, limit, keep=keep if filtered else None, reads=("type", "target")
        )
        return [AuditEvent.from_doc(doc) for doc in docs]
