"""The console: a web page for tenants under /console, on the api's own origin. Plain HTML, CSS and ES modules
shipped as package data (no build step); every call it makes is a public API call with the tenant's key.

The files are read once, when this module is imported, and served from memory (``static_files``). Every
answer under /console, errors included, carries a strict Content-Security-Policy (no inline script or style,
nothing from another origin but the signed media links' origin) and refuses framing, sniffing and referrers.
See docs/console.md."""

from __future__ import annotations

from importlib import resources
from urllib.parse import urlsplit

from aiohttp import web

from videogen_api import state, static_files
from videogen_api.problems import not_found

routes = web.RouteTableDef()

PREFIX = "/console"
# Read at import, not on the event loop.
ASSETS = static_files.load(resources.files("videogen_api") / "console")


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


@routes.get(PREFIX)
@routes.get(PREFIX + "/")
async def index(request: web.Request) -> web.Response:
    return static_files.send(request, ASSETS["index.html"])


@routes.get(PREFIX + "/{path:(?:js/)?[A-Za-z0-9_-]+\\.(?:js|css|svg)}")
async def asset(request: web.Request) -> web.Response:
    found = ASSETS.get(request.match_info["path"])
    if found is None:
        raise not_found("no such file")
    return static_files.send(request, found)
