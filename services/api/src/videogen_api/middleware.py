"""What happens around every handler, in one middleware (``request_middleware``): drain tracking, metrics, the
request id, problem responses, authentication, the scope check (``authorize``) and the rate limit, in that
order."""

from __future__ import annotations

import asyncio
import logging
import re
import secrets
from time import perf_counter

from aiohttp import web
from aiohttp.typedefs import Handler

from videogen_api import state
from videogen_api.auth import Caller, bearer_token
from videogen_api.authorize import check_scope
from videogen_api.declare import REQUEST_ID
from videogen_api.metrics import CLIENT_CLOSED, METRICS, route_of
from videogen_api.problems import (
    INTERNAL,
    Problem,
    from_http_exception,
    rate_limited,
    store_unavailable,
    unauthorized,
)
from videogen_api.ratelimit import Decision
from videogen_common.logs import log_context
from videogen_common.store import unreachable
from videogen_common.tracing import annotate

log = logging.getLogger(__name__)

REQUEST_ID_KEY = web.RequestKey("request_id", str)
ACCOUNT = web.RequestKey("account_id", str)
API_KEY_ID = web.RequestKey("api_key_id", str)
CALLER = web.RequestKey("caller", Caller)
RATE_LIMIT = web.RequestKey("rate_limit", Decision)
_CLIENT_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
# Paths outside authentication: health probes and metrics, signed media links (the signature is the
# credential), the API's reference (the OpenAPI document and the page rendered from it), and the console's
# static files (every API call the console makes carries the tenant's key).
PUBLIC_PREFIXES = (
    "/healthz",
    "/readyz",
    "/metrics",
    "/v1/media/",
    "/v1/provider-callbacks/",
    "/openapi.json",
    "/docs",
    "/console",
)


@web.middleware
async def request_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """The one middleware: every request, from the outside in, is

    1. counted in flight for draining (``Drain.track``);
    2. measured: its route, method, status and time (``metrics``), whatever answer it gets, problem answers
       included, 499 when the client left first;
    3. given its request id (the client's ``X-Request-Id`` when well formed), on the answer, in the log
       context of every line logged while handling it, and on its span when traces are on;
    4. answered with a problem document when anything inside raises (``Problem``, an ``HTTPException`` of 400
       or more, the store unreachable or silent past its timeout as a 503 ``store-unavailable``, or any other
       error, logged, as a 500);
    5. authenticated, outside ``PUBLIC_PREFIXES`` (401 with no valid key), the account in the log context;
    6. checked for the scope its route declares (``authorize.check_scope``, 403);
    7. counted against its account's rate limit, or refused with 429 (the headers go on whatever answer it
       gets: ``rate_limit_headers``).

    One layer rather than one each: a middleware layer is a coroutine and a call frame per request."""
    app = request.app
    app[state.DRAIN].track()
    metrics = app[METRICS]
    started = perf_counter()
    status = 500
    metrics.in_flight.inc()
    try:
        sent = request.headers.get(REQUEST_ID, "")
        request_id = sent if _CLIENT_ID.match(sent) else "req_" + secrets.token_hex(12)
        request[REQUEST_ID_KEY] = request_id
        annotate(request_id=request_id)  # the request's span, when traces are on, names it too
        try:
            with log_context(request_id=request_id):  # on every line logged while handling it
                try:
                    response = await _authenticated(request, handler)
                except Problem as problem:
                    response = problem.response(request.path)
                except web.HTTPException as exc:
                    if exc.status < 400:
                        raise
                    response = from_http_exception(exc).response(request.path)
                except Exception as exc:
                    if unreachable(exc):  # the store away or silent: 503, within its timeout
                        log.warning(
                            "the store is unreachable",
                            extra={"request_id": request_id, "path": request.path, "error": repr(exc)},
                        )
                        response = store_unavailable().response(request.path)
                    else:
                        log.exception(
                            "unhandled error", extra={"request_id": request_id, "path": request.path}
                        )
                        response = INTERNAL.response(request.path)
        except web.HTTPException as exc:
            exc.headers[REQUEST_ID] = request_id
            raise
        response.headers[REQUEST_ID] = request_id
        status = response.status
        return response
    except web.HTTPException as exc:
        status = exc.status
        raise
    except asyncio.CancelledError:
        status = CLIENT_CLOSED
        raise
    finally:
        metrics.in_flight.dec()
        metrics.observe_request(route_of(request), request.method, status, perf_counter() - started)


async def _authenticated(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Steps 5 to 7 of ``request_middleware``, then the handler."""
    if request.path.startswith(PUBLIC_PREFIXES):
        return await handler(request)
    token = bearer_token(request.headers.get("Authorization"))
    app = request.app
    caller = await app[state.KEYS].caller_for(token)
    if caller is None:
        raise unauthorized("the API key is not valid: unknown, revoked or expired")
    request[CALLER] = caller
    request[ACCOUNT] = caller.account_id
    request[API_KEY_ID] = caller.key_id
    with log_context(account_id=caller.account_id):
        check_scope(request, caller)
        limiter = app.get(state.RATE_LIMITER)
        if limiter is not None:
            decision = await limiter.check(
                caller.account_id, limiter.policies.for_request(request.method, request.path)
            )
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
