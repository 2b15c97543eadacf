"""The outboxes: the events that documents of the source collections (``EventTypes.sources``: the
generations, the webhooks, ...) owe the notifier, carried in their ``outbox`` since the write that made the
change each reports (``videogen_common.outbox``). The reconciler finds those due to be put on the events topic
again; the notifier settles those it has taken in. Every query is on the sparse ``outbox_at`` index each
source collection has, or by id."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime
from typing import Any

from pymongo.asynchronous.collection import AsyncCollection

from videogen_common.event_types import EVENT_TYPES
from videogen_common.outbox import OUTBOX, OUTBOX_AT
from videogen_common.records.event import Event
from videogen_common.store import Store

Doc = dict[str, Any]

# The smallest datetime: ``outbox_at`` at or after it is any ``outbox_at`` (an indexed range, unlike $exists).
_EVER = datetime.min.replace(tzinfo=UTC)


class OutboxRepository:
    def __init__(self, store: Store) -> None:
        self._store = store

    def _source(self, name: str) -> AsyncCollection[Doc]:
        return self._store.db[name]

    async def due(self, put_before: datetime, limit: int) -> AsyncIterator[Event]:
        """The events owed by documents whose events were last put on the topic before ``put_before``, those
        owed longest first, up to ``limit`` documents per source collection."""
        for source in EVENT_TYPES.sources():
            found = (
                self._source(source)
                .find({OUTBOX_AT: {"$lt": put_before}}, projection={OUTBOX: 1})
                .sort(OUTBOX_AT, 1)
                .limit(limit)
            )
            async for doc in found:
                for owed in doc.get(OUTBOX) or ():
                    yield Event.from_doc(owed, source=source, carrier_id=doc["_id"])

    async def republished(self, event: Event, now: datetime) -> None:
        """The event was put on the topic again at ``now``: its document's next republish waits a grace."""
        if event.source is not None and event.carrier_id is not None:
            await self._source(event.source).update_one(
                {"_id": event.carrier_id, f"{OUTBOX}._id": event.id}, {"$set": {OUTBOX_AT: now}}
            )

    async def settle(self, events: Sequence[Event]) -> None:
        """The notifier recorded these events and their deliveries: each leaves the outbox of its document,
        and a document owing nothing more leaves the index. Two commands per source collection, however many
        events (an event's id is its own, so pulling all of them from each of their documents pulls each from
        its own)."""
        by_source: defaultdict[str, tuple[set[str], list[str]]] = defaultdict(lambda: (set(), []))
        for event in events:
            if event.owed and event.source is not None and event.carrier_id is not None:
                documents, ids = by_source[event.source]
                documents.add(event.carrier_id)
                ids.append(event.id)
        for source, (documents, ids) in by_source.items():
            collection = self._source(source)
            owing = {"_id": {"$in": list(documents)}}
            await collection.update_many(owing, {"$pull": {OUTBOX: {"_id": {"$in": ids}}}})
            await collection.update_many(
                {**owing, OUTBOX: {"$size": 0}}, {"$unset": {OUTBOX: "", OUTBOX_AT: ""}}
            )

    async def count_owed(self) -> int:
        """How many documents owe events (an indexed range of ``outbox_at`` per source collection)."""
        return sum(
            [
                await self._source(source).count_documents({OUTBOX_AT: {"$gte": _EVER}})
                for source in EVENT_TYPES.sources()
            ]
        )
