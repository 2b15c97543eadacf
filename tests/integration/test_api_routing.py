"""Routing at creation, through the real api over HTTP against the real store: "auto" picks only providers
that can make what is asked (a 21:9 request goes only to Luma), a request none can make is a 422 naming why
for each provider, price order (``sort: price``) picks the cheaper of two healthy ones even when it has no
free capacity, an open breaker sends "auto" elsewhere and puts an explicit candidate last, and
GET /v1/providers shows each provider's health and prices.

And cost, with the orchestrator in the same process against fakes of Runway, Luma and Pika (fal): the
estimated cost at creation and the final cost of each generation, and the cost by provider in GET /v1/usage,
match the price table for a mix of providers, one of them tried at two."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from tests.support.api import api_client, bearer
from tests.support.env import settings_for
from tests.support.fake_providers.fal import FakeFal
from tests.support.fake_providers.luma import FakeLuma
from tests.support.fake_providers.runway import FakeRunway
from tests.support.fakes import ManualClock
from tests.support.orchestration import provider_run
from videogen.keys import create_key
from videogen_api.schemas.common import ValidationProblem
from videogen_api.schemas.generations import Generation
from videogen_api.schemas.providers import ProviderList
from videogen_api.schemas.usage import Usage
from videogen_api.settings import ApiSettings
from videogen_common.records.admission import ProviderPool
from videogen_common.repositories.provider_pools import ProviderPoolRepository
from videogen_common.store import Store

Client = TestClient[web.Request, web.Application]
Doc = dict[str, Any]

ENABLED = "runway,luma,pika"


@pytest.fixture
async def client(base_env: dict[str, str], store: Store) -> AsyncIterator[Client]:
    settings = settings_for(
        ApiSettings, {**base_env, "VIDEOGEN_PROVIDERS": ENABLED}, api_port=0, provider_state_cache_seconds=0
    )
    async with api_client(settings) as client:
        yield client


@pytest.fixture
async def key(store: Store) -> str:
    return await create_key(store, "acme")


async def create(client: Client, key: str, **fields: Any) -> Doc:
    body = {"prompt": "a lighthouse in a storm", "duration": 5, **fields}
    response = await client.post("/v1/generate", json=body, headers=bearer(key))
    assert response.status == 202, await response.text()
    created: Doc = await response.json()
    Generation.model_validate_json(await response.read())  # the documented shape, strictly
    return created


async def test_auto_with_21_9_goes_only_to_a_provider_that_makes_21_9(client: Client, key: str) -> None:
    created = await create(client, key, provider="auto", aspect_ratio="21:9")

    assert created["provider"] == "luma"
    route = created["route"]
    assert (route["requested"], route["sort"], route["fallback_on_failure"]) == ("auto", None, False)
    assert [c["provider"] for c in route["candidates"]] == ["luma"]
    assert {s["provider"]: s["reason"] for s in route["skipped"]} == {
        "mock": "not enabled on this deployment",
        "runway": "runway makes 16:9, 9:16; not 21:9",
        "pika": "pika makes 16:9, 9:16, 1:1, 4:5, 5:4, 3:2, 2:3; not 21:9",
    }
    assert route["reason"].startswith("luma first: auto, default order, #1: healthy")
    assert created["estimated_cost"] == 0.71  # Ray 2, 5 s at 720p
    assert (created["attempts"], created["cost"]) == ([], None)


async def test_a_request_no_provider_can_make_is_a_422_naming_why_for_each(client: Client, key: str) -> None:
    body = {
        "prompt": "p",
        "duration": 5,
        "provider": "auto",
        "aspect_ratio": "21:9",
        "negative_prompt": "rain",
    }
    response = await client.post("/v1/generate", json=body, headers=bearer(key))

    assert response.status == 422
    problem = ValidationProblem.model_validate_json(await response.read())
    assert problem.type == "urn:videogen:problem:validation-error"
    assert [(e.field, e.message, e.code) for e in problem.errors] == [
        ("provider", "mock: not enabled on this deployment", "provider_unavailable"),
        ("provider", "runway: aspect_ratio: runway makes 16:9, 9:16; not 21:9", "unsupported_by_provider"),
        (
            "provider",
            "runway: negative_prompt: runway does not take a negative prompt",
            "unsupported_by_provider",
        ),
        (
            "provider",
            "luma: negative_prompt: luma does not take a negative prompt",
            "unsupported_by_provider",
        ),
        (
            "provider",
            "pika: aspect_ratio: pika makes 16:9, 9:16, 1:1, 4:5, 5:4, 3:2, 2:3; not 21:9",
            "unsupported_by_provider",
        ),
    ]
    # Named fallbacks are reported by their place in the list.
    body = {"prompt": "p", "duration": 5, "provider": "runway", "fallback_providers": ["mock"], "seed": 1}
    body["aspect_ratio"] = "1:1"
    response = await client.post("/v1/generate", json=body, headers=bearer(key))
    assert response.status == 422
    assert [e["field"] for e in (await response.json())["errors"]] == ["provider", "fallback_providers.0"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"fallback_providers": ["luma", "luma"]}, "body"),
        ({"provider": "luma", "fallback_providers": ["luma"]}, "body"),
        ({"fallback_providers": []}, "fallback_providers"),
        ({"fallback_providers": ["sora"]}, "fallback_providers.0"),
        ({"routing": {"sort": "cheapest"}}, "routing.sort"),
        ({"routing": {"sort": None}}, "routing.sort"),
        ({"fallback_on_failure": "yes"}, "fallback_on_failure"),
        ({"provider": "Auto"}, "provider"),
    ],
)
async def test_bad_routing_fields_are_422s_naming_them(
    client: Client, key: str, store: Store, body: Doc, field: str
) -> None:
    request = {"prompt": "p", "duration": 5, "provider": "runway", **body}
    response = await client.post("/v1/generate", json=request, headers=bearer(key))
    assert response.status == 422, await response.text()
    assert [e["field"] for e in (await response.json())["errors"]] == [field]
    assert await store.generations.count_documents({}) == 0


async def _runway_full(store: Store) -> None:
    """Runway's one key at its limit, Luma's free, as an orchestrator's admission keeps them."""
    now = datetime.now(UTC)
    pools = ProviderPoolRepository(store)
    runway = await pools.register(ProviderPool("runway", "runway", None, 1, 1, model="gen4.5"))
    await pools.register(ProviderPool("luma", "luma", None, 4, 4, model="ray-2", resolution="720p"))
    assert await pools.take(runway, "gen_other", "globex", now)


async def test_price_order_picks_the_cheaper_one_where_the_default_order_prefers_free_capacity(
    client: Client, key: str, store: Store
) -> None:
    # Both healthy and free: the cheaper one, whichever is named first.
    both_free = await create(
        client, key, provider="auto", fallback_providers=["luma", "runway"], routing={"sort": "price"}
    )
    assert both_free["provider"] == "runway"  # $0.60 against Luma's $0.71
    assert [c["provider"] for c in both_free["route"]["candidates"]] == ["runway", "luma"]
    every = await create(client, key, provider="auto", routing={"sort": "price"})
    assert [c["provider"] for c in every["route"]["candidates"]] == ["pika", "runway", "luma"]  # $0.20 first

    await _runway_full(store)
    by_default = await create(client, key, provider="auto", fallback_providers=["runway", "luma"])
    by_price = await create(
        client, key, provider="auto", fallback_providers=["runway", "luma"], routing={"sort": "price"}
    )

    assert by_default["provider"] == "luma"  # free capacity before price
    assert by_price["provider"] == "runway"  # price before capacity
    assert by_price["route"]["sort"] == "price"
    assert (by_default["estimated_cost"], by_price["estimated_cost"]) == (0.71, 0.6)
    assert "no free capacity" in by_default["route"]["candidates"][1]["reason"]


async def test_an_open_breaker_sends_auto_elsewhere_and_an_explicit_candidate_last(
    client: Client, key: str, store: Store
) -> None:
    until = datetime.now(UTC) + timedelta(minutes=5)
    await store.provider_health.insert_one(
        {"_id": "runway", "provider": "runway", "failures": 5, "opened_until": until, "outcomes": [False] * 5}
    )

    auto = await create(client, key, provider="auto", fallback_providers=["runway", "luma"])
    explicit = await create(client, key, provider="runway", fallback_providers=["luma"])

    assert [c["provider"] for c in auto["route"]["candidates"]] == ["luma", "runway"]
    assert [c["provider"] for c in explicit["route"]["candidates"]] == ["luma", "runway"]
    assert explicit["provider"] == "luma"
    assert explicit["route"]["candidates"][1]["reason"].startswith("breaker open: tried last")
    # A request for Runway alone goes there as before (and fails there if it is down).
    plain = await create(client, key, provider="runway")
    assert (plain["provider"], plain["route"]) == ("runway", None)

    response = await client.get("/v1/providers", headers=bearer(key))
    providers = ProviderList.model_validate_json(await response.read())
    health = {p.id.value: p.health for p in providers.data}
    assert health["runway"] is not None and health["runway"].state == "down"
    assert (health["runway"].breaker.value, health["runway"].success_rate, health["runway"].samples) == (
        "open",
        0.0,
        5,
    )
    assert health["luma"] is not None and health["luma"].state == "operational"
    assert health["mock"] is None  # not enabled here


async def test_providers_show_their_prices_and_the_model_in_use(client: Client, key: str) -> None:
    response = await client.get("/v1/providers", headers=bearer(key))
    by_id = {p["id"]: p for p in (await response.json())["data"]}

    assert by_id["runway"]["model"] == "gen4.5"
    assert {"model": "gen4.5", "resolution": None, "usd_per_second": 0.12} in by_id["runway"]["prices"]
    assert {"model": "ray-2", "resolution": "720p", "usd_per_second": 0.142} in by_id["luma"]["prices"]
    pika = {"model": "fal-ai/pika/v2.2/text-to-video", "resolution": "1080p", "usd_per_second": 0.09}
    assert pika in by_id["pika"]["prices"]


async def test_estimated_and_final_costs_and_usage_by_provider_match_the_price_table(
    client: Client, key: str, store: Store, base_env: dict[str, str], tmp_path: Path
) -> None:
    async with (
        FakeRunway(task_seconds=0.05) as runway,
        FakeLuma(task_seconds=0.05) as luma,
        FakeFal(task_seconds=0.05) as fal,
        provider_run(
            store, base_env, tmp_path / "media", runway, ManualClock(ticking=True), others=[luma, fal]
        ) as run,
    ):
        await run.admission.register()  # the models and resolutions the api prices with
        luma.failure = "The generation failed due to an internal error"
        made = [
            await create(client, key, provider="runway", duration=5),  # 5 s at $0.12
            await create(client, key, provider="pika", duration=7, resolution="1080p"),  # 10 s at $0.09
            # Luma fails the task (and refunds it); allowed to move on, it is made at Runway, 4 s at $0.12.
            await create(
                client,
                key,
                provider="luma",
                duration=4,
                fallback_providers=["runway"],
                fallback_on_failure=True,
            ),
        ]
        assert [g["estimated_cost"] for g in made] == [0.6, 0.9, 0.71]
        for generation in made:
            assert await run.runner.start(generation["id"])
        await run.runner.wait_idle()

        final = []
        for generation in made:
            response = await client.get(f"/v1/generations/{generation['id']}", headers=bearer(key))
            final.append(Generation.model_validate_json(await response.read()))
        assert [g.status.value for g in final] == ["completed"] * 3, [g.error for g in final]
        assert [g.cost for g in final] == [0.6, 0.9, 0.48]
        assert [[(a.provider.value, a.cost) for a in g.attempts] for g in final] == [
            [("runway", 0.6)],
            [("pika", 0.9)],
            [("luma", 0.0), ("runway", 0.48)],
        ]
        assert (
            final[2].attempts[0].error_code is not None
            and final[2].attempts[0].error_code.value == "provider_error"
        )

        async def usage() -> Usage:
            response = await client.get("/v1/usage", headers=bearer(key))
            assert response.status == 200
            return Usage.model_validate_json(await response.read())

        report = await usage()
        assert report.total.cost == 1.98
        assert sum(row.cost for row in report.data) == pytest.approx(1.98)
        assert [(p.provider.value, p.attempts, p.cost) for p in report.providers] == [
            ("luma", 1, 0.0),
            ("pika", 1, 0.9),
            ("runway", 2, 1.08),
        ]
        assert [k.cost for k in report.api_keys] == [1.98]


async def test_a_plain_request_is_estimated_and_routes_nothing(client: Client, key: str) -> None:
    created = await create(client, key, provider="pika", duration=3)
    assert (created["provider"], created["route"], created["estimated_cost"]) == ("pika", None, 0.2)
