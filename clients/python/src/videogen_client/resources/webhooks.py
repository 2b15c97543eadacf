"""``client.webhooks``: register endpoints, change them, rotate their secrets, test them, and read and recover
their deliveries."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from datetime import datetime
from typing import Unpack

from videogen_client._keywords import spelled_out
from videogen_client._paging import CreatedBetween, walk
from videogen_client._transport import Resource, given
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


class AsyncWebhooks(Resource):
    async def create(self, *, url: str, events: Sequence[EventType | str]) -> WebhookCreated:
        """Register an endpoint; the answer carries its signing secret, shown this once."""
        return await self._t.call(
            WebhookCreated, "POST", "webhooks", json_body={"url": url, "events": list(events)}
        )

    async def list(self) -> list[Webhook]:
        return (await self._t.call(WebhookList, "GET", "webhooks")).data

    async def get(self, webhook_id: str) -> Webhook:
        return await self._t.call(Webhook, "GET", f"webhooks/{webhook_id}")

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
        return await self._t.call(Webhook, "PATCH", f"webhooks/{webhook_id}", json_body=body)

    async def delete(self, webhook_id: str) -> None:
        await self._t.request("DELETE", f"webhooks/{webhook_id}")

    async def rotate_secret(self, webhook_id: str) -> RotatedSecret:
        """A new signing secret (shown this once); deliveries are signed with both for the overlap."""
        return await self._t.call(RotatedSecret, "POST", f"webhooks/{webhook_id}/rotate-secret")

    async def send_test(self, webhook_id: str) -> Delivery:
        """Send the endpoint a test event now; the answer is its delivery, to follow with
        ``client.deliveries.get``."""
        return await self._t.call(Delivery, "POST", f"webhooks/{webhook_id}/test")

    async def recover(self, webhook_id: str, *, since: datetime) -> int:
        """Queue again the endpoint's failed deliveries created since ``since``; returns how many."""
        body = {"since": since.isoformat()}
        recovered = await self._t.call(Recovered, "POST", f"webhooks/{webhook_id}/recover", json_body=body)
        return recovered.requeued

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
        return await self._t.call(DeliveryList, "GET", f"webhooks/{webhook_id}/deliveries", params=params)

    @spelled_out
    def deliveries(
        self, webhook_id: str, *, page_size: int | None = None, **filters: Unpack[DeliveryFilters]
    ) -> AsyncIterator[Delivery]:
        """Every delivery to the endpoint that matches, newest first, page after page as it is iterated."""
        return walk(
            lambda cursor: self.deliveries_page(webhook_id, limit=page_size, cursor=cursor, **filters)
        )


class AsyncDeliveries(Resource):
    async def get(self, delivery_id: str) -> Delivery:
        return await self._t.call(Delivery, "GET", f"deliveries/{delivery_id}")

    async def retry(self, delivery_id: str) -> Delivery:
        """Send a failed delivery again now."""
        return await self._t.call(Delivery, "POST", f"deliveries/{delivery_id}/retry")
