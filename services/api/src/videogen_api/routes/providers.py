"""GET /v1/providers: every provider the API knows, whether this deployment offers it, what it can make (from
``videogen_common.capabilities``, the tables the orchestrator's adapters are held to), its capacity and load
(the pools admission keeps in the store), its health (breakers, recent outcomes) and its prices."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from aiohttp import web

from videogen_api import state
from videogen_api.declare import Endpoint
from videogen_api.schemas.providers import ProviderList
from videogen_api.serialize import json_response
from videogen_common.capabilities import CAPABILITIES
from videogen_common.clock import isoformat
from videogen_common.domain import Provider
from videogen_common.records.admission import ProviderPool
from videogen_common.repositories.provider_pools import ProviderPoolRepository
from videogen_common.repositories.waiting import WaitingRepository
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
        "422 naming the field and what the provider would accept. Each provider's capacity is the "
        "deployment's: its keys' limits, how many run and how many wait now; its health is its breaker "
        "(routing skips a provider that is down) and its recent success rate and p50 time to finish; its "
        "prices are per second of video, per model and resolution."
    ),
    status=200,
    answer="The providers.",
    model=ProviderList,
)
async def list_providers(request: web.Request) -> web.Response:
    app = request.app
    enabled = app[state.SETTINGS].providers
    store = app[state.STORE]
    pools: dict[str, list[ProviderPool]] = {}
    for pool in await ProviderPoolRepository(store).everything():
        pools.setdefault(pool.provider, []).append(pool)
    waiting = await WaitingRepository(store).waiting_by_provider()
    now = app[state.CLOCK].now()
    # Health as routing sees it (the same cached read), prices as the deployment sets them.
    snapshot, prices = await app[state.PROVIDER_STATES].snapshot(), app[state.PRICES]
    return json_response(
        {
            "data": [
                {
                    "id": p.value,
                    "enabled": p in enabled,
                    "capabilities": CAPABILITIES[p].public(),
                    "capacity": _capacity(pools.get(p.value), waiting.get(p.value, 0), now),
                    "health": snapshot.health_of(p.value).public() if p in enabled else None,
                    "model": snapshot.model_of(p.value),
                    "prices": prices.public(p.value),
                }
                for p in Provider
            ]
        }
    )


def _capacity(pools: list[ProviderPool] | None, waiting: int, now: datetime) -> dict[str, Any] | None:
    if not pools:
        return None
    pools = sorted(pools, key=lambda pool: pool.id)
    return {
        "limit": _total(pool.limit for pool in pools),
        "effective_limit": _total(pool.effective for pool in pools),
        "running": sum(pool.running for pool in pools),
        "waiting": waiting,
        "keys": [
            {
                "name": pool.name,
                "limit": pool.limit,
                "effective_limit": pool.effective,
                "running": pool.running,
                "paused_until": isoformat(pool.paused_until)
                if pool.paused_until and pool.paused(now)
                else None,
            }
            for pool in pools
        ],
    }


def _total(limits: Iterable[int | None]) -> int | None:
    """The sum, or None if any is None (a key without a limit makes the provider's unlimited)."""
    total = 0
    for limit in limits:
        if limit is None:
            return None
        total += limit
    return total
