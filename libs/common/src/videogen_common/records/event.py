"""An event (``Event``): something that happened on an account, as the webhooks deliver it. See
``videogen_common.event_types`` for every kind of event and ``videogen_common.outbox`` for how one is carried
by the write that makes the change it reports and reaches the notifier."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from videogen_common.clock import isoformat

Doc = dict[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """An event as recorded (document ``events``, ``_id`` its id), as carried in the ``outbox`` of the
    document whose change made it, and as put on the events topic. Only owed events are recorded; a
    best-effort one (``owed`` False) lives only on the topic."""

    id: str
    type: str  # an event type's name (``event_types``)
    account_id: str
    # What it is about: a generation, a webhook endpoint, the account itself (``SubjectType``), and its id.
    subject_type: str
    subject_id: str
    # The ``data`` of every delivery of the event, exactly as delivered.
    data: Mapping[str, Any]
    # When the change it reports happened: the ``timestamp`` of its deliveries.
    created_at: datetime
    trace_id: str | None = None
    traceparent: str | None = None
    owed: bool = True
    # The collection whose document carries the event in its ``outbox`` until the notifier has taken it in
    # (``videogen_common.outbox``), and that document's id (the subject's own document, unless said);
    # None for an event recorded by its maker directly, or never recorded.
    source: str | None = None
    carrier_id: str | None = None

    @classmethod
    def from_doc(cls, doc: Doc, *, source: str | None = None, carrier_id: str | None = None) -> Event:
        """From a recorded event, or from an ``outbox`` entry of the document ``carrier_id`` of ``source``."""
        return cls(
            id=doc["_id"],
            type=doc["type"],
            account_id=doc["account_id"],
            subject_type=doc["subject_type"],
            subject_id=doc["subject_id"],
            data=doc["data"],
            created_at=doc["created_at"],
            trace_id=doc.get("trace_id"),
            traceparent=doc.get("traceparent"),
            source=source,
            carrier_id=carrier_id,
        )

    def to_doc(self) -> Doc:
        return {
            "_id": self.id,
            "type": self.type,
            "account_id": self.account_id,
            "subject_type": self.subject_type,
            "subject_id": self.subject_id,
            "data": dict(self.data),
            "created_at": self.created_at,
            "trace_id": self.trace_id,
            "traceparent": self.traceparent,
        }

    @property
    def timestamp(self) -> str:
        """``created_at`` as its deliveries carry it: ISO 8601 UTC with milliseconds."""
        return isoformat(self.created_at)

    def public_view(self) -> Doc:
        """What the account sees (GET /v1/events): what happened, to what, and the data its webhooks carry."""
        return {
            "id": self.id,
            "type": self.type,
            "subject": {"type": self.subject_type, "id": self.subject_id},
            "data": dict(self.data),
            "created_at": self.timestamp,
        }
