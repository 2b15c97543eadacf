"""GET /v1/media/{folder}/{file}: serves stored videos and thumbnails through signed links, from whichever
backend holds them, streamed in chunks with single byte ranges and conditional requests."""

from __future__ import annotations

import logging
from datetime import UTC
from email.utils import format_datetime
from typing import Annotated

from aiohttp import hdrs, web
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from videogen_api import state
from videogen_api.byte_ranges import Plan, plan
from videogen_api.declare import REQUEST_ID, Endpoint, Parameter, problem
from videogen_api.middleware import REQUEST_ID_KEY
from videogen_api.problems import Problem, gone, not_found
from videogen_api.query import Param, first, parse_query
from videogen_common.media import (
    CONTENT_TYPES,
    MediaChanged,
    MediaInfo,
    MediaStore,
    check_key,
    content_type_of,
    verify_media_link,
)

log = logging.getLogger(__name__)
routes = web.RouteTableDef()

# A stored object may be replaced between its stat and its read (only if an orchestrator stores a
# generation's media again); it is read again this many times before giving up.
_READ_ATTEMPTS = 3


def _expires(values: list[str]) -> int | None:
    try:
        return int(first(values))
    except ValueError:
        return None


class MediaLink(BaseModel):
    """A signed link's query string. Nothing in it is refused here: a missing or malformed expiry or signature
    makes a link that does not verify, answered like a missing file."""

    model_config = ConfigDict(frozen=True)

    exp: Annotated[
        int | None, BeforeValidator(_expires), Param("MediaExpires", {"type": "integer"}, required=True)
    ] = Field(None, description="The link's expiry (seconds since the epoch), as in the signed link.")
    sig: Annotated[
        str, BeforeValidator(first), Param("MediaSignature", {"type": "string"}, required=True)
    ] = Field("", description="The link's signature, as in the signed link.")

    def expires(self) -> int:
        if self.exp is None:
            raise ValueError("no expiry")
        return self.exp


MEDIA_FOLDER = Parameter(
    "MediaFolder",
    {
        "name": "folder",
        "in": "path",
        "required": True,
        "description": "The generation's id, as in the signed link.",
        "schema": {"type": "string", "pattern": "^[A-Za-z0-9_-]+$"},
    },
)
MEDIA_FILE = Parameter(
    "MediaFile",
    {
        "name": "file",
        "in": "path",
        "required": True,
        "description": "video.mp4 or thumbnail.jpg, as in the signed link.",
        "schema": {"type": "string", "pattern": "^[A-Za-z0-9_.-]+$"},
    },
)


# Two path segments, not one parameter holding a slash, which OpenAPI (so a generated client) cannot express:
# the key is ``{folder}/{file}``.
@routes.get("/v1/media/{folder:[A-Za-z0-9_-]+}/{file:[A-Za-z0-9_.-]+}")
@Endpoint(
    operation_id="getMedia",
    tag="Media",
    summary="Download a video or thumbnail",
    description=(
        "The target of a generation's video_url and thumbnail_url. The signature is the credential: no API "
        "key. An expired or forged link answers like a missing file; a link to a deleted generation's media "
        "answers 410 Gone. Supports a single byte `Range` (with "
        "`If-Range`), and conditional GET with `If-None-Match` / `If-Modified-Since` against the `ETag` and "
        "`Last-Modified` it sends; `HEAD` answers the headers alone."
    ),
    status=200,
    answer="The file.",
    content={
        media_type: {"schema": {"type": "string", "contentMediaType": media_type}}
        for media_type in sorted(set(CONTENT_TYPES.values()))
    },
    query=MediaLink,
    parameters=(MEDIA_FOLDER, MEDIA_FILE),
    errors={
        206: {
            "description": "The requested byte range (`Content-Range` says which).",
            "headers": {REQUEST_ID: {"$ref": f"#/components/headers/{REQUEST_ID}"}},
        },
        304: {
            "description": "Not modified: the client's copy (by `ETag` or date) is current.",
            "headers": {REQUEST_ID: {"$ref": f"#/components/headers/{REQUEST_ID}"}},
        },
        404: "NotFound",
        410: problem("gone: the generation was deleted (DELETE /v1/generations/{id}), its media with it."),
        416: problem(
            "range-not-satisfiable: the range starts past the end of the file "
            "(`Content-Range: bytes */size`)."
        ),
    },
    public=True,
)
async def get_media(request: web.Request) -> web.StreamResponse:
    app = request.app
    key = f"{request.match_info['folder']}/{request.match_info['file']}"
    link = parse_query(MediaLink, request.query)
    try:
        check_key(key)
        expires = link.expires()
    except ValueError:
        raise not_found("no such media") from None
    signing_key = app[state.SETTINGS].media_signing_key.get_secret_value()
    if not verify_media_link(signing_key, key, expires, link.sig, now=app[state.CLOCK].now()):
        # An expired or forged link looks like a missing file.
        raise not_found("no such media, or the link has expired")
    media = app[state.MEDIA]
    for _ in range(_READ_ATTEMPTS):
        info = await media.stat(key)
        if info is None:
            if await app[state.GENERATION_READS].was_deleted(request.match_info["folder"]):
                raise gone("the generation was deleted, and its media with it")
            raise not_found("no such media")
        try:
            return await _send(request, media, key, info)
        except MediaChanged:
            continue
    raise Problem(
        503,
        "media-changing",
        "Media changing",
        "the file kept changing while it was read; retry",
        headers={hdrs.RETRY_AFTER: "1"},
    )


def _headers(request: web.Request, key: str, info: MediaInfo) -> dict[str, str]:
    return {
        REQUEST_ID: request[REQUEST_ID_KEY],
        hdrs.ACCEPT_RANGES: "bytes",
        hdrs.ETAG: f'"{info.etag}"',
        hdrs.LAST_MODIFIED: format_datetime(info.modified.astimezone(UTC), usegmt=True),
        hdrs.CACHE_CONTROL: "private, max-age=3600",
        hdrs.CONTENT_TYPE: content_type_of(key),
    }


async def _send(request: web.Request, media: MediaStore, key: str, info: MediaInfo) -> web.StreamResponse:
    chosen = plan(request, info)
    headers = _headers(request, key, info)
    if chosen.status == 304:
        del headers[hdrs.CONTENT_TYPE]
        return web.Response(status=304, headers=headers)
    if chosen.status == 416:
        raise Problem(
            416,
            "range-not-satisfiable",
            "Range Not Satisfiable",
            f"the file has {info.size} bytes",
            headers={hdrs.CONTENT_RANGE: f"bytes */{info.size}", hdrs.ACCEPT_RANGES: "bytes"},
        )
    if chosen.status == 206:
        headers[hdrs.CONTENT_RANGE] = f"bytes {chosen.start}-{chosen.stop - 1}/{info.size}"
    headers[hdrs.CONTENT_LENGTH] = str(chosen.length)
    if request.method == hdrs.METH_HEAD:
        return web.Response(status=chosen.status, headers=headers)
    return await _stream(request, media, key, info, chosen=chosen, headers=headers)


async def _stream(
    request: web.Request,
    media: MediaStore,
    key: str,
    info: MediaInfo,
    *,
    chosen: Plan,
    headers: dict[str, str],
) -> web.StreamResponse:
    # Opened before the response starts, so a vanished or replaced object is still a clean answer.
    async with media.open_range(key, info, chosen.start, chosen.stop) as chunks:
        response = web.StreamResponse(status=chosen.status, headers=headers)
        await response.prepare(request)
        try:
            async for chunk in chunks:
                await response.write(chunk)
            await response.write_eof()
        except ConnectionResetError:
            pass  # the client went away (a player seeking, a closed tab): routine
        except Exception:
            # The status line is gone; all that is left is to cut the body short, so the client sees an
            # incomplete response (its Content-Length is not met) rather than a wrong one.
            log.warning("media read failed mid-response", exc_info=True, extra={"key": key})
            response.force_close()
    return response
