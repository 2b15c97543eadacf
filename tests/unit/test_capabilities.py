"""videogen_common.capabilities: one declaration of what each provider can make, which the adapters map
requests with and the api validates requests against."""

from __future__ import annotations

from typing import Any

import pytest

from videogen_common.capabilities import (
    ASPECT_RATIOS,
    CAPABILITIES,
    RESOLUTIONS,
    frame_size,
    unsupported,
)
from videogen_common.domain import Provider
from videogen_orchestrator.providers.base import Job
from videogen_orchestrator.providers.http import ProviderHTTP, RetryPolicy
from videogen_orchestrator.providers.luma import LumaAdapter
from videogen_orchestrator.providers.mock import MockProvider
from videogen_orchestrator.providers.pika import PikaAdapter
from videogen_orchestrator.providers.runway import RunwayAdapter

ADAPTERS: dict[Provider, Any] = {
    Provider.MOCK: MockProvider,
    Provider.RUNWAY: RunwayAdapter,
    Provider.LUMA: LumaAdapter,
    Provider.PIKA: PikaAdapter,
}


def http() -> ProviderHTTP:
    return ProviderHTTP(
        name="t", base_url="http://127.0.0.1:9", headers={}, policy=RetryPolicy(), timeout_seconds=1
    )


@pytest.mark.parametrize("provider", list(Provider))
def test_each_adapter_declares_its_providers_capabilities_and_only_known_values(provider: Provider) -> None:
    caps = ADAPTERS[provider].capabilities
    assert caps is CAPABILITIES[provider]
    assert set(caps.aspect_ratios) <= set(ASPECT_RATIOS)
    assert set(caps.resolutions) <= set(RESOLUTIONS)
    assert caps.default_resolution in caps.resolutions
    assert set(caps.native_ratios) <= set(caps.aspect_ratios)


def test_every_provider_is_declared() -> None:
    assert set(CAPABILITIES) == set(Provider)


@pytest.mark.parametrize(
    ("ratio", "resolution", "size"),
    [
        ("16:9", "360p", (640, 360)),
        ("9:16", "720p", (720, 1280)),
        ("1:1", "480p", (480, 480)),
        ("21:9", "1080p", (2520, 1080)),
        ("4:5", "540p", (540, 676)),
        ("4:3", "4k", (2880, 2160)),
    ],
)
def test_frame_size_is_the_resolutions_short_side_and_the_ratio_both_even(
    ratio: str, resolution: str, size: tuple[int, int]
) -> None:
    assert frame_size(ratio, resolution) == size
    assert all(side % 2 == 0 for side in size)


def test_what_a_provider_cannot_make_is_named_with_what_it_would_accept() -> None:
    errors = unsupported(
        Provider.RUNWAY, {"aspect_ratio": "1:1", "resolution": "1080p", "seed": 1, "negative_prompt": "x"}
    )
    assert [(e["field"], e["code"]) for e in errors] == [
        ("aspect_ratio", "unsupported_by_provider"),
        ("resolution", "unsupported_by_provider"),
        ("negative_prompt", "unsupported_by_provider"),
    ]
    assert errors[0]["message"] == "runway makes 16:9, 9:16; not 1:1"
    assert errors[1]["message"] == "runway makes 720p; not 1080p"
    assert unsupported(Provider.MOCK, {"aspect_ratio": "21:9", "seed": 3, "negative_prompt": "x"}) == []
    assert unsupported(Provider.LUMA, {}) == []


@pytest.mark.parametrize("provider", [Provider.RUNWAY, Provider.LUMA, Provider.PIKA])
def test_every_declared_ratio_and_resolution_is_what_the_adapter_plans_to_send(provider: Provider) -> None:
    caps = CAPABILITIES[provider]
    adapter = ADAPTERS[provider](http())
    for ratio in caps.aspect_ratios:
        for resolution in caps.resolutions:
            job = Job("gen_1", "a cat", 5, aspect_ratio=ratio, resolution=resolution)
            plan = adapter.plan(job)
            assert plan.get("ratio", plan.get("aspect_ratio")) == caps.native_ratio(ratio)
            if provider is not Provider.RUNWAY:
                assert plan["resolution"] == resolution
    unasked = adapter.plan(Job("gen_1", "a cat", 5))
    assert unasked.get("ratio", unasked.get("aspect_ratio")) == caps.native_ratio("16:9")


def test_the_mock_plans_the_frame_size_asked_for() -> None:
    mock = MockProvider()
    assert (mock.plan(Job("gen_1", "a cat", 3))["width"], mock.plan(Job("gen_1", "a cat", 3))["height"]) == (
        640,
        360,
    )
    plan = mock.plan(Job("gen_1", "a cat", 3, aspect_ratio="9:16", resolution="720p"))
    assert (plan["width"], plan["height"]) == (720, 1280)
