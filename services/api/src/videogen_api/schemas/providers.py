"""``GET /v1/providers``: every provider, what it can make, its capacity, health and prices."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from videogen_api.schemas.common import Body, HealthState, Moment
from videogen_common.capabilities import AspectRatio, Resolution
from videogen_common.domain import Provider
from videogen_common.routing import Breaker


class ProviderCapabilities(Body):
    """What a provider can make."""

    durations: Annotated[
        list[int], Field(description="The lengths it makes; a request's duration is mapped to the nearest.")
    ]
    aspect_ratios: list[AspectRatio]
    resolutions: list[Resolution]
    default_resolution: Resolution
    image_input: Annotated[bool, Field(description="Whether it takes a first frame.")]
    seed: bool
    negative_prompt: bool


class ProviderKeyCapacity(Body):
    """One of the provider's keys (pools): its own limit and load."""

    name: Annotated[str | None, Field(description="The key's name; null for a provider's only key.")]
    limit: Annotated[int | None, Field(description="Configured concurrency; null: no limit of ours.")]
    effective_limit: Annotated[
        int | None,
        Field(description="What is used now: lowered when the provider refuses for capacity; null: none."),
    ]
    running: Annotated[int, Field(ge=0, description="Generations at the provider on this key now.")]
    paused_until: Annotated[
        Moment | None, Field(description="No new work starts on this key before then (after a refusal).")
    ]


class ProviderCapacity(Body):
    """What the whole deployment runs at a provider at once, across every orchestrator instance."""

    limit: Annotated[
        int | None, Field(description="The sum of the keys' limits; null if a key has no limit of ours.")
    ]
    effective_limit: Annotated[int | None, Field(description="The sum of the keys' effective limits.")]
    running: Annotated[int, Field(ge=0)]
    waiting: Annotated[int, Field(ge=0, description="Generations of every account waiting for a slot.")]
    keys: list[ProviderKeyCapacity]


class ProviderHealth(Body):
    """How the provider is doing, from its recent attempts (across its keys)."""

    state: Annotated[
        HealthState,
        Field(
            description="down: its breaker is open (routing skips it); degraded: half-open (probing), a "
            "key's breaker is not closed, or under 80% of recent attempts succeeded; operational otherwise."
        ),
    ]
    breaker: Annotated[Breaker, Field(description="closed, half_open (one probe at a time) or open.")]
    success_rate: Annotated[
        float | None, Field(ge=0, le=1, description="Of its recent attempts; null before any.")
    ]
    p50_seconds: Annotated[
        float | None, Field(ge=0, description="Median time to finish of its recent tasks; null before any.")
    ]
    samples: Annotated[int, Field(ge=0, description="Recent attempts counted.")]


class ProviderPrice(Body):
    model: str
    resolution: Annotated[Resolution | None, Field(description="null: any resolution.")]
    usd_per_second: Annotated[float, Field(ge=0, description="USD per second of video it makes.")]


class ModelPrice(Body):
    resolution: Annotated[Resolution | None, Field(description="null: any resolution.")]
    usd_per_second: Annotated[float, Field(ge=0, description="USD per second of video it makes.")]


class ModelInfo(Body):
    """One model of one provider: what it makes, what it takes, and its price."""

    provider: Provider
    id: Annotated[str, Field(description="What a request's model field names.")]
    default: Annotated[
        bool, Field(description="Whether a request to its provider that names no model gets this one.")
    ]
    enabled: Annotated[bool, Field(description="Whether this deployment offers its provider.")]
    description: str
    durations: Annotated[
        list[int],
        Field(
            description="The lengths it makes: a request naming it is made at the nearest at least as long, "
            "and refused if longer than its longest."
        ),
    ]
    aspect_ratios: list[AspectRatio]
    resolutions: list[Resolution]
    default_resolution: Resolution
    text_to_video: Annotated[bool, Field(description="Whether it makes a video from text alone.")]
    image_to_video: Annotated[bool, Field(description="Whether it takes a first frame.")]
    seed: bool
    negative_prompt: bool
    prices: Annotated[list[ModelPrice], Field(description="Per second of video, by resolution.")]


class ModelList(Body):
    """The models of every provider the API knows, as this deployment configures them."""

    data: list[ModelInfo]


class ProviderInfo(Body):
    id: Provider
    enabled: Annotated[bool, Field(description="Whether this deployment offers it.")]
    capabilities: ProviderCapabilities
    capacity: Annotated[
        ProviderCapacity | None,
        Field(description="Its capacity and load; null until an orchestrator has started with it enabled."),
    ]
    health: Annotated[
        ProviderHealth | None, Field(description="Its breaker and recent results; null when not enabled.")
    ]
    model: Annotated[
        str | None,
        Field(description="Its default model: what a request that names no model gets (GET /v1/models)."),
    ]
    models: Annotated[list[ModelInfo], Field(description="Every model it serves (as GET /v1/models).")]
    prices: Annotated[
        list[ProviderPrice],
        Field(description="What it charges, per model and resolution (docs/providers.md says the sources)."),
    ]


class ProviderList(Body):
    """Every provider the API knows, whether this deployment offers it, and what it can make."""

    data: list[ProviderInfo]
