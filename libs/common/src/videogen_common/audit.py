"""The audit trail: every change to an account's API keys, budgets and webhook endpoints, and every deletion
of its generations and uploads, who made it (an API key, an operator at the command line, or the system),
when, and what changed — never a secret, nor what a deletion erased; each budget threshold reached
(``budget_alerts``); and the account's media retention, set by an operator (``videogen retention``).

Events are written right after the change they record, by whoever made it: the api (keys made, changed and
revoked, budgets set, endpoints created, changed, deleted, secrets rotated, deliveries retried and recoveries
requested, thresholds reached, generations and uploads deleted), the notifier (an endpoint it
disabled; written with the ``webhook.disabled`` notice, under an id derived from the endpoint and the moment,
so the sweeper's repair of an interrupted disable adds it once) and the ``videogen keys`` and ``videogen
retention`` commands (keys made and revoked; the account's retention). They are read at
``GET /v1/audit-events``."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from enum import StrEnum
from typing import Any

from videogen_common.ids import new_id
from videogen_common.records.audit_event import AuditEvent
from videogen_common.repositories.audit import AuditRepository
from videogen_common.store import Store

Doc = dict[str, Any]

# Field names that never go into an event's data, whatever a caller passes.
SECRET_FIELDS = frozenset({"secret", "secrets", "key", "key_hash", "api_key"})


class AuditEventType(StrEnum):
    API_KEY_CREATED = "api_key.created"
    API_KEY_REVOKED = "api_key.revoked"
    API_KEY_UPDATED = "api_key.updated"
    BUDGET_UPDATED = "budget.updated"
    BUDGET_THRESHOLD_REACHED = "budget.threshold_reached"
    WEBHOOK_CREATED = "webhook.created"
    WEBHOOK_UPDATED = "webhook.updated"
    WEBHOOK_DELETED = "webhook.deleted"
    WEBHOOK_SECRET_ROTATED = "webhook.secret_rotated"  # noqa: S105 (an event's name, not a secret)
    WEBHOOK_DISABLED = "webhook.disabled"
    WEBHOOK_RECOVERY_REQUESTED = "webhook.recovery_requested"
    DELIVERY_RETRY_REQUESTED = "delivery.retry_requested"
    GENERATION_DELETED = "generation.deleted"
    UPLOAD_DELETED = "upload.deleted"
    RETENTION_UPDATED = "retention.updated"


class AuditActorType(StrEnum):
    API_KEY = "api_key"  # a request made with one of the account's keys (id: the key's id)
    OPERATOR = "operator"  # the videogen command, run by whoever operates the deployment
    SYSTEM = "system"  # a service acting on its own (id: which one)


def audit_event(
    *,
    account_id: str,
    type: AuditEventType,
    actor: tuple[AuditActorType, str | None],
    target: tuple[str, str],
    now: datetime,
    data: Mapping[str, Any] | None = None,
    request_id: str | None = None,
    event_id: str | None = None,
) -> AuditEvent:
    """An audit event: ``actor`` is (type, id), ``target`` (type, id) of what changed; ``data`` loses any
    field named like a secret."""
    actor_type, actor_id = actor
    target_type, target_id = target
    return AuditEvent(
        id=event_id or new_id("aud", now),
        account_id=account_id,
        type=type.value,
        actor_type=actor_type.value,
        actor_id=actor_id,
        target_type=target_type,
        target_id=target_id,
        data={k: v for k, v in (data or {}).items() if k not in SECRET_FIELDS},
        request_id=request_id,
        created_at=now,
    )


async def record(store: Store, event: AuditEvent) -> None:
    """Store ``event``; one already stored under its id (a repeated repair) is left as it is."""
    await AuditRepository(store).record(event)
