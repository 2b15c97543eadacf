"""The ``events`` collection: each account's owed events (see ``videogen_common.event_types``), their listing,
and their outbox.

An event is inserted by the transaction that makes the change it reports (``videogen_common.outbox``), with
``outbox_at`` set: it is owed to the notifier. The notifier settles it (removes ``outbox_at``) once it has
recorded the event's deliveries; the orchestrator's reconciler puts on the events topic again every event
still owed a grace after it was last put there (``outbox_due``, ``republished``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

from pymongo import ASCENDING, DESCENDING, IndexModel
from pymongo.asynchronous.collection import AsyncCollection

from videogen_common.records.event import Event
from videogen_common.repositories.paging import Position, created_between, newest_first
from videogen_common.store import Session, Store, in_transaction

Doc = dict[str, Any]
T = TypeVar("T")

OUTBOX_AT = "outbox_at"
# The smallest datetime: ``outbox_at`` at or after it is any ``outbox_at`` (an indexed range, unlike $exists).
_EVER = datetime.min.replace(tzinfo=UTC)


def _newest_first_of(*keys: str) -> list[tuple[str, int]]:
    return [*((key, ASCENDING) for key in keys), ("created_at", DESCENDING), ("_id", DESCENDING)]


INDEXES: list[IndexModel] = [
    # One account's events newest first (GET /v1/events); _id breaks ties so the cursor is stable.
    IndexModel(_newest_first_of("account_id"), name="by_account"),
    # ... of one subject (?subject_id=), and of some types (?type=).
    IndexModel(_newest_first_of("account_id", "subject_id"), name="by_subject"),
    IndexModel(_newest_first_of("account_id", "type"), name="by_type"),
    # Events owed to the notifier, by when they were last put on the events topic. Sparse: a settled event
    # leaves it.
    IndexModel([(OUTBOX_AT, ASCENDING)], name="by_outbox_at", sparse=True),
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


async def record_with_change(
    store: Store, change: Callable[[Session], Awaitable[T | None]], event: Callable[[T], Event]
) -> tuple[T, Event] | None:
    """Make ``change`` and store the event it reports in one transaction (``store.in_transaction``): both, or
    neither. ``change`` makes its writes with the session it is given and answers what it changed (a record
    as the change left it), or None when its compare-and-set found the subject moved: then nothing is
    written, and this answers None. ``event`` makes the event from that answer; an owed one is stored with
    ``outbox_at`` set (a best-effort one is not stored). Answers what ``change`` answered, and the event."""
    events = EventRepository(store)

    async def work(session: Session) -> tuple[T, Event] | None:
        done = await change(session)
        if done is None:
            return None
        made = event(done)
        if made.owed:
            await events.insert(made, session)
        return done, made

    return await in_transaction(store, work)


class EventRepository:
    def __init__(self, store: Store) -> None:
        self._store = store

    @property
    def _events(self) -> AsyncCollection[Doc]:
        # Looked up at each use, so a store whose collections change (tests wrap them) is followed.
        return self._store.events

    async def insert(self, event: Event, session: Session | None = None) -> None:
        """Store a new event (in the transaction of ``session``, the change it reports). An id already
        stored raises ``DuplicateKeyError``: ids are derived from the change, so that is the same change
        twice."""
        await self._events.insert_one(event.to_doc(), session=session)

    # An account's events (the api).

    async def owned(self, event_id: str, account_id: str) -> Event | None:
        doc = await self._events.find_one({"_id": event_id, "account_id": account_id})
        return None if doc is None else Event.from_doc(doc)

    async def page_of_account(
        self, account_id: str, kept: EventFilter, position: Position | None, limit: int
    ) -> list[Event]:
        """Up to ``limit`` of the account's events that ``kept`` keeps, newest first, after ``position``."""
        docs = await newest_first(self._events, {"account_id": account_id, **kept.clause()}, position, limit)
        return [Event.from_doc(doc) for doc in docs]

    # The outbox.

    async def outbox_due(self, put_before: datetime, limit: int) -> AsyncIterator[Event]:
        """Events still owed to the notifier that were last put on the events topic before ``put_before``,
        longest owed first."""
        found = self._events.find({OUTBOX_AT: {"$lt": put_before}}).sort(OUTBOX_AT, ASCENDING).limit(limit)
        async for doc in found:
            yield Event.from_doc(doc)

    async def republished(self, event_id: str, now: datetime) -> None:
        """The event was put on the events topic again at ``now`` (if it is still owed)."""
        await self._events.update_one(
            {"_id": event_id, OUTBOX_AT: {"$exists": True}}, {"$set": {OUTBOX_AT: now}}
        )

    async def settle(self, event_ids: Sequence[str]) -> None:
        """The notifier recorded these events' deliveries: they are owed no more."""
        if event_ids:
            await self._events.update_many(
                {"_id": {"$in": list(event_ids)}, OUTBOX_AT: {"$exists": True}}, {"$unset": {OUTBOX_AT: ""}}
            )

    async def count_owed(self) -> int:
        """How many events are owed to the notifier (an indexed range of ``outbox_at``)."""
        return await self._events.count_documents({OUTBOX_AT: {"$gte": _EVER}})
