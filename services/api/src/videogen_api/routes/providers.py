"""GET /v1/providers: every provider the API knows, whether this deployment offers it, and what it can make
(from ``videogen_common.capabilities``, the tables the orchestrator's adapters are held to)."""

from __future__ import annotations

from aiohttp import web

from videogen_api import state
from videogen_api.serialize import json_response
from videogen_common.capabilities import CAPABILITIES
from videogen_common.domain import Provider

routes = web.RouteTableDef()


@routes.get("/v1/providers")
async def list_providers(request: web.Request) -> web.Response:
    enabled = request.app[state.SETTINGS].providers
    return json_response(
        {
            "data": [
                {"id": p.value, "enabled": p in enabled, "capabilities": CAPABILITIES[p].public()}
                for p in Provider
            ]
        }
    )
