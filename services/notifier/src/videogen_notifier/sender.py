"""One HTTP attempt at a delivery. No redirects are followed; only a 2xx within the timeout is success."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import aiohttp

from videogen_common.destinations.guarded_http import DestinationNotAllowed


@dataclass(frozen=True, slots=True)
class AttemptResult:
    status_code: int | None
    latency_ms: float
    error: str | None
    retry_after: float | None = None
    # False when trying again cannot help (the destination is refused): the delivery fails at once.
    retriable: bool = True

    @property
    def ok(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


def _retry_after(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None  # an HTTP-date is allowed by RFC 9110; treated as absent


class Sender:
    def __init__(
        self,
        session: aiohttp.ClientSession,
        timeout_seconds: float,
        on_attempt: Callable[[AttemptResult], None] | None = None,
    ) -> None:
        self._session = session
        self._timeout = aiohttp.ClientTimeout(total=timeout_seconds)
        self._on_attempt = on_attempt  # sees every attempt's result (the metrics)

    async def post(self, url: str, body: bytes, headers: dict[str, str]) -> AttemptResult:
        result = await self._post(url, body, headers)
        if self._on_attempt is not None:
            self._on_attempt(result)
        return result

    async def _post(self, url: str, body: bytes, headers: dict[str, str]) -> AttemptResult:
        started = time.perf_counter()
        try:
            async with self._session.post(
                url, data=body, headers=headers, timeout=self._timeout, allow_redirects=False
            ) as response:
                await response.read()
                error = None if 200 <= response.status < 300 else f"HTTP {response.status}"
                return AttemptResult(
                    response.status, _ms(started), error, _retry_after(response.headers.get("Retry-After"))
                )
        except DestinationNotAllowed as exc:
            return AttemptResult(None, _ms(started), str(exc), retriable=False)
        except TimeoutError:
            return AttemptResult(None, _ms(started), "timeout")
        except (aiohttp.ClientError, OSError) as exc:
            return AttemptResult(None, _ms(started), f"{exc.__class__.__name__}: {exc}")


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)
