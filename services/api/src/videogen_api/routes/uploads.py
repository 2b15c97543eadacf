"""POST /v1/uploads: an image for use as a generation's first frame (``"image": {"upload_id": …}``); GET and
DELETE /v1/uploads/{id}.

The body is the image's bytes with its ``Content-Type`` (``image/png``, ``image/jpeg``, ``image/webp``), or
a ``multipart/form-data`` form whose ``file`` part holds it. Either way the type is taken from the content,
which must decode as a PNG, JPEG or WebP image (``videogen_common.images``); the declared type is not
trusted. At most ``VIDEOGEN_IMAGE_MAX_BYTES``; usable for ``VIDEOGEN_UPLOAD_RETENTION_SECONDS`` by the account
that made it, and by no other (another account's upload id is a 404, like an unknown one). Then the retention
sweeper deletes its bytes and its document; a delete does the same at once.

The bytes go to media storage first, then the upload's document: the document is the commit point, so a
failure between the two leaves an unreferenced object, never an upload without its bytes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from typing import Any

from aiohttp import BodyPartReader, web
from aiohttp.http_exceptions import HttpProcessingError

from videogen_api import state
from videogen_api.declare import UPLOAD_ID, Endpoint, problem
from videogen_api.middleware import account_of
from videogen_api.problems import Problem, invalid, not_found, unsupported_media_type
from videogen_api.routes.audit import record_change
from videogen_api.schemas.uploads import Upload
from videogen_api.serialize import json_response
from videogen_common.audit import AuditEventType
from videogen_common.clock import isoformat
from videogen_common.ids import new_id
from videogen_common.images import CONTENT_TYPES, EXTENSIONS, NotAnImage, inspect_image
from videogen_common.repositories.uploads import UploadRepository
from videogen_common.scopes import Scope
from videogen_common.store import Store

routes = web.RouteTableDef()

IMAGE_TYPES = tuple(EXTENSIONS)
FORM = "multipart/form-data"
CHUNK = 64 * 1024


def too_large(limit: int) -> Problem:
    return Problem(413, "payload-too-large", "Payload Too Large", f"an upload is at most {limit} bytes")


async def _part_chunks(part: BodyPartReader) -> AsyncIterator[bytes]:
    while chunk := await part.read_chunk(CHUNK):
        yield chunk


async def _read(chunks: AsyncIterator[bytes], limit: int) -> bytes:
    """All of a body or a form part, refused as soon as it passes ``limit``."""
    data = bytearray()
    async for chunk in chunks:
        data += chunk
        if len(data) > limit:
            raise too_large(limit)
    return bytes(data)


async def _image_bytes(request: web.Request, limit: int) -> bytes:
    kind = request.content_type
    if kind in IMAGE_TYPES:
        if request.content_length is not None and request.content_length > limit:
            raise too_large(limit)
        return await _read(request.content.iter_chunked(CHUNK), limit)
    if kind != FORM:
        raise unsupported_media_type(request.headers.get("Content-Type", ""), ", ".join((*IMAGE_TYPES, FORM)))
    try:
        form = await request.multipart()
        async for part in form:
            if isinstance(part, BodyPartReader) and part.name == "file":
                return await _read(_part_chunks(part), limit)
    except (ValueError, HttpProcessingError) as exc:  # no boundary, a broken part header, a cut-off body
        raise Problem(
            400, "malformed-form", "Malformed form", f"the multipart form does not parse: {exc}"
        ) from None
    raise invalid([{"field": "file", "message": "the form has no file part", "code": "missing"}])


def upload_view(doc: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": doc["_id"],
        "content_type": doc["content_type"],
        "bytes": doc["bytes"],
        "width": doc["width"],
        "height": doc["height"],
        "created_at": isoformat(doc["created_at"]),
        "expires_at": isoformat(doc["expires_at"]),
    }


@routes.post("/v1/uploads")
@Endpoint(
    operation_id="createUpload",
    scope=Scope.GENERATIONS_WRITE,
    tag="Generations",
    summary="Upload an image for a first frame",
    description=(
        "The image's bytes with its Content-Type, or a multipart/form-data form whose file part holds them. "
        "Its type is taken from its content, which must decode as a PNG, JPEG or WebP image, at most "
        "8192 pixels on each side. Use the answer's id as image.upload_id on POST /v1/generate until "
        "expires_at; only this account can."
    ),
    status=201,
    answer="Created: the upload.",
    model=Upload,
    raw_body={
        "required": True,
        "content": {
            **{
                media_type: {"schema": {"type": "string", "contentMediaType": media_type}}
                for media_type in CONTENT_TYPES.values()
            },
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "properties": {
                        "file": {"type": "string", "contentMediaType": "application/octet-stream"}
                    },
                    "required": ["file"],
                }
            },
        },
    },
    errors={
        400: problem("malformed-form: the multipart form does not parse."),
        413: problem(
            "payload-too-large: the image is over the deployment's limit (VIDEOGEN_IMAGE_MAX_BYTES)."
        ),
        415: problem("unsupported-media-type: neither an image type nor multipart/form-data."),
        422: "Invalid",
    },
)
async def create_upload(request: web.Request) -> web.Response:
    app = request.app
    settings = app[state.SETTINGS]
    data = await _image_bytes(request, settings.image_max_bytes)
    if not data:
        raise invalid([{"field": "file", "message": "the image is empty", "code": "empty"}])
    try:
        info = await asyncio.to_thread(inspect_image, data)
    except NotAnImage as exc:
        raise invalid([{"field": "file", "message": str(exc), "code": "not_an_image"}]) from None
    now = app[state.CLOCK].now()
    upload_id = new_id("upl", now)
    key = f"{upload_id}/image{info.extension}"
    await app[state.MEDIA].put(key, data)
    doc = {
        "_id": upload_id,
        "account_id": account_of(request),
        "key": key,
        "content_type": info.content_type,
        "bytes": len(data),
        "width": info.width,
        "height": info.height,
        "created_at": now,
        "expires_at": now + timedelta(seconds=settings.upload_retention_seconds),
    }
    await UploadRepository(app[state.STORE]).insert(doc)
    return json_response(upload_view(doc), status=201)


@routes.get("/v1/uploads/{id}")
@Endpoint(
    operation_id="getUpload",
    scope=Scope.GENERATIONS_READ,
    tag="Generations",
    summary="Read an upload",
    description=(
        "Until it expires (expires_at) or is deleted; then, and for another account's upload, 404. Its bytes "
        "are not served back."
    ),
    status=200,
    answer="The upload.",
    model=Upload,
    parameters=(UPLOAD_ID,),
    errors={404: "NotFound"},
)
async def get_upload(request: web.Request) -> web.Response:
    app = request.app
    upload_id = request.match_info["id"]
    doc = await UploadRepository(app[state.STORE]).owned(upload_id, account_of(request))
    if doc is None or doc["expires_at"] <= app[state.CLOCK].now():
        raise not_found(f"no upload {upload_id!r}")
    return json_response(upload_view(doc))


@routes.delete("/v1/uploads/{id}")
@Endpoint(
    operation_id="deleteUpload",
    scope=Scope.GENERATIONS_WRITE,
    tag="Generations",
    summary="Delete an upload",
    description=(
        "Its bytes are deleted from storage at once, and it can no longer be used: a generation made from "
        "it that has not started yet fails with image_unusable. Deleted, or expired, it answers 404."
    ),
    status=204,
    answer="Deleted.",
    parameters=(UPLOAD_ID,),
    errors={404: "NotFound"},
)
async def delete_upload(request: web.Request) -> web.Response:
    """It expires now (unusable at once, and due to the retention sweeper should this process stop before
    the end), then its bytes are deleted, then its document."""
    app = request.app
    upload_id = request.match_info["id"]
    uploads, now = UploadRepository(app[state.STORE]), app[state.CLOCK].now()
    if not await uploads.expire_owned(upload_id, account_of(request), now):
        raise not_found(f"no upload {upload_id!r}")
    media = app[state.MEDIA]
    await media.delete(await media.keys_in(upload_id))
    await uploads.forget([upload_id], now)
    await record_change(request, AuditEventType.UPLOAD_DELETED, ("upload", upload_id))
    return web.Response(status=204)


async def usable_upload(store: Store, account_id: str, upload_id: str, now: datetime) -> dict[str, Any]:
    """The account's upload, still usable at ``now``: else a 404 (unknown, or another account's) or a 422
    (expired)."""
    doc = await UploadRepository(store).owned(upload_id, account_id)
    if doc is None:
        raise not_found(f"no upload {upload_id!r}")
    if doc["expires_at"] <= now:
        message = f"the upload expired at {isoformat(doc['expires_at'])}; upload the image again"
        raise invalid([{"field": "image.upload_id", "message": message, "code": "expired"}])
    return doc
