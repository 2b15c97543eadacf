"""Request id, problem responses and authentication, in that order around every handler."""

from __future__ import annotations

import logging
import re
import secrets

from aiohttp import web
from aiohttp.typedefs import Handler

from videogen_api import state
from videogen_api.auth import bearer_token
from videogen_api.problems import INTERNAL, Problem, from_http_exception, unauthorized

log = logging.getLogger(__name__)

REQUEST_ID = "X-Request-Id"
REQUEST_ID_KEY = web.RequestKey("request_id", str)
ACCOUNT = web.RequestKey("account_id", str)
_CLIENT_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
# Paths outside authentication: health probes, signed media links (the signature is the credential), and the
# API's reference (the OpenAPI document and the page rendered from it).
PUBLIC_PREFIXES = ("/healthz", "/readyz", "/v1/media/", "/openapi.json", "/docs")


@web.middleware
async def request_id_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    sent = request.headers.get(REQUEST_ID, "")
    request_id = sent if _CLIENT_ID.match(sent) else "req_" + secrets.token_hex(12)
    request[REQUEST_ID_KEY] = request_id
    try:
        response = await handler(request)
    except web.HTTPException as exc:
        exc.headers[REQUEST_ID] = request_id
        raise
    response.headers[REQUEST_ID] = request_id
    return response


@web.middleware
async def problem_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except Problem as problem:
        return problem.response(request.path)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        return from_http_exception(exc).response(request.path)
    except Exception:
        log.exception(
            "unhandled error", extra={"request_id": request.get(REQUEST_ID_KEY), "path": request.path}
        )
        return INTERNAL.response(request.path)


@web.middleware
async def auth_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    if request.path.startswith(PUBLIC_PREFIXES):
        return await handler(request)
    token = bearer_token(request.headers.get("Authorization"))
    account = await request.app[state.KEYS].account_for(token)
    if account is None:
        raise unauthorized("the API key is not valid")
    request[ACCOUNT] = account
    return await handler(request)


def account_of(request: web.Request) -> str:
    return request[ACCOUNT]
