"""Disabling an endpoint that failed for too long, as the notifier does: the endpoint, its
``webhook.disabled`` event (for the account's other endpoints subscribed to it) and the account's audit record
are written by one transaction, so a disable is never left without its event or its record."""

from __future__ import annotations

from datetime import datetime

from videogen_common.audit import AuditActorType, AuditEventType, audit_event
from videogen_common.clock import to_millis
from videogen_common.event_types import WEBHOOK_DISABLED
from videogen_common.ids import derived_id
from videogen_common.records.audit_event import AuditEvent
from videogen_common.records.event import Event
from videogen_common.records.webhook import WebhookEndpoint
from videogen_common.repositories.audit import AuditRepository
from videogen_common.repositories.events import record_with_change
from videogen_common.repositories.webhooks import WebhookRepository
from videogen_common.store import Session, Store


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
    """Disable an active endpoint with its event and audit record (one transaction); the event, owed to the
    notifier, or None if the endpoint was not active (disabled already, by another instance or its owner)."""
    webhooks, audit = WebhookRepository(store), AuditRepository(store)

    async def disabling(session: Session) -> WebhookEndpoint | None:
        disabled = await webhooks.disable(endpoint, reason, now, session)
        if disabled is not None:
            await audit.insert(disabled_audit(disabled_event(disabled)), session)
        return disabled

    recorded = await record_with_change(store, disabling, disabled_event)
    return None if recorded is None else recorded[1]
