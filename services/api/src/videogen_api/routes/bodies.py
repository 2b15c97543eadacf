"""Reading JSON request bodies."""

from __future__ import annotations

from aiohttp import web

from videogen_api.problems import unsupported_media_type


async def json_body(request: web.Request) -> bytes:
    """The raw body of a JSON request; anything but application/json is 415. The size cap is aiohttp's
    ``client_max_size`` (413)."""
    if request.content_type != "application/json":
        raise unsupported_media_type(request.headers.get("Content-Type", ""))
    return await request.read()
