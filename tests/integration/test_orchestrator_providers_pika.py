"""The Pika adapter (fal.ai's queue API) end to end against a fake of fal's queue on 127.0.0.1: the real
actor, runner and store drive each generation; the fake counts what reached it. What every adapter does
alike (queueing, a lost submit answer, the deadline, a client's cancel) is in
``test_orchestrator_providers_shared``."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.support.fake_providers.fal import (
    APP_ID,
    CONTENT_POLICY,
    IMAGE_MODEL_ID,
    MODEL_ID,
    REQUEST_TIMEOUT,
    RUNNER_ERROR,
    FakeFal,
)
from tests.support.generations import PROMPT
from tests.support.images import solid_image
from tests.support.orchestration import ProviderRun, provider_run
from tests.support.waiting import eventually
from videogen_common.store import Store
from videogen_orchestrator.providers.base import Job


@pytest.fixture
async def fake() -> AsyncIterator[FakeFal]:
    async with FakeFal(task_seconds=0.05) as fake:
        yield fake


@pytest.fixture
async def run(
    store: Store, base_env: dict[str, str], tmp_path: Path, fake: FakeFal
) -> AsyncIterator[ProviderRun]:
    async with provider_run(store, base_env, tmp_path / "media", fake) as run:
        yield run


@pytest.mark.parametrize(("requested", "asked"), [(3, 5), (5, 5), (7, 10), (10, 10)])
async def test_a_generation_completes_with_pikas_video_through_the_fal_queue(
    run: ProviderRun, fake: FakeFal, requested: int, asked: int
) -> None:
    doc = await run.run(duration=requested)

    assert doc["status"] == "completed", doc["error"]
    assert await run.media.get(doc["video_key"]) == fake.video
    assert fake.submissions == [
        {"prompt": PROMPT, "duration": asked, "resolution": "720p", "aspect_ratio": "16:9"}
    ]
    assert doc["provider_request"]["model"] == MODEL_ID
    assert doc["provider_request"]["duration_s"] == asked
    # Submitted to the endpoint; status and result read under the app id, without the sub-path.
    paths = {path for _, path in fake.requests}
    assert f"/{MODEL_ID}" in paths
    assert f"/{APP_ID}/requests/{doc['provider_task_id']}/status" in paths
    assert f"/{APP_ID}/requests/{doc['provider_task_id']}" in paths


@pytest.mark.parametrize(
    ("failure", "code", "provider_code", "retriable"),
    [
        (CONTENT_POLICY, "content_policy", "content_policy_violation", False),
        (REQUEST_TIMEOUT, "provider_timeout", "request_timeout", True),
        (RUNNER_ERROR, "provider_error", "runner_server_error", True),
    ],
)
async def test_a_failed_request_maps_its_error(
    run: ProviderRun, fake: FakeFal, failure: str, code: str, provider_code: str, retriable: bool
) -> None:
    fake.failure = failure
    doc = await run.run()

    assert doc["status"] == "failed"
    assert (doc["error"]["code"], doc["error"]["provider_code"], doc["error"]["retriable"]) == (
        code,
        provider_code,
        retriable,
    )
    assert fake.downloads == 0


async def test_throttling_is_retried_honouring_retry_after(run: ProviderRun, fake: FakeFal) -> None:
    fake.throttle_next(2, retry_after="0", kind="submit")
    fake.throttle_next(2, retry_after="0", kind="poll")
    doc = await run.run()

    assert doc["status"] == "completed", doc["error"]
    assert len(fake.submissions) == 1


async def test_an_invalid_request_is_provider_rejected(
    store: Store, base_env: dict[str, str], tmp_path: Path, fake: FakeFal
) -> None:
    async with provider_run(store, base_env, tmp_path / "media", fake, pika_resolution="4k") as run:
        doc = await run.run()

    assert doc["status"] == "failed"
    assert (doc["error"]["code"], doc["error"]["provider_code"]) == ("provider_rejected", "http_422")


async def test_a_running_requests_progress_is_estimated_from_its_logs_and_rises(
    run: ProviderRun, fake: FakeFal
) -> None:
    fake.task_seconds = 60.0  # still running at every read below, however slow the machine; ended after
    gid = await run.start()

    async def reported() -> bool:
        return (await run.get(gid)).get("progress") is not None

    await eventually(reported)
    first = (await run.get(gid))["progress"]
    assert 0 <= first <= 99
    assert (
        next(e.generation["progress"] for e in run.sink.progress if e.generation["progress"] is not None)
        == first
    )
    job = Job(generation_id=gid, prompt=PROMPT, duration=5)
    later = (await run.adapter.poll((await run.get(gid))["provider_task_id"], job)).progress
    assert later is not None and first <= later <= 99
    assert fake.log_requests and set(fake.log_requests) == {"1"}  # every status read asks for the logs
    for task in fake.tasks.values():
        task.run_seconds = 0
    await run.runner.wait_idle()
    assert (await run.get(gid))["progress"] == 100  # the finished video


async def test_every_option_pika_takes_reaches_fal(run: ProviderRun, fake: FakeFal) -> None:
    doc = await run.run(
        duration=10, aspect_ratio="4:5", resolution="1080p", seed=7, negative_prompt="blurry, text"
    )

    assert doc["status"] == "completed", doc["error"]
    assert fake.submissions == [
        {
            "prompt": PROMPT,
            "duration": 10,
            "resolution": "1080p",
            "aspect_ratio": "4:5",
            "seed": 7,
            "negative_prompt": "blurry, text",
        }
    ]
    assert (doc["provider_request"]["aspect_ratio"], doc["provider_request"]["resolution"]) == (
        "4:5",
        "1080p",
    )


async def test_a_first_frame_goes_to_pikas_image_to_video_model_inline(
    run: ProviderRun, fake: FakeFal
) -> None:
    image = solid_image((10, 200, 10), kind="JPEG")
    await run.media.put("upl_1/image.jpg", image)
    doc = await run.run(
        duration=5,
        seed=3,
        image={"upload_id": "upl_1"},
        image_key="upl_1/image.jpg",
        image_type="image/jpeg",
    )

    assert doc["status"] == "completed", doc["error"]
    assert ("POST", f"/{IMAGE_MODEL_ID}") in fake.requests
    assert fake.submissions == [
        {
            "prompt": PROMPT,
            "duration": 5,
            "resolution": "720p",
            "image_url": "data:image/jpeg;base64," + base64.b64encode(image).decode(),
            "seed": 3,
        }
    ]
    assert doc["provider_request"]["model"] == IMAGE_MODEL_ID
    # Status and result are read under the same app id as for text to video.
    assert f"/{APP_ID}/requests/{doc['provider_task_id']}" in {path for _, path in fake.requests}


@pytest.mark.parametrize(
    ("failure", "code", "provider_code"),
    [
        (RUNNER_ERROR, "provider_error", "runner_server_error"),
        (REQUEST_TIMEOUT, "provider_timeout", "request_timeout"),
    ],
)
async def test_a_completed_status_that_carries_an_error_fails_without_fetching_a_result(
    run: ProviderRun, fake: FakeFal, failure: str, code: str, provider_code: str
) -> None:
    fake.failure = failure
    fake.error_in_status = True
    doc = await run.run()

    assert doc["status"] == "failed"
    assert (doc["error"]["code"], doc["error"]["provider_code"]) == (code, provider_code)
    assert doc["error"]["message"] == (
        "Request timed out" if failure == REQUEST_TIMEOUT else "Internal server error"
    )
    # The status said how it failed: the result was never asked for.
    task_id = doc["provider_task_id"]
    assert ("GET", f"/{APP_ID}/requests/{task_id}") not in fake.requests
    assert fake.downloads == 0


@pytest.mark.parametrize("status", [502, 503, 504])
async def test_a_submit_answered_by_fals_front_proxy_is_sent_again_and_makes_one_request(
    run: ProviderRun, fake: FakeFal, status: int
) -> None:
    fake.proxy_fail_next(2, status=status)
    doc = await run.run()

    assert doc["status"] == "completed", doc["error"]
    assert fake.count("POST", f"/{MODEL_ID}") == 3
    assert len(fake.submissions) == 1


@pytest.mark.parametrize("status", [500, 502, 503])
async def test_a_submit_fal_answered_with_an_error_is_never_sent_again(
    run: ProviderRun, fake: FakeFal, status: int
) -> None:
    # fal's own servers answered (x-fal-request-id): it is not resent; the request it names is looked up,
    # and fal knows no such request, so the generation fails (at no second submit).
    fake.fail_next(1, status=status, kind="submit")
    doc = await run.run()

    assert doc["status"] == "failed"
    assert fake.count("POST", f"/{MODEL_ID}") == 1
    assert fake.submissions == []
    assert doc["provider_task_id"] is not None
    assert fake.count("GET", f"/{APP_ID}/requests/{doc['provider_task_id']}/status") == 1


async def test_a_submit_fal_made_but_answered_with_an_error_is_followed_to_its_video(
    run: ProviderRun, fake: FakeFal
) -> None:
    fake.make_then_fail_next_submits = 1
    doc = await run.run()

    assert doc["status"] == "completed", doc["error"]
    assert fake.count("POST", f"/{MODEL_ID}") == 1
    [task_id] = fake.tasks
    assert doc["provider_task_id"] == task_id
    assert fake.downloads == 1


async def test_a_504_that_fal_timed_out_is_not_sent_again_even_from_the_proxy(
    run: ProviderRun, fake: FakeFal
) -> None:
    # A 504 carrying X-Fal-Request-Timeout-Type: the request ran out of its time at fal. No request id to
    # look up, so whether a request was made is unknown: the generation fails rather than pay twice.
    fake.proxy_fail_next(1, status=504, headers={"X-Fal-Request-Timeout-Type": "user"})
    doc = await run.run()

    assert doc["status"] == "failed"
    assert (doc["error"]["code"], doc["error"]["provider_code"]) == ("provider_unavailable", "http_504")
    assert fake.count("POST", f"/{MODEL_ID}") == 1


async def test_a_model_under_a_workflows_namespace_is_submitted_and_read_at_its_app(
    store: Store, base_env: dict[str, str], tmp_path: Path
) -> None:
    model = "workflows/acme/pika-flow/text-to-video"
    async with (
        FakeFal(model_id=model, task_seconds=0.05) as fake,
        provider_run(store, base_env, tmp_path / "media", fake, pika_model=model) as run,
    ):
        doc = await run.run()

    assert doc["status"] == "completed", doc["error"]
    task_id = doc["provider_task_id"]
    assert ("POST", f"/{model}") in fake.requests
    assert ("GET", f"/workflows/acme/pika-flow/requests/{task_id}/status") in fake.requests
    assert ("GET", f"/workflows/acme/pika-flow/requests/{task_id}") in fake.requests
