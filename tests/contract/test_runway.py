"""The Runway adapter and the Runway fake held to Runway's official Python SDK, ``runwayml`` (the version
``SDK_VERSION`` names; requirements/dev.in pins it): each request the adapter sends goes where the SDK's
resource sends it, with the SDK's credentials and version headers, and a body the SDK's own parameter type
for that model accepts (and the SDK, given those parameters, sends the same body); each answer the fake gives
is one the SDK's response models read, with no field they do not know; and the SDK's own client, pointed at
the fake, creates (from text, from an image, through an ephemeral upload), reads and cancels."""

from __future__ import annotations

import dataclasses
import inspect
import typing
from collections.abc import AsyncIterator, Callable
from typing import Any

import aiohttp
import pytest
import runwayml
from runwayml import NotFoundError, RunwayML
from runwayml.resources.tasks import TasksResource
from runwayml.resources.uploads import _RunwayUploadStartedResponse
from runwayml.types import (
    ImageToVideoCreateResponse,
    TaskRetrieveResponse,
    TextToVideoCreateResponse,
    image_to_video_create_params,
    text_to_video_create_params,
)

from tests.contract.sdk import (
    RecordingHTTP,
    accepted,
    answer_json,
    check_body,
    contract_headers,
    json_of,
    literal_values,
    members,
    off_loop,
    union_member,
)
from tests.support.fake_providers.common import Exchange
from tests.support.fake_providers.runway import FakeRunway
from tests.support.images import solid_image
from videogen_common.capabilities import CAPABILITIES
from videogen_common.catalogue import Catalogue
from videogen_common.domain import Provider
from videogen_orchestrator.providers.base import Job
from videogen_orchestrator.providers.http import ProviderHTTP, RetryPolicy
from videogen_orchestrator.providers.runway import (
    IMAGE_MODELS,
    MAX_DATA_URI_CHARS,
    POLL_INTERVAL_SECONDS,
    TEXT_MODELS,
    RunwayAdapter,
)
from videogen_orchestrator.settings import OrchestratorSettings

SDK_VERSION = "5.24.0"
TEXT_PARAMS = text_to_video_create_params.TextToVideoCreateParams
IMAGE_PARAMS = image_to_video_create_params.ImageToVideoCreateParams
RATIOS = CAPABILITIES[Provider.RUNWAY].aspect_ratios
CATALOGUE = Catalogue.configured()


@pytest.fixture
async def fake() -> AsyncIterator[FakeRunway]:
    async with FakeRunway(task_seconds=0.05) as fake:
        yield fake


@pytest.fixture
async def adapter_for(fake: FakeRunway) -> AsyncIterator[Callable[..., RunwayAdapter]]:
    """Adapters pointed at the fake (closed at the end)."""
    made: list[RunwayAdapter] = []

    def make(**options: Any) -> RunwayAdapter:
        http = ProviderHTTP(
            name="runway",
            base_url=fake.base_url,
            headers=RunwayAdapter.headers(fake.api_key),
            policy=RetryPolicy(attempts=1),
            timeout_seconds=10,
        )
        made.append(RunwayAdapter(http, **options))
        return made[-1]

    yield make
    for adapter in made:
        await adapter.close()


def sdk_for(fake: FakeRunway) -> RunwayML:
    # No retries (each request is sent once, as the adapter's submits are), and answers validated strictly.
    return RunwayML(
        api_key=fake.api_key, base_url=fake.base_url, max_retries=0, _strict_response_validation=True
    )


def first_frame(size: int | None = None) -> Job:
    image = solid_image((200, 30, 30)) if size is None else b"\x89PNG\r\n\x1a\n" + bytes(size)
    return Job("gen_1", "a red field", 5, aspect_ratio="9:16", seed=7, image=image, image_type="image/png")


def since(fake: FakeRunway, start: int) -> list[Exchange]:
    return fake.exchanges[start:]


def assert_same_call(ours: Exchange, sdks: Exchange, *, ids: tuple[str, str] | None = None) -> None:
    """The adapter's request and the SDK's for the same operation: method, path (with the task ids in it
    swapped), contract headers."""
    path = ours.path if ids is None else ours.path.replace(ids[0], ids[1])
    assert (ours.method, path) == (sdks.method, sdks.path)
    assert contract_headers(ours) == contract_headers(sdks)


def test_the_contract_is_held_to_the_sdk_version_it_names() -> None:
    assert runwayml.__version__ == SDK_VERSION


def test_the_api_version_the_adapter_sends_is_the_sdks() -> None:
    sdk = RunwayML(api_key="k", base_url="http://127.0.0.1:9")
    assert RunwayAdapter.headers("k") == {
        "Authorization": sdk.default_headers["Authorization"],
        "X-Runway-Version": sdk.default_headers["X-Runway-Version"],
    }
    assert OrchestratorSettings.model_fields["runway_api_version"].default == sdk.runway_version


def test_the_models_the_adapter_asks_for_are_the_sdks_and_veo3_is_not_among_them() -> None:
    for model in TEXT_MODELS:
        union_member(TEXT_PARAMS, model)
    for model in IMAGE_MODELS:
        union_member(IMAGE_PARAMS, model)
    with pytest.raises(AssertionError):
        union_member(TEXT_PARAMS, "veo3")
    with pytest.raises(ValueError, match="veo3"):
        RunwayAdapter(RecordingHTTP({}), model="veo3")


def test_the_statuses_the_adapter_reads_are_the_sdks() -> None:
    sdk_statuses = {
        status
        for member in members(TaskRetrieveResponse)
        for status in typing.get_args(member.model_fields["status"].annotation)
    }
    ours = {
        *RunwayAdapter.statuses.queued,
        *RunwayAdapter.statuses.running,
        "SUCCEEDED",
        "FAILED",
        "CANCELLED",
    }
    assert ours == sdk_statuses


def test_runway_is_read_no_more_often_than_its_sdk_says_it_may_be() -> None:
    assert "once every five seconds" in " ".join((inspect.getdoc(TasksResource.retrieve) or "").split())
    assert POLL_INTERVAL_SECONDS >= 5
    assert RunwayAdapter.poll_interval_seconds == POLL_INTERVAL_SECONDS
    assert OrchestratorSettings.model_fields["runway_poll_interval_seconds"].default == POLL_INTERVAL_SECONDS


def resolutions_of(model: str) -> tuple[str, ...]:
    """What the catalogue says the model makes (the api lets no other resolution through to it)."""
    spec = CATALOGUE.get(Provider.RUNWAY, model)
    assert spec is not None, model
    return spec.capabilities.resolutions


@pytest.mark.parametrize("model", sorted(TEXT_MODELS))
async def test_every_text_to_video_body_the_adapter_can_build_is_one_the_sdk_types(model: str) -> None:
    http = RecordingHTTP({("POST", "/v1/"): {"id": "task_1"}})
    adapter = RunwayAdapter(http, model=model)
    resolutions = resolutions_of(model)
    for ratio in RATIOS:
        for resolution in resolutions:
            for duration in range(1, 13):
                for seed in (None, 0, 4_294_967_295):
                    job = Job(
                        "gen_1", "a fox", duration, aspect_ratio=ratio, seed=seed, resolution=resolution
                    )
                    await adapter.submit(job)
    assert len(http.sent) == len(RATIOS) * len(resolutions) * 12 * 3
    for method, path, body in http.sent:
        assert (method, path) == ("POST", "/v1/text_to_video")
        check_body(union_member(TEXT_PARAMS, model), body)


@pytest.mark.parametrize("model", sorted(IMAGE_MODELS))
async def test_every_image_to_video_body_the_adapter_can_build_is_one_the_sdk_types(model: str) -> None:
    http = RecordingHTTP({("POST", "/v1/"): {"id": "task_1"}})
    adapter = RunwayAdapter(http, image_model=model)
    resolutions = resolutions_of(model)
    for ratio in RATIOS:
        for resolution in resolutions:
            for duration in range(1, 13):
                job = dataclasses.replace(
                    first_frame(), duration=duration, aspect_ratio=ratio, resolution=resolution
                )
                await adapter.submit(job)
    assert len(http.sent) == len(RATIOS) * len(resolutions) * 12
    for method, path, body in http.sent:
        assert (method, path) == ("POST", "/v1/image_to_video")
        check_body(union_member(IMAGE_PARAMS, model), body)


def test_a_field_name_or_value_that_strays_from_the_sdk_is_caught() -> None:
    """The check the tests above rely on fails on a wrong wire name, a value outside the SDK's set and a
    missing required field."""
    veo = union_member(TEXT_PARAMS, "veo3.1")
    good = {"model": "veo3.1", "promptText": "x", "ratio": "1280:720", "duration": 4}
    check_body(veo, good)
    assert literal_values(veo, "duration") == {4, 6, 8}
    for bad in (
        {**good, "prompt_text": "x"},  # the Python name, not the wire name
        {**good, "duration": 5},
        {**good, "ratio": "1280:768"},
        {k: v for k, v in good.items() if k != "promptText"},
    ):
        with pytest.raises((AssertionError, ValueError)):
            check_body(veo, bad)


@pytest.mark.parametrize("model", sorted(TEXT_MODELS))
async def test_a_create_from_text_is_the_sdks_request(
    fake: FakeRunway, adapter_for: Callable[..., RunwayAdapter], model: str
) -> None:
    sdk = sdk_for(fake)
    start = len(fake.exchanges)
    task_id = await adapter_for(model=model).submit(Job("gen_1", "a fox", 6, aspect_ratio="9:16", seed=9))
    [ours] = since(fake, start)
    kwargs = check_body(union_member(TEXT_PARAMS, model), json_of(ours))

    start = len(fake.exchanges)
    created = await off_loop(lambda: sdk.text_to_video.create(**kwargs))
    [sdks] = since(fake, start)

    assert_same_call(ours, sdks)
    assert json_of(ours) == json_of(sdks)
    assert {task_id, created.id} <= set(fake.tasks)


@pytest.mark.parametrize("model", sorted(IMAGE_MODELS))
async def test_a_create_from_an_image_is_the_sdks_request(
    fake: FakeRunway, adapter_for: Callable[..., RunwayAdapter], model: str
) -> None:
    sdk = sdk_for(fake)
    start = len(fake.exchanges)
    task_id = await adapter_for(image_model=model).submit(first_frame())
    [ours] = since(fake, start)
    kwargs = check_body(union_member(IMAGE_PARAMS, model), json_of(ours))
    assert json_of(ours)["promptImage"].startswith("data:image/png;base64,")

    start = len(fake.exchanges)
    created = await off_loop(lambda: sdk.image_to_video.create(**kwargs))
    [sdks] = since(fake, start)

    assert_same_call(ours, sdks)
    assert json_of(ours) == json_of(sdks)
    assert {task_id, created.id} <= set(fake.tasks)


async def test_a_first_frame_over_runways_data_uri_limit_goes_through_the_sdks_ephemeral_upload(
    fake: FakeRunway, adapter_for: Callable[..., RunwayAdapter]
) -> None:
    job = first_frame(MAX_DATA_URI_CHARS * 3 // 4)  # base64 makes it longer than the limit
    sdk = sdk_for(fake)

    start = len(fake.exchanges)
    task_id = await adapter_for().submit(job)
    upload, bucket, create = since(fake, start)
    start = len(fake.exchanges)
    uploaded = await off_loop(
        lambda: sdk.uploads.create_ephemeral(file=("first-frame.png", job.image or b""))
    )
    sdk_upload, sdk_bucket = since(fake, start)

    # The upload is started as the SDK starts it, and the file sent where Runway said, as the SDK sends it:
    # a form, without Runway's credentials.
    assert_same_call(upload, sdk_upload)
    assert json_of(upload) == json_of(sdk_upload) == {"filename": "first-frame.png", "type": "ephemeral"}
    for sent in (bucket, sdk_bucket):
        assert sent.method == "POST" and sent.path.startswith("/upload-bucket/")
        assert sent.headers["Content-Type"].startswith("multipart/form-data")
        assert "Authorization" not in sent.headers
    assert list(fake.uploaded.values()) == [job.image, job.image]
    # The task starts from the upload's runway:// URI, in a body the SDK types.
    body = json_of(create)
    check_body(union_member(IMAGE_PARAMS, "gen4.5"), body)
    assert body["promptImage"] == fake.runway_uri(bucket.path.rsplit("/", 1)[-1])
    assert task_id in fake.tasks
    # And the SDK starts one from its own upload just the same.
    created = await off_loop(
        lambda: sdk.image_to_video.create(
            model="gen4.5", prompt_image=uploaded.uri, prompt_text="x", ratio="1280:720", duration=5
        )
    )
    assert created.id in fake.tasks


async def test_a_read_and_a_cancel_are_the_sdks_requests(
    fake: FakeRunway, adapter_for: Callable[..., RunwayAdapter]
) -> None:
    sdk = sdk_for(fake)
    adapter = adapter_for()
    ours_id = await adapter.submit(Job("gen_1", "a fox", 5))
    sdks_id = (
        await off_loop(
            lambda: sdk.text_to_video.create(model="gen4.5", prompt_text="a", ratio="1280:720", duration=5)
        )
    ).id

    start = len(fake.exchanges)
    await adapter.poll(ours_id, Job("gen_1", "a fox", 5))
    await adapter.cancel(ours_id)
    read, cancel = since(fake, start)
    start = len(fake.exchanges)
    await off_loop(lambda: sdk.tasks.retrieve(sdks_id))
    await off_loop(lambda: sdk.tasks.delete(sdks_id))
    sdk_read, sdk_cancel = since(fake, start)

    assert_same_call(read, sdk_read, ids=(ours_id, sdks_id))
    assert_same_call(cancel, sdk_cancel, ids=(ours_id, sdks_id))
    assert fake.canceled == [ours_id, sdks_id]


async def test_the_sdks_client_creates_reads_and_cancels_against_the_fake(fake: FakeRunway) -> None:
    sdk = sdk_for(fake)
    fake.task_seconds = 60.0
    created = await off_loop(
        lambda: sdk.text_to_video.create(model="veo3.1", prompt_text="a fox", ratio="720:1280", duration=8)
    )
    running = await off_loop(lambda: sdk.tasks.retrieve(created.id))
    assert running.status == "RUNNING" and running.id == created.id
    await off_loop(lambda: sdk.tasks.delete(created.id))
    with pytest.raises(NotFoundError):
        await off_loop(lambda: sdk.tasks.retrieve(created.id))

    fake.task_seconds = 0.0
    done = await off_loop(
        lambda: sdk.text_to_video.create(model="gen4.5", prompt_text="a fox", ratio="1280:720", duration=5)
    )
    succeeded = await off_loop(lambda: sdk.tasks.retrieve(done.id))
    assert succeeded.status == "SUCCEEDED"
    assert succeeded.output == [fake.video_url(fake.tasks[done.id])]


async def test_every_answer_the_fake_gives_is_one_the_sdks_models_read(fake: FakeRunway) -> None:
    body = {"model": "gen4.5", "promptText": "x", "ratio": "1280:720", "duration": 5}
    views: dict[str, dict[str, Any]] = {}
    for phase, (queue, run, failure) in {
        "PENDING": (60.0, 60.0, None),
        "RUNNING": (0.0, 60.0, None),
        "SUCCEEDED": (0.0, 0.0, None),
        "FAILED": (0.0, 0.0, "SAFETY.INPUT.TEXT"),
    }.items():
        task = fake.new_task(body)
        task.queue_seconds, task.run_seconds, task.failure = queue, run, failure
        views[phase] = fake.view(task)
    fake.throttled = True
    views["THROTTLED"] = fake.view(next(iter(fake.tasks.values())))

    for status, view in views.items():
        read = accepted(TaskRetrieveResponse, view)
        assert read.status == status
    assert accepted(TaskRetrieveResponse, views["FAILED"]).failure_code == "SAFETY.INPUT.TEXT"
    created = answer_json(fake.created(next(iter(fake.tasks.values()))))
    accepted(TextToVideoCreateResponse, created)
    accepted(ImageToVideoCreateResponse, created)


async def test_the_fakes_upload_answer_is_the_one_the_sdk_reads(fake: FakeRunway) -> None:
    async with aiohttp.ClientSession(headers=RunwayAdapter.headers(fake.api_key)) as session:
        body = {"filename": "first-frame.png", "type": "ephemeral"}
        async with session.post(f"{fake.base_url}/v1/uploads", json=body) as response:
            assert response.status == 200
            answer = await response.json()
    started = accepted(_RunwayUploadStartedResponse, answer)
    assert started.uploadUrl.startswith(fake.origin + "/upload-bucket/")
