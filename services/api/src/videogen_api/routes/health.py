"""Liveness and readiness probes (outside /v1, unauthenticated)."""

from __future__ import annotations

import asyncio

from aiohttp import web

from videogen_api import state
from videogen_api.serialize import json_response

routes = web.RouteTableDef()


@routes.get("/healthz")
async def healthz(_: web.Request) -> web.Response:
    return json_response({"status": "ok"})


@routes.get("/readyz")
async def readyz(request: web.Request) -> web.Response:
    checks: dict[str, str] = {}
    try:
        await asyncio.wait_for(request.app[state.STORE].db.command("ping"), 2)
        checks["store"] = "ok"
    except Exception as exc:
        checks["store"] = f"error: {exc.__class__.__name__}"
    checks["broker"] = "ok" if request.app[state.PUBLISHER].connected() else "error: not connected"
    ready = all(v == "ok" for v in checks.values())
    return json_response(
        {"status": "ok" if ready else "unavailable", "checks": checks}, status=200 if ready else 503
    )
