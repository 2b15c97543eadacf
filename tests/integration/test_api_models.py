"""A model per request, through the real api over HTTP against the real store: ``GET /v1/models`` serves the
catalogue (filtered by provider and by what a model can do) and each provider in ``GET /v1/providers`` lists
its models; a request a named model cannot make (or an unknown model) is a 422 naming the model and its
limits, and writes nothing; the generation records the model, and its estimate is that model's price;
``"auto"`` and fallbacks choose among (provider, model) pairs; a deployment adds and reprices a model by
configuration (``VIDEOGEN_MODELS``, ``VIDEOGEN_PRICES``).

And end to end, with the orchestrator in the same process against fakes of Runway and Luma: the model asked
for reaches the provider's request body (checked against the official SDK's parameter type for that model), a
generation that falls back to a ``provider:model`` candidate is made there with that model, and each attempt,
the cost and the usage by model are priced by its model."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient
from lumaai.types.generations.video_create_params import VideoCreateParams
from runwayml.types import text_to_video_create_params

from tests.contract.sdk import check_body, union_member
from tests.support.api import api_client, bearer
from tests.support.env import settings_for
from tests.support.fake_providers.luma import FakeLuma
from tests.support.fake_providers.runway import FakeRunway
from tests.support.fakes import ManualClock
from tests.support.orchestration import provider_run
from videogen.keys import create_key
from videogen_api.schemas.common import ValidationProblem
from videogen_api.schemas.generations import Generation
from videogen_api.schemas.providers import ModelList, ProviderList
from videogen_api.schemas.usage import Usage
from videogen_api.settings import ApiSettings
from videogen_common.catalogue import BUILT_IN
from videogen_common.repositories.generations import GenerationRepository
from videogen_common.store import Store

Client = TestClient[web.Request, web.Application]
Doc = dict[str, Any]

ENABLED = "mock,runway,luma,pika"
TEXT_PARAMS = text_to_video_create_params.TextToVideoCreateParams
# A deployment's own model at Luma, and Ray 2 at its own price.
CONFIGURED = {
    "luma": {
        "ray-3": {
            "durations": [5, 10],
            "aspect_ratios": ["16:9", "9:16"],
            "resolutions": ["720p", "1080p"],
            "prices": {"720p": 0.25, "1080p": 0.5},
            "image_to_video": True,
            "description": "a deployment's own",
        },
        "ray-flash-2": None,
    },
    # Veo 3.1 made Runway's default: requests naming no model get it.
    "runway": {"veo3.1": {"default": True}},
}


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
    Generation.model_validate_json(orjson.dumps(created))
    return created


async def refused(client: Client, key: str, store: Store, **fields: Any) -> list[dict[str, str]]:
    """The 422's errors for a request; nothing was written."""
    body = {"prompt": "a lighthouse in a storm", "duration": 5, **fields}
    before = await store.generations.count_documents({})
    response = await client.post("/v1/generate", json=body, headers=bearer(key))
    assert response.status == 422, await response.text()
    assert response.content_type == "application/problem+json"
    problem = await response.json()
    ValidationProblem.model_validate_json(orjson.dumps(problem))
    assert await store.generations.count_documents({}) == before
    errors: list[dict[str, str]] = problem["errors"]
    return errors


async def models(client: Client, key: str, query: str = "") -> list[Doc]:
    response = await client.get(f"/v1/models{query}", headers=bearer(key))
    assert response.status == 200, await response.text()
    body = await response.json()
    ModelList.model_validate_json(orjson.dumps(body))
    data: list[Doc] = body["data"]
    return data


async def test_the_catalogue_is_served_with_each_models_limits_prices_and_default(
    client: Client, key: str
) -> None:
    served = await models(client, key)

    assert [(m["provider"], m["id"]) for m in served] == [(m.provider.value, m.id) for m in BUILT_IN]
    by_id = {m["id"]: m for m in served}
    assert by_id["veo3.1"] == {
        "provider": "runway",
        "id": "veo3.1",
        "default": False,
        "enabled": True,
        "description": "",
        "durations": [4, 6, 8],
        "aspect_ratios": ["16:9", "9:16"],
        "resolutions": ["720p", "1080p"],
        "default_resolution": "720p",
        "text_to_video": True,
        "image_to_video": True,
        "seed": True,
        "negative_prompt": True,
        "prices": [{"resolution": None, "usd_per_second": 0.4}],
    }
    assert by_id["gen4_turbo"]["text_to_video"] is False
    assert {m["id"] for m in served if m["default"]} == {
        "mock",
        "gen4.5",
        "ray-2",
        "fal-ai/pika/v2.2/text-to-video",
    }
    assert {"resolution": "4k", "usd_per_second": 0.438} in by_id["ray-flash-2"]["prices"]


async def test_models_are_filtered_by_provider_and_by_what_they_can_do(client: Client, key: str) -> None:
    ten_from_an_image = await models(client, key, "?provider=runway&image_to_video=true&duration=10")
    assert [m["id"] for m in ten_from_an_image] == ["gen4.5", "gen4_turbo"]  # Veo makes at most 8 s
    assert [m["id"] for m in await models(client, key, "?negative_prompt=true&provider=runway")] == [
        "veo3.1",
        "veo3.1_fast",
    ]
    assert [m["id"] for m in await models(client, key, "?aspect_ratio=21:9")] == [
        "mock",
        "ray-2",
        "ray-flash-2",
    ]
    assert [m["id"] for m in await models(client, key, "?text_to_video=false")] == [
        "gen4_turbo",
        "fal-ai/pika/v2.2/image-to-video",
    ]
    response = await client.get("/v1/models?duration=soon&provider=nobody", headers=bearer(key))
    assert response.status == 422
    assert {e["field"] for e in (await response.json())["errors"]} == {"duration", "provider"}
    assert (await client.get("/v1/models")).status == 401


async def test_each_provider_lists_its_models(client: Client, key: str) -> None:
    response = await client.get("/v1/providers", headers=bearer(key))
    body = await response.json()
    ProviderList.model_validate_json(orjson.dumps(body))
    listed = {p["id"]: [(m["id"], m["default"]) for m in p["models"]] for p in body["data"]}
    assert listed["runway"] == [
        ("gen4.5", True),
        ("veo3.1", False),
        ("veo3.1_fast", False),
        ("gen4_turbo", False),
    ]
    assert listed["luma"] == [("ray-2", True), ("ray-flash-2", False)]


async def test_a_named_model_is_recorded_and_estimated_at_its_price(client: Client, key: str) -> None:
    default = await create(client, key, provider="runway", duration=5)
    veo = await create(
        client, key, provider="runway", model="veo3.1", duration=5, negative_prompt="fog", resolution="1080p"
    )
    flash = await create(client, key, provider="luma", model="ray-flash-2", duration=5, resolution="1080p")

    assert (default["model"], default["estimated_cost"]) == ("gen4.5", 0.6)  # 5 s at $0.12
    assert (veo["model"], veo["estimated_cost"]) == ("veo3.1", 2.4)  # Veo makes 6 s for 5: at $0.40
    assert veo["resolution"] == "1080p"  # Veo makes 1080p (gen4.5 does not: the 422s below)
    assert (flash["model"], flash["estimated_cost"]) == ("ray-flash-2", 0.5475)  # 5 s at $0.1095
    response = await client.get(f"/v1/generations/{veo['id']}", headers=bearer(key))
    assert (await response.json())["model"] == "veo3.1"


@pytest.mark.parametrize(
    ("fields", "field", "says"),
    [
        ({"model": "veo3.1", "duration": 10}, "duration", "veo3.1 makes 4, 6, 8 s; not 10"),
        ({"model": "gen4_turbo"}, "image", "gen4_turbo makes videos only from a first frame"),
        ({"model": "gen4.5", "negative_prompt": "fog"}, "negative_prompt", "does not take a negative prompt"),
        ({"model": "veo3.1_fast", "aspect_ratio": "1:1"}, "aspect_ratio", "not 1:1"),
        ({"model": "gen4.5", "resolution": "1080p"}, "resolution", "not 1080p"),
    ],
)
async def test_a_request_a_named_model_cannot_make_is_a_422_naming_the_model_and_its_limits(
    client: Client, key: str, store: Store, fields: Doc, field: str, says: str
) -> None:
    errors = await refused(client, key, store, provider="runway", **fields)

    assert [(e["field"], e["code"]) for e in errors] == [(field, "unsupported_by_model")]
    model = fields["model"]
    assert says in errors[0]["message"]
    assert f"runway model {model} makes " in errors[0]["message"]  # its limits


async def test_an_unknown_model_is_a_422_listing_the_providers_models(
    client: Client, key: str, store: Store
) -> None:
    errors = await refused(client, key, store, provider="luma", model="ray-9")
    assert errors == [
        {
            "field": "model",
            "message": "luma has no model 'ray-9'; its models: ray-2, ray-flash-2",
            "code": "unknown_model",
        }
    ]
    bad = await client.post(
        "/v1/generate",
        json={"prompt": "x", "duration": 5, "provider": "auto", "fallback_providers": ["luma:"]},
        headers=bearer(key),
    )
    assert bad.status == 422
    assert [e["field"] for e in (await bad.json())["errors"]] == ["fallback_providers.0"]


async def test_auto_with_a_named_model_goes_only_where_that_model_is_served(client: Client, key: str) -> None:
    created = await create(client, key, provider="auto", model="ray-flash-2", duration=9)

    assert (created["provider"], created["model"]) == ("luma", "ray-flash-2")
    route = created["route"]
    assert [(c["provider"], c["model"]) for c in route["candidates"]] == [("luma", "ray-flash-2")]
    skipped = {c["provider"]: c for c in route["skipped"]}
    assert set(skipped) == {"mock", "runway", "pika"}
    assert "has no model 'ray-flash-2'" in skipped["runway"]["reason"]
    assert created["estimated_cost"] == round(9 * 0.0487, 4)


async def test_a_fallback_may_name_its_own_model_and_one_that_cannot_make_it_is_skipped(
    client: Client, key: str
) -> None:
    created = await create(
        client,
        key,
        provider="runway",
        model="veo3.1",
        duration=8,
        fallback_providers=["luma:ray-flash-2", "pika", "mock:mock"],
    )

    assert [(c["provider"], c["model"]) for c in created["route"]["candidates"]] == [
        ("runway", "veo3.1"),
        ("luma", "ray-flash-2"),
        ("mock", "mock"),
    ]
    # A fallback named without a model is asked for the named one: Pika does not serve veo3.1.
    assert [(c["provider"], c["model"]) for c in created["route"]["skipped"]] == [("pika", "veo3.1")]
    assert (created["model"], created["estimated_cost"]) == ("veo3.1", 3.2)


async def test_a_model_added_removed_and_repriced_by_configuration(
    base_env: dict[str, str], store: Store, key: str
) -> None:
    env = {
        **base_env,
        "VIDEOGEN_PROVIDERS": ENABLED,
        "VIDEOGEN_MODELS": orjson.dumps(CONFIGURED).decode(),
        "VIDEOGEN_PRICES": orjson.dumps({"luma": {"ray-2": {"720p": 0.2}}}).decode(),
    }
    settings = settings_for(ApiSettings, env, api_port=0, provider_state_cache_seconds=0)
    async with api_client(settings) as client:
        luma = await models(client, key, "?provider=luma")
        assert [m["id"] for m in luma] == ["ray-2", "ray-3"]  # ray-flash-2 removed, ray-3 added
        assert luma[0]["prices"] == [{"resolution": "720p", "usd_per_second": 0.2}]
        assert luma[1]["description"] == "a deployment's own"
        assert luma[1]["durations"] == [5, 10]

        ray3 = await create(client, key, provider="luma", model="ray-3", duration=10, resolution="1080p")
        assert (ray3["model"], ray3["estimated_cost"]) == ("ray-3", 5.0)  # 10 s at $0.50
        ray2 = await create(client, key, provider="luma", duration=5)
        assert (ray2["model"], ray2["estimated_cost"]) == ("ray-2", 1.0)  # repriced: 5 s at $0.20
        errors = await refused(client, key, store, provider="luma", model="ray-flash-2")
        assert [e["code"] for e in errors] == ["unknown_model"]
        runway = await models(client, key, "?provider=runway")
        assert [m["id"] for m in runway if m["default"]] == ["veo3.1"]
        veo = await create(client, key, provider="runway", duration=8)
        assert (veo["model"], veo["estimated_cost"]) == ("veo3.1", 3.2)


async def test_the_model_asked_for_reaches_the_provider_and_each_attempt_is_priced_by_its_model(
    client: Client, key: str, store: Store, base_env: dict[str, str], tmp_path: Path
) -> None:
    async with (
        FakeRunway(task_seconds=0.05) as runway,
        FakeLuma(task_seconds=0.05) as luma,
        provider_run(
            store, base_env, tmp_path / "media", runway, ManualClock(ticking=True), others=[luma]
        ) as run,
    ):
        await run.admission.register()
        veo = await create(
            client, key, provider="runway", model="veo3.1", duration=8, negative_prompt="fog", seed=3
        )
        assert await run.runner.start(veo["id"])
        await run.runner.wait_idle()
        # Runway fails the next task (and refunds it); allowed to move on, it is made at Luma's Ray Flash 2.
        runway.failure = "INTERNAL"
        moved = await create(
            client,
            key,
            provider="runway",
            model="veo3.1_fast",
            duration=5,
            fallback_providers=["luma:ray-flash-2"],
            fallback_on_failure=True,
        )
        assert await run.runner.start(moved["id"])
        await run.runner.wait_idle()

        final = []
        for generation in (veo, moved):
            response = await client.get(f"/v1/generations/{generation['id']}", headers=bearer(key))
            final.append(Generation.model_validate_json(await response.read()))
        usage = Usage.model_validate_json(await (await client.get("/v1/usage", headers=bearer(key))).read())

    assert [g.status.value for g in final] == ["completed", "completed"], [g.error for g in final]
    # What reached Runway: each the SDK's body for its model, the negative prompt where Veo takes one.
    assert [s["model"] for s in runway.submissions] == ["veo3.1", "veo3.1_fast"]
    for body in runway.submissions:
        check_body(union_member(TEXT_PARAMS, body["model"]), body)
    assert runway.submissions[0] == {
        "model": "veo3.1",
        "promptText": "a lighthouse in a storm",
        "ratio": "1280:720",
        "duration": 8,
        "seed": 3,
        "negativePrompt": "fog",
    }
    assert runway.submissions[1]["duration"] == 6  # Veo's nearest to 5 s
    # ... and Luma: the fallback's own model.
    assert [s["model"] for s in luma.submissions] == ["ray-flash-2"]
    check_body(VideoCreateParams, luma.submissions[0])

    assert (final[0].model, final[0].cost) == ("veo3.1", 3.2)  # 8 s at $0.40
    assert [(a.provider.value, a.model, a.cost) for a in final[0].attempts] == [("runway", "veo3.1", 3.2)]
    # The generation now records the candidate it moved to; each try its own model and price.
    assert (final[1].provider.value, final[1].model) == ("luma", "ray-flash-2")
    assert [(a.provider.value, a.model, a.cost) for a in final[1].attempts] == [
        ("runway", "veo3.1_fast", 0.0),
        ("luma", "ray-flash-2", 0.2435),  # 5 s at 720p, $0.0487
    ]
    assert final[1].cost == 0.2435
    # Usage: the cost by model, every try of each counted, and by provider as before.
    assert [(m.provider.value, m.model, m.attempts, m.cost) for m in usage.models] == [
        ("luma", "ray-flash-2", 1, 0.2435),
        ("runway", "veo3.1", 1, 3.2),
        ("runway", "veo3.1_fast", 1, 0.0),
    ]
    assert [(p.provider.value, p.attempts, p.cost) for p in usage.providers] == [
        ("luma", 1, 0.2435),
        ("runway", 2, 3.2),
    ]
    stored = await GenerationRepository(store).get(moved["id"])
    assert stored is not None and stored.provider_request is not None
    assert stored.provider_request["model"] == "ray-flash-2"
