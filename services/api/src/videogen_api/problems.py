"""RFC 9457 problem details: every error the API returns is one of these, as application/problem+json."""

from __future__ import annotations

from typing import Any

import orjson
from aiohttp import web

PROBLEM_CONTENT_TYPE = "application/problem+json"
TYPE_PREFIX = "urn:videogen:problem:"


class Problem(Exception):
    """An error that is also a response."""

    def __init__(
        self,
        status: int,
        slug: str,
        title: str,
        detail: str | None = None,
        *,
        headers: dict[str, str] | None = None,
        **extensions: Any,
    ) -> None:
        super().__init__(detail or title)
        self.status = status
        self.slug = slug
        self.title = title
        self.detail = detail
        self.headers = headers or {}
        self.extensions = extensions

    def response(self, instance: str) -> web.Response:
        body: dict[str, Any] = {"type": TYPE_PREFIX + self.slug, "title": self.title, "status": self.status}
        if self.detail:
            body["detail"] = self.detail
        body["instance"] = instance
        body.update(self.extensions)
        return web.Response(
            status=self.status,
            body=orjson.dumps(body),
            content_type=PROBLEM_CONTENT_TYPE,
            headers=self.headers,
        )


def malformed_json(detail: str) -> Problem:
    return Problem(400, "malformed-json", "Malformed JSON", detail)


def unauthorized(detail: str) -> Problem:
    return Problem(
        401, "unauthorized", "Unauthorized", detail, headers={"WWW-Authenticate": 'Bearer realm="videogen"'}
    )


def insufficient_scope(scope: str, detail: str | None = None) -> Problem:
    """403: the API key does not hold ``scope``, which the request needs; nothing was done."""
    return Problem(
        403,
        "insufficient-scope",
        "Insufficient scope",
        detail or f"this API key does not hold the scope {scope!r}, which this request needs",
        scope=scope,
    )


def not_found(detail: str) -> Problem:
    return Problem(404, "not-found", "Not Found", detail)


def gone(detail: str) -> Problem:
    """410: it existed and was deleted."""
    return Problem(410, "gone", "Gone", detail)


def conflict(detail: str, *, slug: str = "conflict", title: str = "Conflict") -> Problem:
    """409: the request is valid but the resource's current state does not allow it."""
    return Problem(409, slug, title, detail)


def generation_terminal(generation_id: str, status: str) -> Problem:
    return conflict(
        f"generation {generation_id!r} is already {status}; only an unfinished generation can be canceled",
        slug="generation-terminal",
        title="Generation already finished",
    )


def generation_busy(generation_id: str) -> Problem:
    return conflict(
        f"generation {generation_id!r} kept changing while it was being canceled; try again",
        slug="generation-busy",
        title="Generation busy",
    )


def idempotency_key_reused() -> Problem:
    return Problem(
        422,
        "idempotency-key-reused",
        "Idempotency-Key reused",
        "this Idempotency-Key was already used with a different request body; a new request needs a new key",
    )


def rate_limited(policy: str, quota: int, window: int, retry_after: int) -> Problem:
    """429: the account has used its quota under the policy for the current window."""
    return Problem(
        429,
        "rate-limited",
        "Too Many Requests",
        f"more than {quota} requests in {window} s under the {policy!r} rate limit policy; "
        f"retry after {retry_after} s",
        headers={"Retry-After": str(retry_after)},
    )


def budget_exceeded(
    *,
    budget: str,
    api_key_id: str | None,
    limit: float,
    used: float,
    remaining: float,
    requested: float,
    resets_at: str,
    retry_after: int,
) -> Problem:
    """429: the generation would pass a hard budget of the account or of the key; nothing was written.
    Amounts as the API shows them (seconds; US dollars for a cost budget)."""
    whose = "the account's" if api_key_id is None else f"API key {api_key_id}'s"
    left = remaining
    return Problem(
        429,
        "budget-exceeded",
        "Budget exceeded",
        f"this generation needs {requested} of {whose} {budget} budget of {limit}, which has {left} left "
        f"until it resets at {resets_at}",
        headers={"Retry-After": str(retry_after)},
        budget=budget,
        api_key_id=api_key_id,
        limit=limit,
        used=used,
        remaining=left,
        requested=requested,
        resets_at=resets_at,
    )


def unsupported_media_type(got: str, expected: str = "application/json") -> Problem:
    return Problem(
        415,
        "unsupported-media-type",
        "Unsupported Media Type",
        f"expected {expected}, got {got or 'none'}",
    )


def invalid(errors: list[dict[str, str]]) -> Problem:
    return Problem(
        422,
        "validation-error",
        "Invalid request",
        "; ".join(f"{e['field']}: {e['message']}" for e in errors),
        errors=errors,
    )


# aiohttp's own HTTP errors (unknown route, wrong method, body too large) become problems too.
_HTTP_SLUGS = {
    404: ("not-found", "Not Found"),
    405: ("method-not-allowed", "Method Not Allowed"),
    413: ("payload-too-large", "Payload Too Large"),
}


def from_http_exception(exc: web.HTTPException) -> Problem:
    slug, title = _HTTP_SLUGS.get(exc.status, ("http-error", exc.reason))
    headers = {k: v for k, v in exc.headers.items() if k.lower() == "allow"}
    return Problem(
        exc.status, slug, title, exc.text if exc.text and exc.text != exc.reason else None, headers=headers
    )


INTERNAL = Problem(
    500, "internal-error", "Internal Server Error", "an unexpected error occurred; it has been logged"
)


def store_unavailable() -> Problem:
    """503: the store could not be reached, or did not answer within ``api_store_timeout_seconds``. What the
    request was doing may or may not have taken effect; the same request again is safe where it is
    idempotent (a creation under the same Idempotency-Key is made at most once)."""
    return Problem(
        503,
        "store-unavailable",
        "Service Unavailable",
        "the store could not be reached in time; the request may or may not have taken effect: retry it "
        "(a creation retried with the same Idempotency-Key is made at most once)",
        headers={"Retry-After": str(STORE_RETRY_AFTER_SECONDS)},
    )


STORE_RETRY_AFTER_SECONDS = 2
