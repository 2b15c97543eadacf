"""GET /v1/media/{folder}/{file}: serves stored videos and thumbnails through signed links."""

from __future__ import annotations

from pathlib import PurePosixPath

from aiohttp import web

from videogen_api import state
from videogen_api.problems import not_found
from videogen_common.media import CONTENT_TYPES, check_key, verify_media_link

routes = web.RouteTableDef()


# Two path segments, not one parameter holding a slash, which OpenAPI (so a generated client) cannot express:
# the key is ``{folder}/{file}``.
@routes.get("/v1/media/{folder:[A-Za-z0-9_-]+}/{file:[A-Za-z0-9_.-]+}")
async def get_media(request: web.Request) -> web.Response:
    app = request.app
    key = f"{request.match_info['folder']}/{request.match_info['file']}"
    try:
        check_key(key)
        expires = int(request.query.get("exp", ""))
    except ValueError:
        raise not_found("no such media") from None
    signing_key = app[state.SETTINGS].media_signing_key.get_secret_value()
    if not verify_media_link(
        signing_key, key, expires, request.query.get("sig", ""), now=app[state.CLOCK].now()
    ):
        # An expired or forged link looks like a missing file.
        raise not_found("no such media, or the link has expired")
    data = await app[state.MEDIA].get(key)
    if data is None:
        raise not_found("no such media")
    content_type = CONTENT_TYPES.get(PurePosixPath(key).suffix, "application/octet-stream")
    return web.Response(
        body=data, content_type=content_type, headers={"Cache-Control": "private, max-age=3600"}
    )
