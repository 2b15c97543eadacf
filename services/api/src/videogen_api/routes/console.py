"""The console: a web page for tenants under /console, on the api's own origin. Plain HTML, CSS and ES modules
shipped as package data (no build step); every call it makes is a public API call with the tenant's key.

The files are read once, when this module is imported, and served from memory with a strong ETag
(``Cache-Control: no-cache``: the browser revalidates, a 304 costs no body). Every answer under /console,
errors included, carries a strict Content-Security-Policy (no inline script or style, nothing from another
origin but the signed media links' origin) and refuses framing, sniffing and referrers.
See docs/console.md."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib import resources
from urllib.parse import urlsplit

from aiohttp import web

from videogen_api import state
from videogen_api.problems import not_found

routes = web.RouteTableDef()

PREFIX = "/console"
_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}


@dataclass(frozen=True)
class Asset:
    body: bytes
    content_type: str
    etag: str


def _load() -> dict[str, Asset]:
    """Every file of the console package, by its path relative to it (``index.html``, ``js/app.js``…)."""
    assets: dict[str, Asset] = {}
    root = resources.files("videogen_api") / "console"

    def walk(node: resources.abc.Traversable, prefix: str) -> None:
        for child in node.iterdir():
            name = f"{prefix}{child.name}"
            if child.is_dir():
                walk(child, f"{name}/")
                continue
            suffix = "." + child.name.rsplit(".", 1)[-1]
            if suffix not in _TYPES:
                continue
            body = child.read_bytes()
            assets[name] = Asset(body, _TYPES[suffix], '"' + hashlib.sha256(body).hexdigest()[:32] + '"')

    walk(root, "")
    return assets


# Read at import, not on the event loop.
ASSETS = _load()


def content_security_policy(public_base_url: str) -> str:
    """The console's policy. Media (video, thumbnails) comes from the signed links the api serves under its
    public base URL: the page's own origin when the console is opened there, otherwise that origin, named."""
    parts = urlsplit(public_base_url)
    media = "'self'"
    if parts.scheme in ("http", "https") and parts.netloc:
        media += f" {parts.scheme}://{parts.netloc}"
    return "; ".join(
        [
            "default-src 'none'",
            "script-src 'self'",
            "style-src 'self'",
            f"img-src {media} data: blob:",
            f"media-src {media} blob:",
            "connect-src 'self'",
            "font-src 'none'",
            "object-src 'none'",
            "manifest-src 'none'",
            "frame-ancestors 'none'",
            "base-uri 'none'",
            "form-action 'none'",
        ]
    )


def is_console(path: str) -> bool:
    return path == PREFIX or path.startswith(PREFIX + "/")


async def security_headers(request: web.BaseRequest, response: web.StreamResponse) -> None:
    """``on_response_prepare``: the console's headers on every answer under /console, 404s included."""
    if not isinstance(request, web.Request) or not is_console(request.path):
        return
    settings = request.app[state.SETTINGS]
    response.headers["Content-Security-Policy"] = content_security_policy(settings.public_base_url)
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["X-Frame-Options"] = "DENY"
    response.headers["Cross-Origin-Opener-Policy"] = "same-origin"
    response.headers["Permissions-Policy"] = "camera=(), microphone=(), geolocation=(), payment=()"


def _send(request: web.Request, asset: Asset) -> web.Response:
    headers = {"ETag": asset.etag, "Cache-Control": "no-cache"}
    if asset.etag in request.headers.get("If-None-Match", ""):
        return web.Response(status=304, headers=headers)
    return web.Response(body=asset.body, headers={**headers, "Content-Type": asset.content_type})


@routes.get(PREFIX)
@routes.get(PREFIX + "/")
async def index(request: web.Request) -> web.Response:
    return _send(request, ASSETS["index.html"])


@routes.get(PREFIX + "/{path:(?:js/)?[A-Za-z0-9_-]+\\.(?:js|css|svg)}")
async def asset(request: web.Request) -> web.Response:
    found = ASSETS.get(request.match_info["path"])
    if found is None:
        raise not_found("no such file")
    return _send(request, found)
