"""GET /v1/providers: every provider the API knows, whether this deployment offers it, and what it can make
(from ``videogen_common.capabilities``, the tables the orchestrator's adapters are held to)."""

from __future__ import annotations

from aiohttp import web

from videogen_api import state
from videogen_api.declare import Endpoint
from videogen_api.schemas import ProviderList
from videogen_api.serialize import json_response
from videogen_common.capabilities import CAPABILITIES
from videogen_common.domain import Provider
from videogen_common.scopes import Scope

routes = web.RouteTableDef()


@routes.get("/v1/providers")
@Endpoint(
    operation_id="listProviders",
    scope=Scope.GENERATIONS_READ,
    tag="Generations",
    summary="List providers and what they can make",
    description=(
        "Every provider the API knows, whether this deployment offers it, and its aspect ratios, "
        "resolutions, durations and inputs. A request asking a provider for something it cannot make is a "
        "422 naming the field and what the provider would accept."
    ),
    status=200,
    answer="The providers.",
    model=ProviderList,
)
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
