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


def not_found(detail: str) -> Problem:
    return Problem(404, "not-found", "Not Found", detail)


def unsupported_media_type(got: str) -> Problem:
    return Problem(
        415,
        "unsupported-media-type",
        "Unsupported Media Type",
        f"expected application/json, got {got or 'none'}",
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
