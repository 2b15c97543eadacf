"""The sync client's resources: each method runs its async twin to the end on the client's event loop."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Iterator, Mapping, Sequence
from datetime import date, datetime
from pathlib import Path
from typing import IO, Any, Literal

from videogen_client._paging import walk_blocking
from videogen_client._portal import Portal
from videogen_client.enums import (
    AspectRatio,
    AuditEventType,
    DeliveryStatus,
    EventType,
    Priority,
    Provider,
    Resolution,
    Status,
)
from videogen_client.models import (
    AuditEvent,
    AuditEventList,
    Delivery,
    DeliveryList,
    Event,
    EventList,
    Generation,
    GenerationList,
    ProviderInfo,
    RotatedSecret,
    RoutingOptions,
    Upload,
    Webhook,
    WebhookCreated,
)
from videogen_client.models import Usage as UsageReport
from videogen_client.resources.account import AsyncAuditEvents, AsyncEvents, AsyncUsage
from videogen_client.resources.generations import (
    DEFAULT_WAIT_TIMEOUT_S,
    AsyncGenerations,
    AsyncProviders,
    AsyncUploads,
    DownloadProgress,
    ImageSource,
    ProgressCallback,
)
from videogen_client.resources.webhooks import AsyncDeliveries, AsyncWebhooks


async def _next(chunks: AsyncGenerator[bytes, None]) -> bytes:
    return await anext(chunks)


class Generations:
    __doc__ = AsyncGenerations.__doc__

    def __init__(self, portal: Portal, generations: AsyncGenerations) -> None:
        self._run = portal.run
        self._a = generations

    def create(
        self,
        *,
        prompt: str,
        provider: Provider | Literal["auto"] | str,
        duration: int,
        aspect_ratio: AspectRatio | str | None = None,
        resolution: Resolution | str | None = None,
        seed: int | None = None,
        negative_prompt: str | None = None,
        metadata: dict[str, str] | None = None,
        image: ImageSource | None = None,
        deadline_seconds: int | None = None,
        priority: Priority | None = None,
        fallback_providers: Sequence[Provider | str] | None = None,
        routing: RoutingOptions | Mapping[str, Any] | None = None,
        fallback_on_failure: bool | None = None,
        retention_days: int | None = None,
        idempotency_key: str | None = None,
    ) -> Generation:
        return self._run(
            self._a.create(
                prompt=prompt,
                provider=provider,
                duration=duration,
                aspect_ratio=aspect_ratio,
                resolution=resolution,
                seed=seed,
                negative_prompt=negative_prompt,
                metadata=metadata,
                image=image,
                deadline_seconds=deadline_seconds,
                priority=priority,
                fallback_providers=fallback_providers,
                routing=routing,
                fallback_on_failure=fallback_on_failure,
                retention_days=retention_days,
                idempotency_key=idempotency_key,
            )
        )

    def get(self, generation_id: str) -> Generation:
        return self._run(self._a.get(generation_id))

    def list_page(
        self,
        *,
        status: Status | str | list[Status | str] | None = None,
        provider: Provider | str | None = None,
        created_after: datetime | None = None,
        created_before: datetime | None = None,
        metadata: dict[str, str] | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> GenerationList:
        return self._run(
            self._a.list_page(
                status=status,
                provider=provider,
                created_after=created_after,
                created_before=created_before,
                metadata=metadata,
                limit=limit,
                cursor=cursor,
            )
        )

    def list(
        self,
        *,
        status: Status | str | list[Status | str] | None = None,
        provider: Provider | str | None = None,
        created_after: datetime | None = None,
        created_before: datetime | None = None,
        metadata: dict[str, str] | None = None,
        page_size: int | None = None,
    ) -> Iterator[Generation]:
        return walk_blocking(
            self._run,
            lambda cursor: self._a.list_page(
                status=status,
                provider=provider,
                created_after=created_after,
                created_before=created_before,
                metadata=metadata,
                limit=page_size,
                cursor=cursor,
            ),
        )

    def cancel(self, generation_id: str) -> Generation:
        return self._run(self._a.cancel(generation_id))

    def delete(self, generation_id: str) -> None:
        self._run(self._a.delete(generation_id))

    def wait(
        self,
        generation_id: str,
        *,
        timeout: float = DEFAULT_WAIT_TIMEOUT_S,
        on_progress: ProgressCallback | None = None,
        poll_interval: float = 0.5,
        max_poll_interval: float = 5.0,
    ) -> Generation:
        return self._run(
            self._a.wait(
                generation_id,
                timeout=timeout,
                on_progress=on_progress,
                poll_interval=poll_interval,
                max_poll_interval=max_poll_interval,
            )
        )

    def create_and_wait(
        self,
        *,
        prompt: str,
        provider: Provider | Literal["auto"] | str,
        duration: int,
        aspect_ratio: AspectRatio | str | None = None,
        resolution: Resolution | str | None = None,
        seed: int | None = None,
        negative_prompt: str | None = None,
        metadata: dict[str, str] | None = None,
        image: ImageSource | None = None,
        deadline_seconds: int | None = None,
        priority: Priority | None = None,
        fallback_providers: Sequence[Provider | str] | None = None,
        routing: RoutingOptions | Mapping[str, Any] | None = None,
        fallback_on_failure: bool | None = None,
        retention_days: int | None = None,
        idempotency_key: str | None = None,
        timeout: float = DEFAULT_WAIT_TIMEOUT_S,
        on_progress: ProgressCallback | None = None,
    ) -> Generation:
        return self._run(
            self._a.create_and_wait(
                prompt=prompt,
                provider=provider,
                duration=duration,
                aspect_ratio=aspect_ratio,
                resolution=resolution,
                seed=seed,
                negative_prompt=negative_prompt,
                metadata=metadata,
                image=image,
                deadline_seconds=deadline_seconds,
                priority=priority,
                fallback_providers=fallback_providers,
                routing=routing,
                fallback_on_failure=fallback_on_failure,
                retention_days=retention_days,
                idempotency_key=idempotency_key,
                timeout=timeout,
                on_progress=on_progress,
            )
        )

    def iter_video(self, generation_id: str) -> Iterator[bytes]:
        """The completed generation's video, chunk by chunk."""
        chunks = self._a.iter_video(generation_id)
        try:
            while True:
                try:
                    yield self._run(_next(chunks))
                except StopAsyncIteration:
                    return
        finally:
            self._run(chunks.aclose())

    def download(
        self,
        generation_id: str,
        destination: str | Path | IO[bytes],
        *,
        on_progress: DownloadProgress | None = None,
    ) -> int:
        return self._run(self._a.download(generation_id, destination, on_progress=on_progress))


class Webhooks:
    __doc__ = AsyncWebhooks.__doc__

    def __init__(self, portal: Portal, webhooks: AsyncWebhooks) -> None:
        self._run = portal.run
        self._a = webhooks

    def create(self, *, url: str, events: Sequence[EventType | str]) -> WebhookCreated:
        return self._run(self._a.create(url=url, events=events))

    def list(self) -> list[Webhook]:
        return self._run(self._a.list())

    def get(self, webhook_id: str) -> Webhook:
        return self._run(self._a.get(webhook_id))

    def update(
        self,
        webhook_id: str,
        *,
        url: str | None = None,
        events: Sequence[EventType | str] | None = None,
        active: bool | None = None,
    ) -> Webhook:
        return self._run(self._a.update(webhook_id, url=url, events=events, active=active))

    def delete(self, webhook_id: str) -> None:
        self._run(self._a.delete(webhook_id))

    def rotate_secret(self, webhook_id: str) -> RotatedSecret:
        return self._run(self._a.rotate_secret(webhook_id))

    def send_test(self, webhook_id: str) -> Delivery:
        return self._run(self._a.send_test(webhook_id))

    def recover(self, webhook_id: str, *, since: datetime) -> int:
        return self._run(self._a.recover(webhook_id, since=since))

    def deliveries_page(
        self,
        webhook_id: str,
        *,
        status: DeliveryStatus | str | None = None,
        event_type: str | None = None,
        created_after: datetime | None = None,
        created_before: datetime | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> DeliveryList:
        return self._run(
            self._a.deliveries_page(
                webhook_id,
                status=status,
                event_type=event_type,
                created_after=created_after,
                created_before=created_before,
                limit=limit,
                cursor=cursor,
            )
        )

    def deliveries(
        self,
        webhook_id: str,
        *,
        status: DeliveryStatus | str | None = None,
        event_type: str | None = None,
        created_after: datetime | None = None,
        created_before: datetime | None = None,
        page_size: int | None = None,
    ) -> Iterator[Delivery]:
        return walk_blocking(
            self._run,
            lambda cursor: self._a.deliveries_page(
                webhook_id,
                status=status,
                event_type=event_type,
                created_after=created_after,
                created_before=created_before,
                limit=page_size,
                cursor=cursor,
            ),
        )


class Deliveries:
    __doc__ = AsyncDeliveries.__doc__

    def __init__(self, portal: Portal, deliveries: AsyncDeliveries) -> None:
        self._run = portal.run
        self._a = deliveries

    def get(self, delivery_id: str) -> Delivery:
        return self._run(self._a.get(delivery_id))

    def retry(self, delivery_id: str) -> Delivery:
        return self._run(self._a.retry(delivery_id))


class Uploads:
    __doc__ = AsyncUploads.__doc__

    def __init__(self, portal: Portal, uploads: AsyncUploads) -> None:
        self._run = portal.run
        self._a = uploads

    def create(self, file: Path | bytes | IO[bytes]) -> Upload:
        return self._run(self._a.create(file))

    def get(self, upload_id: str) -> Upload:
        return self._run(self._a.get(upload_id))

    def delete(self, upload_id: str) -> None:
        self._run(self._a.delete(upload_id))


class Providers:
    __doc__ = AsyncProviders.__doc__

    def __init__(self, portal: Portal, providers: AsyncProviders) -> None:
        self._run = portal.run
        self._a = providers

    def list(self) -> list[ProviderInfo]:
        return self._run(self._a.list())


class Usage:
    __doc__ = AsyncUsage.__doc__

    def __init__(self, portal: Portal, usage: AsyncUsage) -> None:
        self._run = portal.run
        self._a = usage

    def get(
        self,
        *,
        start: datetime | date | None = None,
        end: datetime | date | None = None,
        api_key_id: str | None = None,
    ) -> UsageReport:
        return self._run(self._a.get(start=start, end=end, api_key_id=api_key_id))


class AuditEvents:
    __doc__ = AsyncAuditEvents.__doc__

    def __init__(self, portal: Portal, audit_events: AsyncAuditEvents) -> None:
        self._run = portal.run
        self._a = audit_events

    def list_page(
        self,
        *,
        type: AuditEventType | Sequence[AuditEventType] | None = None,
        target_id: str | None = None,
        created_after: datetime | None = None,
        created_before: datetime | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> AuditEventList:
        return self._run(
            self._a.list_page(
                type=type,
                target_id=target_id,
                created_after=created_after,
                created_before=created_before,
                limit=limit,
                cursor=cursor,
            )
        )

    def list(
        self,
        *,
        type: AuditEventType | Sequence[AuditEventType] | None = None,
        target_id: str | None = None,
        created_after: datetime | None = None,
        created_before: datetime | None = None,
        page_size: int | None = None,
    ) -> Iterator[AuditEvent]:
        return walk_blocking(
            self._run,
            lambda cursor: self._a.list_page(
                type=type,
                target_id=target_id,
                created_after=created_after,
                created_before=created_before,
                limit=page_size,
                cursor=cursor,
            ),
        )


class Events:
    __doc__ = AsyncEvents.__doc__

    def __init__(self, portal: Portal, events: AsyncEvents) -> None:
        self._run = portal.run
        self._a = events

    def get(self, event_id: str) -> Event:
        return self._run(self._a.get(event_id))

    def list_page(
        self,
        *,
        type: EventType | str | Sequence[EventType | str] | None = None,
        subject_id: str | None = None,
        created_after: datetime | None = None,
        created_before: datetime | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> EventList:
        return self._run(
            self._a.list_page(
                type=type,
                subject_id=subject_id,
                created_after=created_after,
                created_before=created_before,
                limit=limit,
                cursor=cursor,
            )
        )

    def list(
        self,
        *,
        type: EventType | str | Sequence[EventType | str] | None = None,
        subject_id: str | None = None,
        created_after: datetime | None = None,
        created_before: datetime | None = None,
        page_size: int | None = None,
    ) -> Iterator[Event]:
        return walk_blocking(
            self._run,
            lambda cursor: self._a.list_page(
                type=type,
                subject_id=subject_id,
                created_after=created_after,
                created_before=created_before,
                limit=page_size,
                cursor=cursor,
            ),
        )
