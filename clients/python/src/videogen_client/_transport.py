"""One HTTP call with the SDK's retry policy: exponential backoff with jitter, ``Retry-After`` honoured, and
only what is safe to repeat repeated."""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, TypedDict, TypeVar, Unpack

import httpx
from httpx_sse import ServerSentEvent, SSEError, aconnect_sse
from pydantic import BaseModel

from videogen_client.errors import (
    BUDGET_EXCEEDED,
    APIConnectionError,
    APIStatusError,
    APITimeoutError,
    status_error,
)
from videogen_client.models import Problem

REQUEST_ID = "X-Request-Id"
IDEMPOTENCY_KEY = "Idempotency-Key"
# Methods the API treats as idempotent: a repeat changes nothing more than the first did.
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "PUT", "DELETE", "PATCH", "OPTIONS"})
MAX_RETRY_AFTER_S = 60.0

Sleep = Callable[[float], Awaitable[None]]
M = TypeVar("M", bound=BaseModel)


class Sent(TypedDict, total=False):
    """What a call sends besides its method and path: the keywords of ``Transport.request``."""

    json_body: Any
    params: Mapping[str, Any] | None
    headers: Mapping[str, str] | None
    files: Mapping[str, Any] | None


@dataclass(frozen=True)
class RetryPolicy:
    """``max_retries`` tries after the first; the n-th waits ``base * 2**n`` seconds (at most ``cap``), less
    up to a quarter at random, unless the API said how long in ``Retry-After``."""

    max_retries: int = 3
    base: float = 0.5
    cap: float = 8.0

    def delay(self, retry: int, retry_after: float | None, rand: float) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), MAX_RETRY_AFTER_S)
        return float(min(self.cap, self.base * 2.0**retry)) * (1 - 0.25 * rand)


def retry_after_seconds(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """``Retry-After`` as seconds from now: delta-seconds or an HTTP date; None if absent or unreadable."""
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return moment.timestamp() - (time.time() if now is None else now)


def given(**fields: Any) -> dict[str, Any]:
    """A request body of the ``fields`` given: those that are not None (left out, the API's default)."""
    return {name: value for name, value in fields.items() if value is not None}


async def status_error_of(response: httpx.Response, retry_after: float | None) -> APIStatusError:
    """The SDK's error for the API's error answer ``response`` (read first, if it was streamed)."""
    await response.aread()
    return status_error(
        response.status_code, _problem(response), response.headers.get(REQUEST_ID), retry_after
    )


def _problem(response: httpx.Response) -> Problem:
    try:
        body = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        body = None
    if isinstance(body, dict):
        return Problem.model_validate(body)
    return Problem(
        title=response.reason_phrase, status=response.status_code, detail=response.text[:500] or None
    )


class ApiKeyAuth(httpx.Auth):
    """The API key as a bearer token, on requests to the API's own origin only: a media link elsewhere (a
    signed object-store URL) gets no credentials it did not ask for."""

    def __init__(self, api_key: str, base_url: httpx.URL) -> None:
        self._header = f"Bearer {api_key}"
        self._origin = _origin(base_url)

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        if _origin(request.url) == self._origin:
            request.headers["Authorization"] = self._header
        yield request


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    return url.scheme, url.host, url.port


class Transport:
    """Calls to the API at ``base_url`` (ending in ``/v1/``) through ``http``."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        base_url: httpx.URL,
        auth: httpx.Auth,
        policy: RetryPolicy,
        *,
        sleep: Sleep = asyncio.sleep,
        rand: Callable[[], float] = random.random,
    ) -> None:
        self.http = http
        self.base_url = base_url
        self.auth = auth
        self.policy = policy
        self._sleep = sleep
        self._rand = rand

    def stream(self, url: str) -> AbstractAsyncContextManager[httpx.Response]:
        """A streamed GET of ``url`` (absolute, or relative to the API), with credentials only for the API."""
        return self.http.stream("GET", self.base_url.join(url), auth=self.auth)

    async def request(
        self,
        method: str,
        path: str,
        *,
        json_body: Any = None,
        params: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        files: Mapping[str, Any] | None = None,
    ) -> httpx.Response:
        """The answer to the call, retried where safe; raises the SDK's errors for error statuses.
        ``files``: a multipart form's file parts (httpx's ``files``)."""
        sent_headers = dict(headers or {})
        # Repeating it changes nothing: an idempotent method, or a call the API deduplicates by its key.
        repeatable = method in IDEMPOTENT_METHODS or IDEMPOTENCY_KEY in sent_headers
        retry = 0
        while True:
            try:
                response = await self.http.request(
                    method,
                    self.base_url.join(path),
                    json=json_body,
                    files=files,
                    params=_query(params),
                    headers=sent_headers,
                    auth=self.auth,
                )
            except httpx.TransportError as exc:
                # A request that never connected never reached the API; any other may have been acted on.
                never_sent = isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout)
                if retry < self.policy.max_retries and (repeatable or never_sent):
                    await self._wait(retry, None)
                    retry += 1
                    continue
                if isinstance(exc, httpx.TimeoutException):
                    raise APITimeoutError(f"{method} {path}: no answer in time") from exc
                raise APIConnectionError(f"{method} {path}: {exc.__class__.__name__}: {exc}") from exc
            status = response.status_code
            if status < 400:
                return response
            retry_after = retry_after_seconds(response.headers)
            error = await status_error_of(response, retry_after)
            # 429 and 503 are refusals (nothing was done); 502 and 504 may hide work done upstream. A spent
            # budget is a 429 that no wait short of its reset helps.
            retriable = (status in (429, 503) and error.type != BUDGET_EXCEEDED) or (
                status in (502, 504) and repeatable
            )
            if retriable and retry < self.policy.max_retries:
                await self._wait(retry, retry_after)
                retry += 1
                continue
            raise error

    async def call(self, answer: type[M], method: str, path: str, **sent: Unpack[Sent]) -> M:
        """``request``'s answer read as the model ``answer``."""
        response = await self.request(method, path, **sent)
        return answer.model_validate_json(response.content)

    async def events(
        self, path: str, last_event_id: str | None = None
    ) -> AsyncGenerator[ServerSentEvent, None]:
        """The Server-Sent Events the API streams at ``path``, resumed after ``last_event_id`` if given. Not
        retried: an error status raises the SDK's error for it, a broken or silent connection
        ``APIConnectionError``; the caller decides how to go on."""
        headers = {"Accept": "text/event-stream"}
        if last_event_id:
            headers["Last-Event-ID"] = last_event_id
        try:
            async with aconnect_sse(
                self.http, "GET", str(self.base_url.join(path)), headers=headers, auth=self.auth
            ) as source:
                response = source.response
                if response.status_code >= 400:
                    raise await status_error_of(response, retry_after_seconds(response.headers))
                async for event in source.aiter_sse():
                    yield event
        except httpx.TimeoutException as exc:
            raise APITimeoutError(f"GET {path}: the event stream fell silent") from exc
        except (httpx.TransportError, SSEError) as exc:
            raise APIConnectionError(f"GET {path}: {exc.__class__.__name__}: {exc}") from exc

    async def _wait(self, retry: int, retry_after: float | None) -> None:
        await self._sleep(self.policy.delay(retry, retry_after, self._rand()))


class Resource:
    """A resource of the API (``client.generations``, ``client.batches``...), called through ``transport``."""

    def __init__(self, transport: Transport) -> None:
        self._t = transport


def _query(params: Mapping[str, Any] | None) -> httpx.QueryParams | None:
    """Query parameters without the unset ones; lists become repeated parameters."""
    if params is None:
        return None
    pairs: list[tuple[str, str]] = []
    for name, value in params.items():
        if value is None:
            continue
        values = value if isinstance(value, list | tuple) else [value]
        pairs += [(name, _text(v)) for v in values]
    return httpx.QueryParams(tuple(pairs))


def _text(value: Any) -> str:
    if hasattr(value, "isoformat"):
        return str(value.isoformat())
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
