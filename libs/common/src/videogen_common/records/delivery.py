"""A webhook delivery (``Delivery``): one (event, endpoint) pair, its exact body, its state and every attempt
made (``Attempt``). See ``videogen_common.deliveries`` for what a delivery is and how its id is derived."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

Doc = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Attempt:
    """One attempt to send a delivery: when, and what came of it (a status, or an error such as a timeout)."""

    at: datetime
    status_code: int | None = None
    latency_ms: float | None = None
    error: str | None = None

    @classmethod
    def from_doc(cls, doc: Doc) -> Attempt:
        return cls(
            at=doc["at"],
            status_code=doc.get("status_code"),
            latency_ms=doc.get("latency_ms"),
            error=doc.get("error"),
        )

    def to_doc(self) -> Doc:
        return {
            "at": self.at,
            "status_code": self.status_code,
            "latency_ms": self.latency_ms,
            "error": self.error,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Delivery:
    """A delivery as stored (document ``deliveries``, ``_id`` its id)."""

    id: str
    event_id: str
    webhook_id: str
    account_id: str
    event_type: str
    status: str
    created_at: datetime
    updated_at: datetime
    generation_id: str | None = None
    # The exact bytes every attempt sends (decoded); None when it was read without it (the due sweep).
    body: str | None = None
    attempts: tuple[Attempt, ...] = ()
    # When it is due next (None once closed); pushed past an attempt's deadline while claimed.
    next_attempt_at: datetime | None = None
    # Set while it waits for a retry (after a failed attempt, or re-queued through the api).
    retry_at: datetime | None = None
    failure_reason: str | None = None
    # The claim token of the notifier instance that last claimed it (or created it claimed).
    claim: str | None = None
    trace_id: str | None = None
    traceparent: str | None = None

    @classmethod
    def from_doc(cls, doc: Doc) -> Delivery:
        return cls(
            id=doc["_id"],
            event_id=doc["event_id"],
            webhook_id=doc["webhook_id"],
            account_id=doc["account_id"],
            event_type=doc["event_type"],
            status=doc["status"],
            created_at=doc["created_at"],
            updated_at=doc["updated_at"],
            generation_id=doc.get("generation_id"),
            body=doc.get("body"),
            attempts=tuple(Attempt.from_doc(a) for a in doc.get("attempts", ())),
            next_attempt_at=doc.get("next_attempt_at"),
            retry_at=doc.get("retry_at"),
            failure_reason=doc.get("failure_reason"),
            claim=doc.get("claim"),
            trace_id=doc.get("trace_id"),
            traceparent=doc.get("traceparent"),
        )

    def to_doc(self) -> Doc:
        """The document; the fields set only in some states (``retry_at``, ``failure_reason``, ``claim``) are
        left out while unset, as they have always been stored."""
        doc: Doc = {
            "_id": self.id,
            "event_id": self.event_id,
            "webhook_id": self.webhook_id,
            "account_id": self.account_id,
            "event_type": self.event_type,
            "generation_id": self.generation_id,
            "body": self.body,
            "status": self.status,
            "attempts": [a.to_doc() for a in self.attempts],
            "next_attempt_at": self.next_attempt_at,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "trace_id": self.trace_id,
            "traceparent": self.traceparent,
        }
        if self.retry_at is not None:
            doc["retry_at"] = self.retry_at
        if self.failure_reason is not None:
            doc["failure_reason"] = self.failure_reason
        if self.claim is not None:
            doc["claim"] = self.claim
        return doc

    @property
    def waiting_for_retry(self) -> bool:
        """Whether it has ``retry_at`` (to be removed when it closes)."""
        return self.retry_at is not None
