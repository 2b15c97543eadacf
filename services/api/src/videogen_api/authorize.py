"""Scopes, enforced in one place: after authentication and before the rate limit and the handler, a request
whose API key does not hold the scope its route declares (``declare.Endpoint.scope``) is answered 403
``insufficient-scope`` naming that scope, and nothing else happens (not even a rate limit count)."""

from __future__ import annotations

from aiohttp import web
from aiohttp.typedefs import Handler

from videogen_api.declare import declared
from videogen_api.middleware import CALLER
from videogen_api.problems import insufficient_scope


@web.middleware
async def scope_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    caller = request.get(CALLER)
    if caller is not None:
        endpoint = declared(request.match_info.handler)
        # Every authenticated route declares a scope (openapi.endpoints refuses one that does not); a path
        # that matched no route has no declaration and answers 404 or 405 as before.
        if endpoint is not None and endpoint.scope is not None and endpoint.scope not in caller.scopes:
            raise insufficient_scope(endpoint.scope.value)
    return await handler(request)
