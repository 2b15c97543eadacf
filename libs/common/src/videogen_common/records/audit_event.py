"""An audit event (``AuditEvent``): one change to an account's keys or webhooks, who made it and when (see
``videogen_common.audit``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

Doc = dict[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class AuditEvent:
    """An event as stored (document ``audit_events``, ``_id`` its id)."""

    id: str
    account_id: str
    type: str  # an AuditEventType's value
    actor_type: str  # an AuditActorType's value
    actor_id: str | None
    target_type: str
    target_id: str
    created_at: datetime
    data: Mapping[str, Any] = field(default_factory=dict)
    request_id: str | None = None

    @classmethod
    def from_doc(cls, doc: Doc) -> AuditEvent:
        return cls(
            id=doc["_id"],
            account_id=doc["account_id"],
            type=doc["type"],
            actor_type=doc["actor"]["type"],
            actor_id=doc["actor"].get("id"),
            target_type=doc["target"]["type"],
            target_id=doc["target"]["id"],
            created_at=doc["created_at"],
            data=doc.get("data") or {},
            request_id=doc.get("request_id"),
        )

    def to_doc(self) -> Doc:
        return {
            "_id": self.id,
            "account_id": self.account_id,
            "type": self.type,
            "actor": {"type": self.actor_type, "id": self.actor_id},
            "target": {"type": self.target_type, "id": self.target_id},
            "data": dict(self.data),
            "request_id": self.request_id,
            "created_at": self.created_at,
        }
