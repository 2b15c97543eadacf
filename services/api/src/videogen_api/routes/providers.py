"""GET /v1/models: every model of every provider (``videogen_common.catalogue``, as the deployment configures
it), filtered by provider and by what a model can do.

GET /v1/providers: every provider the API knows, whether this deployment offers it, what it can make (from
``videogen_common.capabilities``, the tables the orchestrator's adapters are held to), its capacity and load
(the pools admission keeps in the store), its health (breakers, recent outcomes) and its prices."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any

from aiohttp import web
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from videogen_api import state
from videogen_api.declare import Endpoint
from videogen_api.query import Param, once, parse_query, refused
from videogen_api.schemas.providers import ModelList, ProviderList
from videogen_api.serialize import json_response
from videogen_common.capabilities import CAPABILITIES, AspectRatio, Resolution
from videogen_common.catalogue import ModelSpec
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
    catalogue = app[state.CATALOGUE]
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
                    "models": _models(catalogue.of(p.value), snapshot.model_of(p.value), p in enabled),
                    "prices": prices.public(p.value),
                }
                for p in Provider
            ]
        }
    )


def _models(models: Iterable[ModelSpec], default: str, enabled: bool) -> list[dict[str, Any]]:
    """The models as listed: ``default`` the one a request naming none gets (the deployment's *_MODEL)."""
    return [{**m.public(enabled), "default": m.id == default} for m in models]


def _once(values: list[str]) -> str:
    return once(values)


def _flag(values: list[str]) -> bool:
    """``true`` or ``false``, given once."""
    value = once(values)
    if value not in ("true", "false"):
        raise refused("bool", "must be true or false")
    return value == "true"


def _seconds(values: list[str]) -> int:
    """A whole number of seconds, 1 or more, given once."""
    value = once(values)
    if not value.isascii() or not value.isdigit() or int(value) < 1:
        raise refused("int", "must be a whole number of seconds, at least 1")
    return int(value)


def _one_of(enum: type[StrEnum]) -> Callable[[list[str]], str]:
    def value(values: list[str]) -> str:
        given = once(values)
        if given not in {e.value for e in enum}:
            raise refused("enum", f"{given!r} is not one of {', '.join(e.value for e in enum)}")
        return given

    return value


def _enum_param(component: str, enum: type[StrEnum]) -> Param:
    return Param(component, {"$ref": f"#/components/schemas/{enum.__name__}"})


_BOOLEAN = {"type": "boolean"}


class ModelsQuery(BaseModel):
    """GET /v1/models' query string: every filter given must hold (a capability's: whether it has it)."""

    model_config = ConfigDict(frozen=True)

    provider: Annotated[
        Provider | None, BeforeValidator(_one_of(Provider)), _enum_param("ModelProvider", Provider)
    ] = Field(None, description="Only this provider's models.")
    image_to_video: Annotated[bool | None, BeforeValidator(_flag), Param("ModelImageToVideo", _BOOLEAN)] = (
        Field(None, description="true: only models that take a first frame; false: only those that do not.")
    )
    text_to_video: Annotated[bool | None, BeforeValidator(_flag), Param("ModelTextToVideo", _BOOLEAN)] = (
        Field(
            None, description="true: only models that make a video from text alone; false: only the others."
        )
    )
    duration: Annotated[
        int | None, BeforeValidator(_seconds), Param("ModelDuration", {"type": "integer", "minimum": 1})
    ] = Field(None, description="Only models that make a video at least this many seconds long.")
    aspect_ratio: Annotated[
        AspectRatio | None,
        BeforeValidator(_one_of(AspectRatio)),
        _enum_param("ModelAspectRatio", AspectRatio),
    ] = Field(None, description="Only models that make this aspect ratio.")
    resolution: Annotated[
        Resolution | None, BeforeValidator(_one_of(Resolution)), _enum_param("ModelResolution", Resolution)
    ] = Field(None, description="Only models that make this resolution.")
    seed: Annotated[bool | None, BeforeValidator(_flag), Param("ModelSeed", _BOOLEAN)] = Field(
        None, description="true: only models that take a seed; false: only the others."
    )
    negative_prompt: Annotated[
        bool | None, BeforeValidator(_flag), Param("ModelNegativePrompt", _BOOLEAN)
    ] = Field(None, description="true: only models that take a negative prompt; false: only the others.")
    enabled: Annotated[bool | None, BeforeValidator(_flag), Param("ModelEnabled", _BOOLEAN)] = Field(
        None, description="true: only the models of providers this deployment offers; false: only the others."
    )


@routes.get("/v1/models")
@Endpoint(
    operation_id="listModels",
    scope=Scope.GENERATIONS_READ,
    tag="Generations",
    summary="List models and what each can make",
    description=(
        "Every model of every provider the API knows, as this deployment configures them: the durations, "
        "aspect ratios and resolutions it makes, whether it takes a first frame, a seed or a negative "
        "prompt, its price per second of video by resolution, and whether it is its provider's default "
        "(what a request that names no model gets). A request's model field names one; a request it cannot "
        "make is a 422 naming its limits. Filter by provider and by what a model can do: "
        "?provider=runway&image_to_video=true&duration=10."
    ),
    status=200,
    answer="The models that match every filter given, each provider's together.",
    model=ModelList,
    query=ModelsQuery,
    errors={422: "Invalid"},
)
async def list_models(request: web.Request) -> web.Response:
    app = request.app
    asked = parse_query(ModelsQuery, request.query)
    enabled = app[state.SETTINGS].providers
    snapshot = await app[state.PROVIDER_STATES].snapshot()
    found = app[state.CATALOGUE].filtered(
        provider=asked.provider.value if asked.provider is not None else None,
        image_to_video=asked.image_to_video,
        text_to_video=asked.text_to_video,
        duration=asked.duration,
        aspect_ratio=asked.aspect_ratio.value if asked.aspect_ratio is not None else None,
        resolution=asked.resolution.value if asked.resolution is not None else None,
        seed=asked.seed,
        negative_prompt=asked.negative_prompt,
    )
    data = [
        row
        for m in found
        for row in _models([m], snapshot.model_of(m.provider.value), m.provider in enabled)
        if asked.enabled is None or row["enabled"] == asked.enabled
    ]
    return json_response({"data": data})


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
