"""``AsyncClient`` and ``Client``: the same resources and methods, awaited or called."""

from __future__ import annotations

import asyncio
import os
from types import TracebackType
from typing import Any, Self, get_type_hints

import httpx

from videogen_client._keywords import init_like
from videogen_client._portal import Portal, Twin
from videogen_client._transport import ApiKeyAuth, RetryPolicy, Sleep, Transport
from videogen_client.errors import VideogenError
from videogen_client.resources.account import AsyncAuditEvents, AsyncEvents, AsyncUsage
from videogen_client.resources.batches import AsyncBatches, Batches
from videogen_client.resources.generations import (
    AsyncGenerations,
    AsyncModels,
    AsyncProviders,
    AsyncUploads,
)
from videogen_client.resources.keys import AsyncApiKeys, AsyncBudgets
from videogen_client.resources.sync import (
    ApiKeys,
    AuditEvents,
    Budgets,
    Deliveries,
    Events,
    Generations,
    Models,
    Providers,
    Uploads,
    Usage,
    Webhooks,
)
from videogen_client.resources.webhooks import AsyncDeliveries, AsyncWebhooks

DEFAULT_BASE_URL = "http://127.0.0.1:8080/v1"
DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=5.0)
API_KEY_ENV = "VIDEOGEN_API_KEY"
BASE_URL_ENV = "VIDEOGEN_BASE_URL"


class AsyncClient:
    """The videogen API, awaited.

    ``api_key`` and ``base_url`` default to ``VIDEOGEN_API_KEY`` and ``VIDEOGEN_BASE_URL`` (the base URL ends
    in ``/v1``, as ``make dev`` prints it). Calls that fail to connect, are rate limited (429) or find the
    API unavailable (503) are retried up to ``max_retries`` times with exponential backoff and jitter,
    honouring ``Retry-After``; read timeouts and 502/504 only where repeating is safe. ``http_client``: an
    ``httpx.AsyncClient`` of your own (proxies, transports, limits); it is not closed with this client.
    ``sleep`` waits between retries and polls (for tests)."""

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT,
        max_retries: int = 3,
        http_client: httpx.AsyncClient | None = None,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        key = api_key or os.environ.get(API_KEY_ENV)
        if not key:
            raise VideogenError(f"no API key: pass api_key= or set {API_KEY_ENV}")
        base = httpx.URL((base_url or os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL).rstrip("/") + "/")
        self.base_url = str(base)
        self._owns_http = http_client is None
        http = http_client or httpx.AsyncClient(timeout=timeout)
        self._transport = Transport(
            http, base, ApiKeyAuth(key, base), RetryPolicy(max_retries=max_retries), sleep=sleep
        )
        self.generations = AsyncGenerations(self._transport, sleep)
        self.providers = AsyncProviders(self._transport)
        self.models = AsyncModels(self._transport)
        self.uploads = AsyncUploads(self._transport)
        self.webhooks = AsyncWebhooks(self._transport)
        self.deliveries = AsyncDeliveries(self._transport)
        self.usage = AsyncUsage(self._transport)
        self.audit_events = AsyncAuditEvents(self._transport)
        self.events = AsyncEvents(self._transport)
        self.api_keys = AsyncApiKeys(self._transport)
        self.budgets = AsyncBudgets(self._transport)
        self.batches = AsyncBatches(self._transport)

    async def close(self) -> None:
        if self._owns_http:
            await self._transport.http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()


class Client:
    """The videogen API, called: the same arguments, resources and methods as ``AsyncClient`` (which it runs
    on an event loop of its own, in a background thread; progress callbacks are called from that thread).
    ``http_client``, if given, is an ``httpx.AsyncClient``."""

    # Each resource is the twin of the ``AsyncClient``'s of the same name (``__init__`` makes them all).
    generations: Generations
    providers: Providers
    models: Models
    uploads: Uploads
    webhooks: Webhooks
    deliveries: Deliveries
    usage: Usage
    audit_events: AuditEvents
    events: Events
    api_keys: ApiKeys
    budgets: Budgets
    batches: Batches

    @init_like(AsyncClient.__init__)
    def __init__(self, **arguments: Any) -> None:
        self._async = AsyncClient(**arguments)
        self.base_url = self._async.base_url
        self._portal = Portal()
        for name, twin in _TWINS.items():
            setattr(self, name, twin(self._portal, getattr(self._async, name)))

    def close(self) -> None:
        self._portal.run(self._async.close())
        self._portal.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


# The sync client's resources, each by its name: the annotations above.
_TWINS: dict[str, type[Twin[Any]]] = {
    name: hint
    for name, hint in get_type_hints(Client).items()
    if isinstance(hint, type) and issubclass(hint, Twin)
}
