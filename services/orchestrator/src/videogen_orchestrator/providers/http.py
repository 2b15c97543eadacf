"""The real adapters' HTTP client: JSON requests to a provider's API with transient failures (429, 5xx,
connection resets, timeouts) retried by exponential backoff with jitter, honouring ``Retry-After`` (clamped);
and bounded, streaming downloads of the media a provider links to.

A request that may start a paid task (a submit) is not idempotent at any of our providers (none takes an
idempotency key), so it is retried only when the failure proves no task was made: the connection was never
established, or the answer is one of the statuses the provider documents as "nothing was done, try again"
(``safe_statuses``, 429 at least), or one that shows it never reached the provider (``never_made``: fal's
front proxy answering for it). Any other failure after the request may have arrived (a reset, a timeout,
another 5xx) raises ``AmbiguousRequest`` and is not repeated: paying twice is worse than failing once."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import aiohttp
import orjson
from multidict import CIMultiDict

from videogen_common.destinations.guarded_http import DestinationNotAllowed
from videogen_orchestrator.providers.rate import RateLimiter

log = logging.getLogger(__name__)

# Statuses that mean "not now": the server did not (or may not have) done the work; try again later.
TRANSIENT_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504})
# JSON answers from a provider's API are small; anything larger is not what we asked for.
MAX_JSON_BYTES = 4 * 1024 * 1024

Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """``attempts`` tries in all; after failed try ``n`` wait ``base * 2**(n-1)`` seconds (at most
    ``max_delay``) spread by ±``jitter``, or the server's Retry-After if longer (at most
    ``retry_after_max``)."""

    attempts: int = 5
    base_delay: float = 0.5
    max_delay: float = 30.0
    retry_after_max: float = 120.0
    jitter: float = 0.2

    def delay(self, attempt: int, *, rand: float, retry_after: float | None = None) -> float:
        """Seconds to wait after failed try number ``attempt`` (1-based); ``rand`` in [0, 1)."""
        backoff = min(self.base_delay * 2.0 ** (attempt - 1), self.max_delay)
        delay = backoff * (1 + self.jitter * (2 * rand - 1))
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.retry_after_max))
        return delay


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Retry-After as seconds from ``now``: delta-seconds or an HTTP-date (RFC 9110 §10.2.3); None if
    absent or unreadable."""
    if value is None:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return max(0.0, (moment - (now or datetime.now(UTC))).total_seconds())


@dataclass(frozen=True, slots=True)
class Reply:
    """A final answer (2xx, or an error status that retrying cannot fix)."""

    status: int
    body: Any
    headers: Mapping[str, str]  # case-insensitive

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


class TransientFailure(Exception):
    """Every try failed transiently (the last failure is the message); the request may work later."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class AmbiguousRequest(Exception):
    """A non-idempotent request failed after it may have reached the provider: it was not repeated.
    ``headers``: the answer's, if there was one (a provider may name the request it made there)."""

    def __init__(
        self, message: str, status: int | None = None, headers: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.headers: Mapping[str, str] = headers if headers is not None else CIMultiDict()


# Whether an error answer (status, headers, raw body) proves the request never reached the provider.
NeverMade = Callable[[int, Mapping[str, str], bytes | None], bool]


class ProviderHTTP:
    """One provider's API: a base URL, its auth headers, one connection pool (opened lazily, on the loop
    that uses it; ``close`` it on shutdown)."""

    def __init__(
        self,
        *,
        name: str,
        base_url: str,
        headers: Mapping[str, str],
        policy: RetryPolicy,
        timeout_seconds: float,
        sleep: Sleep = asyncio.sleep,
        rand: Callable[[], float] = random.random,
        limiter: RateLimiter | None = None,
    ) -> None:
        self.name = name
        # Shared by every key of the provider: each try takes a token first.
        self.limiter = limiter
        self.base_url = base_url.rstrip("/")
        self._headers = {"Accept": "application/json", **headers}
        self._policy = policy
        self._timeout = aiohttp.ClientTimeout(total=timeout_seconds)
        self._sleep = sleep
        self._rand = rand
        self._session: aiohttp.ClientSession | None = None

    def url(self, path: str) -> str:
        return path if path.startswith(("http://", "https://")) else f"{self.base_url}/{path.lstrip('/')}"

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(headers=self._headers, timeout=self._timeout)
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        idempotent: bool = True,
        safe_statuses: Collection[int] = (429,),
        never_made: NeverMade | None = None,
        retry_statuses: Collection[int] = TRANSIENT_STATUSES,
    ) -> Reply:
        """Send one request, retrying transient failures. Returns the final answer; raises
        ``TransientFailure`` once the tries are spent, ``AmbiguousRequest`` (non-idempotent requests) on a
        failure after which the provider may have acted: a non-idempotent request is repeated only after an
        answer in ``safe_statuses`` or one ``never_made`` says never reached the provider."""
        url = self.url(path)
        data = orjson.dumps(json) if json is not None else None
        headers = {"Content-Type": "application/json"} if data is not None else None
        attempts = self._policy.attempts
        for attempt in range(1, attempts + 1):
            retry_after: float | None = None
            if self.limiter is not None:
                await self.limiter.acquire()
            try:
                async with self._client().request(
                    method, url, data=data, headers=headers, allow_redirects=False
                ) as response:
                    raw = await _read_bounded(response, MAX_JSON_BYTES)
                    status = response.status
                    if status in retry_statuses:
                        failure = f"{method} {url}: HTTP {status}"
                        headers_of = CIMultiDict(response.headers)
                        if not idempotent and not (
                            status in safe_statuses
                            or (never_made is not None and never_made(status, headers_of, raw))
                        ):
                            raise AmbiguousRequest(failure, status, headers_of)
                        retry_after = parse_retry_after(response.headers.get("Retry-After"))
                        last: Exception = TransientFailure(failure, status)
                    else:
                        return Reply(status, _decode(raw), CIMultiDict(response.headers))
            except aiohttp.ClientConnectorError as exc:
                # Never connected: nothing was sent, so even a submit may be repeated.
                last = TransientFailure(f"{method} {url}: {exc.__class__.__name__}: {exc}")
            except (aiohttp.ClientError, TimeoutError) as exc:
                failure = f"{method} {url}: {exc.__class__.__name__}: {exc}".rstrip(": ")
                if not idempotent:
                    raise AmbiguousRequest(failure) from exc
                last = TransientFailure(failure)
            if attempt == attempts:
                raise last
            delay = self._policy.delay(attempt, rand=self._rand(), retry_after=retry_after)
            log.info(
                "provider request failed; retrying",
                extra={
                    "provider": self.name,
                    "attempt": attempt,
                    "delay_s": round(delay, 3),
                    "error": str(last),
                },
            )
            await self._sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover

    async def post_form(
        self, url: str, fields: Mapping[str, str], *, filename: str, content: bytes, content_type: str
    ) -> Reply:
        """POST a file as ``multipart/form-data`` (``fields`` first, the file as ``file``) to a URL the
        provider handed out (a pre-signed upload URL): without this API's headers, which are not that host's
        business. Transient failures are retried (the same upload again is harmless). Returns the final
        answer; raises ``TransientFailure`` once the tries are spent."""
        timeout = aiohttp.ClientTimeout(total=self._timeout.total)
        attempts = self._policy.attempts
        for attempt in range(1, attempts + 1):
            form = aiohttp.FormData()
            for name, value in fields.items():
                form.add_field(name, value)
            form.add_field("file", content, filename=filename, content_type=content_type)
            retry_after: float | None = None
            try:
                async with (
                    aiohttp.ClientSession(timeout=timeout) as session,
                    session.post(url, data=form, allow_redirects=False) as response,
                ):
                    raw = await _read_bounded(response, MAX_JSON_BYTES)
                    if response.status not in TRANSIENT_STATUSES:
                        return Reply(response.status, _decode(raw), CIMultiDict(response.headers))
                    failure = f"POST upload: HTTP {response.status}"
                    retry_after = parse_retry_after(response.headers.get("Retry-After"))
                    last: Exception = TransientFailure(failure, response.status)
            except (aiohttp.ClientError, TimeoutError) as exc:
                last = TransientFailure(f"POST upload: {exc.__class__.__name__}: {exc}".rstrip(": "))
            if attempt == attempts:
                raise last
            await self._sleep(self._policy.delay(attempt, rand=self._rand(), retry_after=retry_after))
        raise AssertionError("unreachable")  # pragma: no cover


async def _read_bounded(response: aiohttp.ClientResponse, limit: int) -> bytes | None:
    """The body, or None if it is longer than ``limit`` bytes (the rest is not read)."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.content.iter_chunked(64 * 1024):
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _decode(raw: bytes | None) -> Any:
    if raw is None:
        return {"error": "the response was too large to read"}
    if not raw:
        return None
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return raw[:2000].decode("utf-8", "replace")


class DownloadTooLarge(Exception):
    pass


class DownloadRefused(Exception):
    """The media URL answered with an error that retrying cannot fix (e.g. 403/404: expired or gone)."""


async def download(
    url: str,
    *,
    max_bytes: int,
    timeout_seconds: float,
    policy: RetryPolicy,
    sleep: Sleep = asyncio.sleep,
    rand: Callable[[], float] = random.random,
    session: Callable[[aiohttp.ClientTimeout], aiohttp.ClientSession] | None = None,
    follow_redirects: bool = True,
) -> bytes:
    """GET a provider's media file into memory, streaming, refusing more than ``max_bytes``. Transient
    failures are retried like API calls (the file does not change); raises ``TransientFailure``,
    ``DownloadRefused`` or ``DownloadTooLarge``. ``session`` makes the session each try uses (a guarded one
    for a client's URL, whose ``DestinationNotAllowed`` is raised as it is, never retried)."""
    timeout = aiohttp.ClientTimeout(total=timeout_seconds, sock_read=min(60.0, timeout_seconds))
    new_session = session or (lambda t: aiohttp.ClientSession(timeout=t))
    for attempt in range(1, policy.attempts + 1):
        retry_after: float | None = None
        try:
            async with (
                new_session(timeout) as client,
                client.get(
                    url, allow_redirects=follow_redirects, max_redirects=5, timeout=timeout
                ) as response,
            ):
                if response.status in TRANSIENT_STATUSES:
                    retry_after = parse_retry_after(response.headers.get("Retry-After"))
                    last: Exception = TransientFailure(f"GET media: HTTP {response.status}", response.status)
                elif response.status != 200:
                    raise DownloadRefused(f"GET media: HTTP {response.status}")
                else:
                    if response.content_length is not None and response.content_length > max_bytes:
                        raise DownloadTooLarge(
                            f"the file is {response.content_length} bytes (limit {max_bytes})"
                        )
                    chunks: list[bytes] = []
                    size = 0
                    async for chunk in response.content.iter_chunked(256 * 1024):
                        size += len(chunk)
                        if size > max_bytes:
                            raise DownloadTooLarge(f"the file is over the {max_bytes}-byte limit")
                        chunks.append(chunk)
                    return b"".join(chunks)
        except DestinationNotAllowed:
            raise
        except (aiohttp.ClientError, TimeoutError) as exc:
            last = TransientFailure(f"GET media: {exc.__class__.__name__}: {exc}".rstrip(": "))
        if attempt == policy.attempts:
            raise last
        await sleep(policy.delay(attempt, rand=rand(), retry_after=retry_after))
    raise AssertionError("unreachable")  # pragma: no cover
