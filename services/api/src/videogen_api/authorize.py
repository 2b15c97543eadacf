"""Scopes, enforced in one place: after authentication and before the rate limit and the handler
(``middleware.request_middleware``), a request whose API key does not hold the scope its route declares
(``declare.Endpoint.scope``) is answered 403 ``insufficient-scope`` naming that scope, and nothing else
happens (not even a rate limit count)."""

from __future__ import annotations

from aiohttp import web

from videogen_api.auth import Caller
from videogen_api.declare import declared
from videogen_api.problems import insufficient_scope


def check_scope(request: web.Request, caller: Caller) -> None:
    """Raise 403 ``insufficient-scope`` when the caller's key lacks the scope the matched route declares."""
    endpoint = declared(request.match_info.handler)
    # Every authenticated route declares a scope (openapi.endpoints refuses one that does not); a path that
    # matched no route has no declaration and answers 404 or 405 as before.
    if endpoint is not None and endpoint.scope is not None and endpoint.scope not in caller.scopes:
        raise insufficient_scope(endpoint.scope.value)
