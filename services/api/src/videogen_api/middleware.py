"""Request id, problem responses, authentication and the rate limit, in that order around every handler (the
scope check, ``authorize``, comes between the last two)."""

from __future__ import annotations

import logging
import re
import secrets

from aiohttp import web
from aiohttp.typedefs import Handler

from videogen_api import state
from videogen_api.auth import Caller, bearer_token
from videogen_api.problems import INTERNAL, Problem, from_http_exception, rate_limited, unauthorized
from videogen_api.ratelimit import Decision
from videogen_common.logs import log_context
from videogen_common.tracing import annotate

log = logging.getLogger(__name__)

REQUEST_ID = "X-Request-Id"
REQUEST_ID_KEY = web.RequestKey("request_id", str)
ACCOUNT = web.RequestKey("account_id", str)
API_KEY_ID = web.RequestKey("api_key_id", str)
CALLER = web.RequestKey("caller", Caller)
RATE_LIMIT = web.RequestKey("rate_limit", Decision)
_CLIENT_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
# Paths outside authentication: health probes and metrics, signed media links (the signature is the
# credential), the API's reference (the OpenAPI document and the page rendered from it), and the console's
# static files (every API call the console makes carries the tenant's key).
PUBLIC_PREFIXES = ("/healthz", "/readyz", "/metrics", "/v1/media/", "/openapi.json", "/docs", "/console")


@web.middleware
async def request_id_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    sent = request.headers.get(REQUEST_ID, "")
    request_id = sent if _CLIENT_ID.match(sent) else "req_" + secrets.token_hex(12)
    request[REQUEST_ID_KEY] = request_id
    annotate(request_id=request_id)  # the request's span, when traces are on, names it too
    try:
        with log_context(request_id=request_id):  # on every line logged while handling it
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
    caller = await request.app[state.KEYS].caller_for(token)
    if caller is None:
        raise unauthorized("the API key is not valid: unknown, revoked or expired")
    request[CALLER] = caller
    request[ACCOUNT] = caller.account_id
    request[API_KEY_ID] = caller.key_id
    with log_context(account_id=caller.account_id):
        return await handler(request)


@web.middleware
async def rate_limit_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """After authentication: every authenticated request spends its account's budget under its policy, or
    is refused with 429 once the budget is spent. The headers go on whatever answer it gets
    (``rate_limit_headers``)."""
    account = request.get(ACCOUNT)
    limiter = request.app.get(state.RATE_LIMITER)
    if account is None or limiter is None:
        return await handler(request)
    decision = await limiter.check(account, limiter.policies.for_request(request.method, request.path))
    request[RATE_LIMIT] = decision
    if not decision.allowed:
        policy = decision.policy
        raise rate_limited(policy.name, policy.quota, policy.window, decision.reset_seconds)
    return await handler(request)


async def rate_limit_headers(request: web.BaseRequest, response: web.StreamResponse) -> None:
    """``on_response_prepare``: RateLimit-Policy and RateLimit on every answer to an authenticated request,
    the problem responses the outer middlewares build included."""
    decision = request.get(RATE_LIMIT)
    if decision is not None:
        response.headers.update(decision.headers)


def account_of(request: web.Request) -> str:
    return request[ACCOUNT]


def api_key_id_of(request: web.Request) -> str:
    """The id of the API key the request was made with."""
    return request[API_KEY_ID]


def caller_of(request: web.Request) -> Caller:
    """The API key the request was made with: its account, scopes and budgets."""
    return request[CALLER]
