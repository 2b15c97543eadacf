"""Disabling an endpoint, and telling its account: a ``webhook.disabled`` notice in ``notices``, delivered to
every other active endpoint of the account subscribed to ``webhook.disabled``.

Disabling marks the webhook ``notice_pending`` in the same update; the notice and its deliveries are then
created under ids derived from the endpoint and the moment it was disabled, and the mark is cleared. If the
process dies in between, ``finish_pending_notices`` (run by the sweeper) creates whatever is missing, and
nothing twice."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from videogen_common import audit
from videogen_common.audit import AuditActorType, AuditEventType
from videogen_common.clock import isoformat, to_millis
from videogen_common.deliveries import delivery_body, pending_delivery
from videogen_common.domain import EventType
from videogen_common.ids import derived_id
from videogen_common.records.webhook import WebhookEndpoint
from videogen_common.repositories.deliveries import DeliveryRepository
from videogen_common.repositories.webhooks import WebhookRepository
from videogen_common.store import DuplicateKeyError, Store

WEBHOOK_DISABLED = EventType.WEBHOOK_DISABLED.value


def notice_id(webhook_id: str, disabled_at: datetime) -> str:
    """Also the event id of the notice's deliveries, so each endpoint gets it once."""
    return f"evt_{webhook_id}_disabled_{to_millis(disabled_at)}"


async def disable_endpoint(
    store: Store, endpoint: WebhookEndpoint, reason: str, now: datetime
) -> list[tuple[str, str]]:
    """Disable an active endpoint and record the notice; returns (delivery id, webhook id) of the notice's
    deliveries. An endpoint already disabled (by another instance, or by its owner) is left alone."""
    if not await WebhookRepository(store).disable(endpoint.id, reason, now):
        return []
    disabled = replace(endpoint, active=False, disabled_reason=reason, disabled_at=now, notice_pending=True)
    return await _record_notice(store, disabled, now)


async def finish_pending_notices(store: Store, now: datetime) -> list[tuple[str, str]]:
    created: list[tuple[str, str]] = []
    async for endpoint in WebhookRepository(store).owed_notices():
        created += await _record_notice(store, endpoint, now)
    return created


async def _record_notice(store: Store, endpoint: WebhookEndpoint, now: datetime) -> list[tuple[str, str]]:
    webhooks = WebhookRepository(store)
    webhook_id, account_id = endpoint.id, endpoint.account_id
    disabled_at = endpoint.disabled_at or now
    reason = endpoint.disabled_reason or "disabled"
    event_id = notice_id(webhook_id, disabled_at)
    # Already there if recorded before a crash, which may have come before its deliveries were.
    await webhooks.record_notice(
        {
            "_id": event_id,
            "account_id": account_id,
            "webhook_id": webhook_id,
            "type": WEBHOOK_DISABLED,
            "reason": reason,
            "created_at": disabled_at,
        }
    )
    # The account's audit trail, under an id derived from the notice's: a repair adds it once.
    await audit.record(
        store,
        audit.audit_event(
            account_id=account_id,
            type=AuditEventType.WEBHOOK_DISABLED,
            actor=(AuditActorType.SYSTEM, "notifier"),
            target=("webhook", webhook_id),
            now=disabled_at,
            data={"reason": reason},
            event_id=derived_id("aud", event_id),
        ),
    )
    body = delivery_body(
        WEBHOOK_DISABLED,
        isoformat(disabled_at),
        {"id": webhook_id, "url": endpoint.url, "reason": reason, "disabled_at": isoformat(disabled_at)},
    )
    deliveries = DeliveryRepository(store)
    created: list[tuple[str, str]] = []
    for subscriber in await webhooks.notice_subscribers(account_id, WEBHOOK_DISABLED, webhook_id):
        delivery = pending_delivery(
            event_id=event_id,
            event_type=WEBHOOK_DISABLED,
            webhook_id=subscriber,
            account_id=account_id,
            body=body,
            now=now,
        )
        try:
            await deliveries.insert(delivery)
        except DuplicateKeyError:
            continue
        created.append((delivery.id, subscriber))
    await webhooks.notice_recorded(webhook_id)
    return created
