"""The ``events`` collection: each account's owed events, recorded by the notifier when it takes them in (or
by their maker, for a test event), and listed by the api (see ``videogen_common.event_types``). Recording is
idempotent: an event's id is derived from its change, so one taken in twice is recorded once."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from pymongo import ASCENDING, DESCENDING, IndexModel
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.errors import BulkWriteError

from videogen_common.records.event import Event
from videogen_common.repositories.paging import Position, created_between, merged, newest_first
from videogen_common.store import DUPLICATE_KEY, Store

Doc = dict[str, Any]


def _newest_first_of(*keys: str) -> list[tuple[str, int]]:
    return [*((key, ASCENDING) for key in keys), ("created_at", DESCENDING), ("_id", DESCENDING)]


# How long an event is kept (the event log, GET /v1/events): the retention sweeper removes older ones
# (``expire_before``) through ``by_created``.
KEPT = timedelta(days=90)

INDEXES: list[IndexModel] = [
    # One account's events newest first (GET /v1/events); _id breaks ties so the cursor is stable.
    IndexModel(_newest_first_of("account_id"), name="by_account"),
    # ... of one subject (?subject_id=), and of some types (?type=).
    IndexModel(_newest_first_of("account_id", "subject_id"), name="by_subject"),
    IndexModel(_newest_first_of("account_id", "type"), name="by_type"),
    # Its expiry: everything made before a moment (``expire_before``).
    IndexModel([("created_at", ASCENDING), ("_id", ASCENDING)], name="by_created"),
]


@dataclass(frozen=True)
class EventFilter:
    """What a listing of an account's events keeps: each given condition must hold (types: any of those
    listed; the subject by its id; created strictly between the bounds)."""

    types: Sequence[str] = ()
    subject_id: str | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None

    def clause(self) -> Doc:
        """As a store query; empty without conditions."""
        clause: Doc = created_between(self.created_after, self.created_before)
        if self.types:
            clause["type"] = self.types[0] if len(self.types) == 1 else {"$in": list(self.types)}
        if self.subject_id is not None:
            clause["subject_id"] = self.subject_id
        return clause


class EventRepository:
    def __init__(self, store: Store) -> None:
        self._store = store

    async def expire_before(self, cutoff: datetime) -> int:
        """Remove every event made before ``cutoff`` (a range of ``by_created``); returns how many."""
        removed = await self._store.events.delete_many({"created_at": {"$lt": cutoff}})
        return removed.deleted_count

    @property
    def _events(self) -> AsyncCollection[Doc]:
        # Looked up at each use, so a store whose collections change (tests wrap them) is followed.
        return self._store.events

    async def record(self, events: Sequence[Event]) -> None:
        """Record these events in one unordered batch; one recorded before (taken in again) is left as it
        is. Any other write error is raised."""
        if not events:
            return
        try:
            await self._events.insert_many([event.to_doc() for event in events], ordered=False)
        except BulkWriteError as exc:
            errors = exc.details.get("writeErrors", [])
            if any(e.get("code") != DUPLICATE_KEY for e in errors) or exc.details.get("writeConcernErrors"):
                raise

    async def erase_subject(self, account_id: str, subject_id: str, fields: Mapping[str, Any]) -> int:
        """Replace ``fields`` in the data of every recorded event of the subject (a deleted generation's):
        one command, on the ``by_subject`` index."""
        erased = await self._events.update_many(
            {"account_id": account_id, "subject_id": subject_id},
            {"$set": {f"data.{name}": value for name, value in fields.items()}},
        )
        return erased.modified_count

    # An account's events (the api).

    async def owned(self, event_id: str, account_id: str) -> Event | None:
        doc = await self._events.find_one({"_id": event_id, "account_id": account_id})
        return None if doc is None else Event.from_doc(doc)

    async def page_of_account(
        self, account_id: str, kept: EventFilter, position: Position | None, limit: int
    ) -> list[Event]:
        """Up to ``limit`` of the account's events that ``kept`` keeps, newest first, after ``position``:
        read window by window (``paging``) of ``by_subject`` when a subject is asked for (the types then
        checked on what it returns), else of ``by_type`` for each type asked for (the pages merged), else of
        ``by_account``."""
        created = created_between(kept.created_after, kept.created_before)
        base = {"account_id": account_id}
        if kept.subject_id is not None:
            types = set(kept.types)
            docs = await newest_first(
                self._events,
                {**base, "subject_id": kept.subject_id, **created},
                position,
                limit,
                keep=(lambda doc: doc["type"] in types) if types else None,
                reads=("type",),
            )
        elif kept.types:
            pages = [
                await newest_first(self._events, {**base, "type": kind, **created}, position, limit)
                for kind in dict.fromkeys(kept.types)
            ]
            docs = merged(pages, limit)
        else:
            docs = await newest_first(self._events, {**base, **created}, position, limit)
        return [Event.from_doc(doc) for doc in docs]
