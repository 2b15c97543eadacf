"""A model per request, held to the official SDKs: every catalogued model is one the provider's SDK lists,
and every body an adapter builds for a generation that names a model (each option the catalogue says that
model takes, every duration) is one the SDK's parameter type for that model accepts — Runway's TypedDict per
model, Luma's video create params — and goes where the SDK sends it (Pika: the model's own endpoint)."""

from __future__ import annotations

import dataclasses
import itertools

import pytest
from lumaai.types.generations.video_create_params import VideoCreateParams
from runwayml.types import image_to_video_create_params, text_to_video_create_params

from tests.contract.sdk import RecordingHTTP, check_body, literal_values, union_member
from tests.support.images import solid_image
from videogen_common.catalogue import BUILT_IN, ModelSpec
from videogen_common.domain import Provider
from videogen_orchestrator.providers.base import Job
from videogen_orchestrator.providers.luma import LumaAdapter
from videogen_orchestrator.providers.pika import PikaAdapter, app_id, image_model
from videogen_orchestrator.providers.runway import RunwayAdapter

TEXT_PARAMS = text_to_video_create_params.TextToVideoCreateParams
IMAGE_PARAMS = image_to_video_create_params.ImageToVideoCreateParams


def models_of(provider: Provider) -> list[ModelSpec]:
    return [m for m in BUILT_IN if m.provider is provider]


def jobs(spec: ModelSpec, *, image: bytes | None = None) -> list[Job]:
    """A job naming ``spec`` for every ratio, resolution and duration (1-12 s) it may be asked for, with a
    seed and a negative prompt where it takes them (the api refuses them otherwise)."""
    caps = spec.capabilities
    made = []
    for ratio, resolution, duration in itertools.product(caps.aspect_ratios, caps.resolutions, range(1, 13)):
        made.append(
            Job(
                "gen_1",
                "a fox",
                duration,
                aspect_ratio=ratio,
                resolution=resolution,
                seed=7 if caps.seed else None,
                negative_prompt="fog" if caps.negative_prompt else None,
                model=spec.id,
                durations=caps.durations,
                image=image,
                image_type="image/png" if image is not None else None,
            )
        )
    return made


def test_every_catalogued_model_is_one_the_providers_sdk_lists() -> None:
    for spec in models_of(Provider.RUNWAY):
        if spec.capabilities.text:
            union_member(TEXT_PARAMS, spec.id)
        if spec.capabilities.image:
            union_member(IMAGE_PARAMS, spec.id)
    assert {m.id for m in models_of(Provider.LUMA)} == literal_values(VideoCreateParams, "model")
    assert {app_id(m.id) for m in models_of(Provider.PIKA)} == {"fal-ai/pika"}  # one app: one status path


@pytest.mark.parametrize("spec", models_of(Provider.RUNWAY), ids=lambda spec: spec.id)
async def test_each_runway_models_bodies_are_the_sdks_type_for_that_model(spec: ModelSpec) -> None:
    http = RecordingHTTP({("POST", "/v1/"): {"id": "task_1"}})
    adapter = RunwayAdapter(http)  # the deployment's default model: the job's own is asked for instead
    image = solid_image((9, 9, 9))
    made = (jobs(spec) if spec.capabilities.text else []) + (
        jobs(spec, image=image) if spec.capabilities.image else []
    )
    for job in made:
        await adapter.submit(job)
    assert len(http.sent) == len(made) > 0
    for (_, path, body), job in zip(http.sent, made, strict=True):
        params = IMAGE_PARAMS if job.image is not None else TEXT_PARAMS
        assert path == ("/v1/image_to_video" if job.image is not None else "/v1/text_to_video")
        assert body["model"] == spec.id
        check_body(union_member(params, spec.id), body)
        assert body["duration"] in spec.capabilities.durations
        assert ("negativePrompt" in body) is spec.capabilities.negative_prompt


@pytest.mark.parametrize("spec", models_of(Provider.LUMA), ids=lambda spec: spec.id)
async def test_each_luma_models_bodies_are_the_sdks_type(spec: ModelSpec) -> None:
    http = RecordingHTTP({("POST", "/generations/video"): {"id": "gen_1", "state": "queued"}})
    adapter = LumaAdapter(http, model="ray-2")
    made = jobs(spec) + [dataclasses.replace(job, image_url="https://x.test/i.png") for job in jobs(spec)]
    for job in made:
        await adapter.submit(dataclasses.replace(job, seed=None, negative_prompt=None))
    for _, path, body in http.sent:
        assert path == "/generations/video"
        assert body["model"] == spec.id
        check_body(VideoCreateParams, body)


@pytest.mark.parametrize("spec", models_of(Provider.PIKA), ids=lambda spec: spec.id)
async def test_each_pika_model_is_submitted_to_its_own_endpoint(spec: ModelSpec) -> None:
    http = RecordingHTTP({("POST", "/fal-ai/pika/"): {"request_id": "req_1"}})
    adapter = PikaAdapter(http)
    image = solid_image((9, 9, 9))
    if spec.capabilities.text:
        await adapter.submit(jobs(spec)[0])
    await adapter.submit(jobs(spec, image=image)[0])
    paths = [path for _, path, _ in http.sent]
    expected = ([f"/{spec.id}"] if spec.capabilities.text else []) + [f"/{image_model(spec.id)}"]
    assert paths == expected
