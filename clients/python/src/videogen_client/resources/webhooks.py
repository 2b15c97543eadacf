"""``client.webhooks``: register endpoints, change them, rotate their secrets, test them, and read and recover
their deliveries."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from datetime import datetime
from typing import Unpack

from videogen_client._keywords import spelled_out
from videogen_client._paging import CreatedBetween, walk
from videogen_client._transport import Transport, given
from videogen_client.enums import DeliveryStatus, EventType
from videogen_client.models import (
    Delivery,
    DeliveryList,
    Recovered,
    RotatedSecret,
    Webhook,
    WebhookCreated,
    WebhookList,
)


class DeliveryFilters(CreatedBetween, total=False):
    """Which deliveries ``webhooks.deliveries`` and ``deliveries_page`` answer (all of those given)."""

    status: DeliveryStatus | str | None
    event_type: str | None


class AsyncWebhooks:
    def __init__(self, transport: Transport) -> None:
        self._t = transport

    async def create(self, *, url: str, events: Sequence[EventType | str]) -> WebhookCreated:
        """Register an endpoint; the answer carries its signing secret, shown this once."""
        response = await self._t.request("POST", "webhooks", json_body={"url": url, "events": list(events)})
        return WebhookCreated.model_validate_json(response.content)

    async def list(self) -> list[Webhook]:
        response = await self._t.request("GET", "webhooks")
        return WebhookList.model_validate_json(response.content).data

    async def get(self, webhook_id: str) -> Webhook:
        response = await self._t.request("GET", f"webhooks/{webhook_id}")
        return Webhook.model_validate_json(response.content)

    async def update(
        self,
        webhook_id: str,
        *,
        url: str | None = None,
        events: Sequence[EventType | str] | None = None,
        active: bool | None = None,
    ) -> Webhook:
        """Change what is given; ``active=True`` re-enables an endpoint the service disabled."""
        body = given(url=url, events=list(events) if events is not None else None, active=active)
        response = await self._t.request("PATCH", f"webhooks/{webhook_id}", json_body=body)
        return Webhook.model_validate_json(response.content)

    async def delete(self, webhook_id: str) -> None:
        await self._t.request("DELETE", f"webhooks/{webhook_id}")

    async def rotate_secret(self, webhook_id: str) -> RotatedSecret:
        """A new signing secret (shown this once); deliveries are signed with both for the overlap."""
        response = await self._t.request("POST", f"webhooks/{webhook_id}/rotate-secret")
        return RotatedSecret.model_validate_json(response.content)

    async def send_test(self, webhook_id: str) -> Delivery:
        """Send the endpoint a test event now; the answer is its delivery, to follow with
        ``client.deliveries.get``."""
        response = await self._t.request("POST", f"webhooks/{webhook_id}/test")
        return Delivery.model_validate_json(response.content)

    async def recover(self, webhook_id: str, *, since: datetime) -> int:
        """Queue again the endpoint's failed deliveries created since ``since``; returns how many."""
        response = await self._t.request(
            "POST", f"webhooks/{webhook_id}/recover", json_body={"since": since.isoformat()}
        )
        return Recovered.model_validate_json(response.content).requeued

    @spelled_out
    async def deliveries_page(
        self,
        webhook_id: str,
        *,
        limit: int | None = None,
        cursor: str | None = None,
        **filters: Unpack[DeliveryFilters],
    ) -> DeliveryList:
        params = {**filters, "limit": limit, "cursor": cursor}
        response = await self._t.request("GET", f"webhooks/{webhook_id}/deliveries", params=params)
        return DeliveryList.model_validate_json(response.content)

    @spelled_out
    def deliveries(
        self, webhook_id: str, *, page_size: int | None = None, **filters: Unpack[DeliveryFilters]
    ) -> AsyncIterator[Delivery]:
        """Every delivery to the endpoint that matches, newest first, page after page as it is iterated."""
        return walk(
            lambda cursor: self.deliveries_page(webhook_id, limit=page_size, cursor=cursor, **filters)
        )


class AsyncDeliveries:
    def __init__(self, transport: Transport) -> None:
        self._t = transport

    async def get(self, delivery_id: str) -> Delivery:
        response = await self._t.request("GET", f"deliveries/{delivery_id}")
        return Delivery.model_validate_json(response.content)

    async def retry(self, delivery_id: str) -> Delivery:
        """Send a failed delivery again now."""
        response = await self._t.request("POST", f"deliveries/{delivery_id}/retry")
        return Delivery.model_validate_json(response.content)
