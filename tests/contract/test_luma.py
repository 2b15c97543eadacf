"""The Luma adapter and the Luma fake held to Luma's official Python SDK, ``lumaai`` (the version
``SDK_VERSION`` names; requirements/dev.in pins it): the adapter creates where the SDK's video create calls
post (``/generations/video``), reads and deletes where its ``generations.get`` and ``generations.delete`` go,
with the SDK's credentials, and a create body the SDK's ``VideoCreateParams`` accepts (and the SDK, given
those parameters, sends the same body); each Generation the fake answers is one the SDK's ``Generation`` model
reads, with no field it does not know; and the SDK's own client, pointed at the fake, creates, reads and
deletes."""

from __future__ import annotations

import typing
from collections.abc import AsyncIterator, Callable
from typing import Any

import lumaai
import pytest
from lumaai import LumaAI, NotFoundError
from lumaai.types import Generation
from lumaai.types.generation_create_params import GenerationCreateParams
from lumaai.types.generations.video_create_params import VideoCreateParams

from tests.contract.sdk import (
    RecordingHTTP,
    accepted,
    answer_json,
    check_body,
    contract_headers,
    fields_of,
    json_of,
    literal_values,
    off_loop,
)
from tests.support.fake_providers.common import Exchange
from tests.support.fake_providers.luma import MODERATION_FAILURE, FakeLuma
from videogen_common.capabilities import CAPABILITIES
from videogen_common.domain import Provider
from videogen_common.pricing import DEFAULT_PRICES
from videogen_orchestrator.providers.base import Job
from videogen_orchestrator.providers.http import ProviderHTTP, RetryPolicy
from videogen_orchestrator.providers.luma import LumaAdapter

SDK_VERSION = "1.21.0"
CAPS = CAPABILITIES[Provider.LUMA]


@pytest.fixture
async def fake() -> AsyncIterator[FakeLuma]:
    async with FakeLuma(task_seconds=0.05) as fake:
        yield fake


@pytest.fixture
async def adapter_for(fake: FakeLuma) -> AsyncIterator[Callable[..., LumaAdapter]]:
    made: list[LumaAdapter] = []

    def make(**options: Any) -> LumaAdapter:
        http = ProviderHTTP(
            name="luma",
            base_url=fake.base_url,
            headers=LumaAdapter.headers(fake.api_key),
            policy=RetryPolicy(attempts=1),
            timeout_seconds=10,
        )
        made.append(LumaAdapter(http, **options))
        return made[-1]

    yield make
    for adapter in made:
        await adapter.close()


def sdk_for(fake: FakeLuma) -> LumaAI:
    return LumaAI(
        auth_token=fake.api_key, base_url=fake.base_url, max_retries=0, _strict_response_validation=True
    )


def since(fake: FakeLuma, start: int) -> list[Exchange]:
    return fake.exchanges[start:]


def test_the_contract_is_held_to_the_sdk_version_it_names() -> None:
    assert lumaai.__version__ == SDK_VERSION


def test_the_states_the_adapter_reads_are_the_sdks() -> None:
    states = typing.get_args(typing.get_args(Generation.model_fields["state"].annotation)[0])
    assert {*LumaAdapter.statuses.queued, *LumaAdapter.statuses.running, "completed", "failed"} == set(states)
    assert LumaAdapter.statuses.field == "state"


def test_the_models_ratios_and_resolutions_we_offer_are_the_sdks() -> None:
    assert set(DEFAULT_PRICES[Provider.LUMA]) == literal_values(VideoCreateParams, "model")
    assert set(CAPS.aspect_ratios) <= literal_values(VideoCreateParams, "aspect_ratio")
    resolutions = fields_of(VideoCreateParams)["resolution"]
    assert resolutions.wire == "resolution"
    # ``resolution`` and ``duration`` are typed Literal-or-str; their documented values are the Literal's.
    assert set(CAPS.resolutions) <= {"540p", "720p", "1080p", "4k"}
    assert {f"{d}s" for d in CAPS.durations} == {"5s", "9s"}
    # Both of the SDK's video create calls take the same parameters.
    assert fields_of(GenerationCreateParams).keys() == fields_of(VideoCreateParams).keys()


@pytest.mark.parametrize("model", ["ray-2", "ray-flash-2"])
async def test_every_create_body_the_adapter_can_build_is_one_the_sdk_types(model: str) -> None:
    http = RecordingHTTP({("POST", "/generations/video"): {"id": "gen_1", "state": "queued"}})
    adapter = LumaAdapter(http, model=model)
    for ratio in CAPS.aspect_ratios:
        for resolution in CAPS.resolutions:
            for duration in range(1, 13):
                await adapter.submit(Job("gen_1", "a fox", duration, ratio, resolution))
                job = Job("gen_1", "a fox", duration, ratio, resolution, image_url="https://x.test/i.png")
                await adapter.submit(job)
    assert len(http.sent) == 2 * len(CAPS.aspect_ratios) * len(CAPS.resolutions) * 12
    for method, path, body in http.sent:
        assert (method, path) == ("POST", "/generations/video")
        check_body(VideoCreateParams, body)
        assert body["duration"] in ("5s", "9s") and body["resolution"] in CAPS.resolutions


@pytest.mark.parametrize("first_frame", [False, True])
async def test_a_create_is_the_sdks_request(
    fake: FakeLuma, adapter_for: Callable[..., LumaAdapter], first_frame: bool
) -> None:
    sdk = sdk_for(fake)
    image_url = f"{fake.origin}/frame.png" if first_frame else None
    start = len(fake.exchanges)
    task_id = await adapter_for(model="ray-flash-2").submit(
        Job("gen_1", "a fox", 7, "21:9", "1080p", image_url=image_url)
    )
    [ours] = since(fake, start)
    kwargs = check_body(VideoCreateParams, json_of(ours))

    start = len(fake.exchanges)
    created = await off_loop(lambda: sdk.generations.video.create(**kwargs))
    [sdks] = since(fake, start)
    start = len(fake.exchanges)
    also = await off_loop(lambda: sdk.generations.create(**kwargs))
    [sdks_other] = since(fake, start)

    for sdk_call in (sdks, sdks_other):
        assert (
            (ours.method, ours.path)
            == (sdk_call.method, sdk_call.path)
            == ("POST", "/dream-machine/v1/generations/video")
        )
        assert contract_headers(ours) == contract_headers(sdk_call)
        assert json_of(ours) == json_of(sdk_call)
    assert {task_id, created.id, also.id} <= set(fake.tasks)
    if first_frame:
        assert json_of(ours)["keyframes"] == {"frame0": {"type": "image", "url": image_url}}


async def test_a_read_and_a_delete_are_the_sdks_requests(
    fake: FakeLuma, adapter_for: Callable[..., LumaAdapter]
) -> None:
    sdk = sdk_for(fake)
    adapter = adapter_for()
    ours_id = await adapter.submit(Job("gen_1", "a fox", 5))
    created = await off_loop(lambda: sdk.generations.video.create(model="ray-2", prompt="a", duration="5s"))
    assert created.id is not None
    sdks_id = created.id

    start = len(fake.exchanges)
    await adapter.poll(ours_id, Job("gen_1", "a fox", 5))
    await adapter.cancel(ours_id)
    read, delete = since(fake, start)
    start = len(fake.exchanges)
    await off_loop(lambda: sdk.generations.get(sdks_id))
    await off_loop(lambda: sdk.generations.delete(sdks_id))
    sdk_read, sdk_delete = since(fake, start)

    for ours, sdks in ((read, sdk_read), (delete, sdk_delete)):
        assert (ours.method, ours.path.replace(ours_id, sdks_id)) == (sdks.method, sdks.path)
        assert contract_headers(ours) == contract_headers(sdks)
    assert fake.canceled == [ours_id, sdks_id]


async def test_the_sdks_client_creates_reads_and_deletes_against_the_fake(fake: FakeLuma) -> None:
    sdk = sdk_for(fake)
    fake.task_seconds = 60.0
    created = await off_loop(
        lambda: sdk.generations.video.create(
            model="ray-2", prompt="a fox", aspect_ratio="9:16", duration="9s"
        )
    )
    assert created.state in ("queued", "dreaming")
    generation_id = created.id
    assert generation_id is not None
    read = await off_loop(lambda: sdk.generations.get(generation_id))
    assert read.state == "dreaming" and read.model == "ray-2"
    await off_loop(lambda: sdk.generations.delete(generation_id))
    with pytest.raises(NotFoundError):
        await off_loop(lambda: sdk.generations.get(generation_id))


async def test_every_generation_the_fake_answers_is_one_the_sdks_model_reads(fake: FakeLuma) -> None:
    fake.serve_thumbnail = True
    body = {
        "generation_type": "video",
        "prompt": "a fox",
        "model": "ray-2",
        "resolution": "720p",
        "aspect_ratio": "16:9",
        "duration": "5s",
        "keyframes": {"frame0": {"type": "image", "url": "https://x.test/i.png"}},
    }
    states = {}
    for state, (queue, run, failure) in {
        "queued": (60.0, 60.0, None),
        "dreaming": (0.0, 60.0, None),
        "completed": (0.0, 0.0, None),
        "failed": (0.0, 0.0, MODERATION_FAILURE),
    }.items():
        task = fake.new_task(body)
        task.queue_seconds, task.run_seconds, task.failure = queue, run, failure
        states[state] = fake.view(task)
    for state, view in states.items():
        generation = accepted(Generation, view)
        assert generation.state == state
    created = answer_json(fake.created(next(iter(fake.tasks.values()))))
    accepted(Generation, created)
    done = accepted(Generation, states["completed"])
    assert done.assets is not None and done.assets.video and done.assets.image


async def test_a_create_naming_a_callback_url_is_the_sdks_request(
    fake: FakeLuma, adapter_for: Callable[..., LumaAdapter]
) -> None:
    url = "https://videogen.test/v1/provider-callbacks/luma/gen_1.0.mac"
    start = len(fake.exchanges)
    await adapter_for().submit(Job("gen_1", "a fox", 5, callback_url=url))
    [ours] = since(fake, start)
    kwargs = check_body(VideoCreateParams, json_of(ours))
    assert kwargs["callback_url"] == url  # the SDK's own parameter, by its wire name
    start = len(fake.exchanges)
    await off_loop(lambda: sdk_for(fake).generations.video.create(**kwargs))
    [sdks] = since(fake, start)
    assert (ours.method, ours.path) == (sdks.method, sdks.path)
    assert json_of(ours) == json_of(sdks)
