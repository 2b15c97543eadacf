"""``GET /v1/audit-events``: who changed the account's keys, budgets and webhooks, and when."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from videogen_api.schemas.common import Body, Moment, NextCursor
from videogen_common.audit import AuditActorType, AuditEventType


class AuditActor(Body):
    type: Annotated[
        AuditActorType,
        Field(
            description="api_key: a request with one of your keys; operator: the videogen command; "
            "system: a service on its own (e.g. the notifier disabling an endpoint)."
        ),
    ]
    id: Annotated[str | None, Field(description="The key's id, or which service; null for an operator.")]


class AuditTarget(Body):
    type: Annotated[str, Field(description="api_key, webhook, delivery, budget, generation or upload")]
    id: str


class AuditEvent(Body):
    """One change to the account's keys, budgets or webhooks, or a budget threshold reached. Never holds a
    secret."""

    id: Annotated[str, Field(pattern=r"^aud_[0-9a-z]{26}$")]
    type: AuditEventType
    actor: AuditActor
    target: AuditTarget
    data: Annotated[dict[str, Any], Field(description="What changed: e.g. the fields before and after.")]
    request_id: Annotated[str | None, Field(description="The request that made the change, if one did.")]
    created_at: Moment


class AuditEventList(Body):
    """A page of the account's audit events, newest first."""

    data: list[AuditEvent]
    next_cursor: NextCursor
