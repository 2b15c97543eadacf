"""Disabling an endpoint that failed for too long, as the notifier does: the disable's own write carries its
``webhook.disabled`` event (for the account's other endpoints subscribed to it: ``videogen_common.outbox``),
and the account's audit record follows it, under an id derived from the event's."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from videogen_common.audit import AuditActorType, AuditEventType, audit_event, record
from videogen_common.clock import to_millis
from videogen_common.event_types import WEBHOOK_DISABLED
from videogen_common.ids import derived_id
from videogen_common.records.audit_event import AuditEvent
from videogen_common.records.event import Event
from videogen_common.records.webhook import WebhookEndpoint
from videogen_common.repositories.webhooks import WebhookRepository
from videogen_common.store import Store


def disabled_event(endpoint: WebhookEndpoint) -> Event:
    """The ``webhook.disabled`` event of an endpoint as its disable left it: one id per disable
    (``evt_{webhook}_disabled_{milliseconds}``), at the moment it was disabled."""
    assert endpoint.disabled_at is not None, "a disabled endpoint says when"
    at = endpoint.disabled_at
    return WEBHOOK_DISABLED.event(endpoint, change=f"disabled_{to_millis(at)}", at=at)


def disabled_audit(event: Event) -> AuditEvent:
    """The account's audit record of a disable the notifier made, under an id derived from its event's."""
    return audit_event(
        account_id=event.account_id,
        type=AuditEventType.WEBHOOK_DISABLED,
        actor=(AuditActorType.SYSTEM, "notifier"),
        target=("webhook", event.subject_id),
        now=event.created_at,
        data={"reason": event.data["reason"]},
        event_id=derived_id("aud", event.id),
    )


async def disable_endpoint(
    store: Store, endpoint: WebhookEndpoint, reason: str, now: datetime
) -> Event | None:
    """Disable an active endpoint, its event in the same write, then its audit record; the event (owed to
    the notifier: publish or take it in), or None if the endpoint was not active (disabled already, by
    another instance or its owner). A crash between the two writes leaves the disable without its audit
    record, as an api change and its audit record are left (docs/api.md); never without its event."""
    disabled = replace(endpoint, active=False, disabled_reason=reason, disabled_at=now, updated_at=now)
    event = disabled_event(disabled)
    if not await WebhookRepository(store).disable(endpoint.id, reason, now, owes=event):
        return None
    await record(store, disabled_audit(event))
    return event
