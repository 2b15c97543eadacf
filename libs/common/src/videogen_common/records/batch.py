"""A batch (``BatchRecord``): many generations accepted in one request (``POST /v1/batches``), watched as one
object. Its items are ordinary generations carrying its id (``batch_id``); the batch document keeps what is
cheap to read as they end: a counter per outcome (``$inc``'d by ``videogen_common.endings`` in the ending's
wake), the cost they came to, and once every item has ended, its own end (``completed`` or ``canceled``) and
the ``batch.completed`` event that end owes, carried in its outbox like every owed event."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from videogen_common.clock import isoformat

Doc = dict[str, Any]

# validating: the batch document is written, its items are being written; in_progress: every item is in;
# canceling: a cancel was asked while items still run; completed / canceled: every item has ended; failed: the
# api stopped before any item was written, and the reconciler gave up on it (``endings.settle_validating``).
VALIDATING = "validating"
IN_PROGRESS = "in_progress"
COMPLETED = "completed"
CANCELING = "canceling"
CANCELED = "canceled"
FAILED = "failed"
STATUSES = (VALIDATING, IN_PROGRESS, COMPLETED, CANCELING, CANCELED, FAILED)
FINISHED = (COMPLETED, CANCELED, FAILED)

# What a batch with invalid items does: refuse it whole (422), or skip them (accepted with the valid ones, the
# refusals recorded on the batch).
ON_INVALID = ("refuse", "skip")

# How an item ended, each counted on the batch (``ended`` is their sum).
OUTCOMES = ("completed", "failed", "canceled")
# The counts a batch shows, by its items' states.
COUNT_NAMES = ("queued", "processing", "completed", "failed", "canceled")

# Internal fields of a batch document, never shown.
INTERNAL = ("idem", "idem_hash", "hold", "outbox", "outbox_at")


@dataclass(frozen=True, slots=True)
class BatchRecord:
    """A batch as stored. ``total``: the items accepted; ``ended``: those finished, by outcome in
    ``outcomes``; ``refused``: the items refused at acceptance (``on_invalid: skip``), each with its index,
    ``custom_id`` and errors."""

    id: str
    account_id: str
    status: str
    created_at: datetime
    updated_at: datetime
    total: int
    item_events: bool = True
    metadata: Mapping[str, str] = field(default_factory=dict)
    ended: int = 0
    outcomes: Mapping[str, int] = field(default_factory=dict)
    refused: Sequence[Mapping[str, Any]] = ()
    estimated_cost: float | None = None
    cost: float = 0.0
    finished_at: datetime | None = None
    api_key_id: str | None = None
    # The counters its items' seconds and cost were reserved on, and the day (``budgets.Hold`` without the
    # charge: each item's share is its own charge).
    hold: Mapping[str, Any] | None = None
    idem: str | None = None
    idem_hash: str | None = None
    # What went wrong while it was accepted (``{code, message}``): set by the reconciler on a batch the api
    # left ``validating`` (``endings.settle_validating``); None for every batch accepted whole.
    error: Mapping[str, str] | None = None

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any]) -> BatchRecord:
        return cls(
            id=doc["_id"],
            account_id=doc["account_id"],
            status=doc["status"],
            created_at=doc["created_at"],
            updated_at=doc["updated_at"],
            total=int(doc["total"]),
            item_events=bool(doc.get("item_events", True)),
            metadata=dict(doc.get("metadata") or {}),
            ended=int(doc.get("ended") or 0),
            outcomes={name: int((doc.get("outcomes") or {}).get(name) or 0) for name in OUTCOMES},
            refused=list(doc.get("refused") or []),
            estimated_cost=doc.get("estimated_cost"),
            cost=float(doc.get("cost") or 0.0),
            finished_at=doc.get("finished_at"),
            api_key_id=doc.get("api_key_id"),
            hold=doc.get("hold"),
            idem=doc.get("idem"),
            idem_hash=doc.get("idem_hash"),
            error=doc.get("error"),
        )

    def to_doc(self) -> Doc:
        doc: Doc = {
            "_id": self.id,
            "account_id": self.account_id,
            "status": self.status,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "total": self.total,
            "item_events": self.item_events,
            "metadata": dict(self.metadata),
            "ended": self.ended,
            "outcomes": {name: int(self.outcomes.get(name, 0)) for name in OUTCOMES},
            "refused": [dict(r) for r in self.refused],
            "estimated_cost": self.estimated_cost,
            "cost": self.cost,
            "finished_at": self.finished_at,
            "error": dict(self.error) if self.error is not None else None,
        }
        for name in ("api_key_id", "hold", "idem", "idem_hash"):
            if (value := getattr(self, name)) is not None:
                doc[name] = value
        return doc

    @property
    def finished(self) -> bool:
        return self.status in FINISHED

    def public_view(self, queued: int = 0) -> Doc:
        """What clients see. ``queued``: how many of its unfinished items wait explicitly (``status``
        queued; counted by the caller, the only count not kept on the document)."""
        unfinished = max(0, self.total - self.ended)
        queued = min(queued, unfinished)
        counts = {
            "total": self.total,
            "queued": queued,
            "processing": unfinished - queued,
            **{name: int(self.outcomes.get(name, 0)) for name in OUTCOMES},
        }
        return {
            "id": self.id,
            "object": "batch",
            "status": self.status,
            "counts": counts,
            "refused": [dict(r) for r in self.refused],
            "item_events": self.item_events,
            "metadata": dict(self.metadata),
            "estimated_cost": self.estimated_cost,
            "cost": round(self.cost, 6),
            "created_at": isoformat(self.created_at),
            "finished_at": isoformat(self.finished_at) if self.finished_at is not None else None,
            "error": dict(self.error) if self.error is not None else None,
        }
