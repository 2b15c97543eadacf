"""The API's reference: ``GET /openapi.json`` (the document, built once when the application is made) and
``GET /docs``, a viewer of it that can try a call with the reader's key: Swagger UI, from the files the pinned
``swagger-ui-py`` package ships (served here, so the page loads nothing from elsewhere), started by a script
of ours (no inline script). Every answer under /docs carries its own Content-Security-Policy."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from typing import Any

import orjson
from aiohttp import web

from videogen_api import static_files
from videogen_api.problems import not_found

routes = web.RouteTableDef()

PREFIX = "/docs"
# Ours, then the viewer's own files (only those the page uses).
ASSETS = {
    **static_files.load(resources.files("videogen_api") / "reference"),
    **static_files.load(
        resources.files("swagger_ui") / "static",
        only={"swagger-ui-bundle.js", "swagger-ui.css", "favicon-32x32.png"},
    ),
}
# Swagger UI sets style attributes and draws some icons as data: URIs; it runs no eval and loads no fonts.
CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
        "form-action 'none'",
    ]
)


@dataclass(frozen=True)
class Reference:
    """The OpenAPI document (``openapi.build_document``, built once by the app) and its JSON."""

    document: dict[str, Any]
    json: bytes

    @classmethod
    def of(cls, document: dict[str, Any]) -> Reference:
        return cls(document, orjson.dumps(document))


REFERENCE = web.AppKey("reference", Reference)


async def security_headers(request: web.BaseRequest, response: web.StreamResponse) -> None:
    """``on_response_prepare``: the viewer's headers on every answer under /docs, 404s included."""
    if isinstance(request, web.Request) and (request.path == PREFIX or request.path.startswith(PREFIX + "/")):
        response.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"


@routes.get("/openapi.json")
async def openapi_json(request: web.Request) -> web.Response:
    return web.Response(body=request.app[REFERENCE].json, content_type="application/json")


@routes.get(PREFIX)
async def docs_page(request: web.Request) -> web.Response:
    return static_files.send(request, ASSETS["index.html"])


@routes.get(PREFIX + "/{name:[A-Za-z0-9_.-]+}")
async def docs_asset(request: web.Request) -> web.Response:
    found = ASSETS.get(request.match_info["name"])
    if found is None or request.match_info["name"] == "index.html":
        raise not_found("no such file")
    return static_files.send(request, found)
