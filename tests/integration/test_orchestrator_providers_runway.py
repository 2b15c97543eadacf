"""The Runway adapter end to end against a fake of Runway's task API on 127.0.0.1: the real actor, runner and
store drive each generation; the fake counts what reached it. What every adapter does alike (queueing, a
lost submit answer, the deadline, a client's cancel) is in ``test_orchestrator_providers_shared``."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest

from tests.support.fake_providers.runway import API_VERSION, FakeRunway
from tests.support.generations import PROMPT
from tests.support.images import solid_image
from tests.support.orchestration import ProviderRun, provider_run
from tests.support.waiting import eventually
from videogen_common.store import Store
from videogen_orchestrator.providers.runway import MAX_DATA_URI_CHARS


@pytest.fixture
async def fake() -> AsyncIterator[FakeRunway]:
    async with FakeRunway(task_seconds=0.05) as fake:
        yield fake


@pytest.fixture
async def run(
    store: Store, base_env: dict[str, str], tmp_path: Path, fake: FakeRunway
) -> AsyncIterator[ProviderRun]:
    async with provider_run(store, base_env, tmp_path / "media", fake) as run:
        yield run


async def test_a_generation_completes_with_runways_video_copied_into_our_storage(
    run: ProviderRun, fake: FakeRunway
) -> None:
    doc = await run.run(duration=7)

    assert doc["status"] == "completed", doc["error"]
    assert doc["error"] is None
    stored = await run.media.get(doc["video_key"])
    assert stored == fake.video  # the bytes Runway served, now ours
    assert doc["video_url"].startswith(run.settings.public_base_url + "/v1/media/")
    assert fake.downloads == 1
    # One task, asked for exactly what gen4.5 makes for 7 s, and the ask recorded beside the task id.
    assert fake.submissions == [{"model": "gen4.5", "promptText": PROMPT, "ratio": "1280:720", "duration": 7}]
    assert doc["provider_task_id"] == next(iter(fake.tasks))
    assert doc["provider_request"] == {
        "model": "gen4.5",
        "ratio": "1280:720",
        "duration_s": 7,
        "requested_duration_s": 7,
    }
    assert [e.generation["status"] for e in run.sink.envelopes] == ["completed"]


@pytest.mark.parametrize(("requested", "asked"), [(3, 4), (5, 6), (8, 8), (10, 8)])
async def test_a_model_with_fewer_durations_gets_the_nearest_it_makes(
    store: Store, base_env: dict[str, str], tmp_path: Path, fake: FakeRunway, requested: int, asked: int
) -> None:
    async with provider_run(store, base_env, tmp_path / "media", fake, runway_model="veo3.1") as run:
        doc = await run.run(duration=requested)

    assert doc["status"] == "completed", doc["error"]
    assert [s["duration"] for s in fake.submissions] == [asked]
    assert doc["provider_request"]["duration_s"] == asked
    assert doc["provider_request"]["requested_duration_s"] == requested


async def test_every_request_carries_the_key_and_the_api_version(run: ProviderRun, fake: FakeRunway) -> None:
    # The fake refuses a request without ``Authorization: Bearer <key>`` and ``X-Runway-Version``.
    doc = await run.run()
    assert doc["status"] == "completed", doc["error"]
    assert run.settings.runway_api_version == API_VERSION


async def test_a_throttled_task_shows_as_queued_then_completes(run: ProviderRun, fake: FakeRunway) -> None:
    fake.throttled = True  # queued tasks read as THROTTLED, not PENDING
    doc = await run.run_through_the_queue()

    assert doc["status"] == "completed", doc["error"]
    assert len(fake.submissions) == 1


@pytest.mark.parametrize(
    ("failure_code", "code", "retriable"),
    [
        ("SAFETY.INPUT.TEXT", "content_policy", False),
        ("SAFETY.OUTPUT.VIDEO", "content_policy", False),
        ("INPUT_PREPROCESSING.SAFETY.TEXT", "content_policy", False),
        ("INTERNAL.BAD_OUTPUT.CODE01", "provider_error", True),
        ("INTERNAL", "provider_error", True),
        ("ASSET.INVALID", "provider_rejected", False),
    ],
)
async def test_a_failed_task_maps_its_failure_code(
    run: ProviderRun, fake: FakeRunway, failure_code: str, code: str, retriable: bool
) -> None:
    fake.failure = failure_code
    doc = await run.run()

    assert doc["status"] == "failed"
    assert doc["error"]["code"] == code
    assert doc["error"]["provider_code"] == failure_code
    assert doc["error"]["retriable"] is retriable
    assert doc["error"]["message"]  # Runway's human-readable failure
    assert doc.get("video_url") is None
    assert [e.generation["error"]["code"] for e in run.sink.envelopes] == [code]


async def test_a_burst_of_5xx_on_polls_is_retried_then_the_generation_completes(
    run: ProviderRun, fake: FakeRunway
) -> None:
    fake.fail_next(3, status=503, kind="poll")
    doc = await run.run()

    assert doc["status"] == "completed", doc["error"]
    assert fake.count("GET", "/v1/tasks/") >= 4
    assert len(fake.submissions) == 1


async def test_a_provider_that_stays_down_while_polled_is_waited_for_not_failed(
    run: ProviderRun, fake: FakeRunway
) -> None:
    # More 5xx than one call's retries: the poll gives up, and the actor polls again at its next tick.
    fake.fail_next(run.settings.provider_retry_attempts + 2, status=502, kind="poll")
    doc = await run.run()

    assert doc["status"] == "completed", doc["error"]


async def test_throttled_submits_are_tried_again_and_make_one_task(
    run: ProviderRun, fake: FakeRunway
) -> None:
    fake.throttle_next(2, retry_after="0", kind="submit")
    doc = await run.run()

    assert doc["status"] == "completed", doc["error"]
    assert fake.count("POST", "/v1/text_to_video") == 3
    assert len(fake.submissions) == 1


async def test_a_submit_that_keeps_being_throttled_waits_and_never_fails(
    run: ProviderRun, fake: FakeRunway
) -> None:
    # More refusals than a call's retries: each sends the generation back in line, never to `failed`.
    refusals = run.settings.provider_retry_attempts + 2
    fake.throttle_next(refusals, retry_after="0", kind="submit")
    doc = await run.run()

    assert doc["status"] == "completed", doc["error"]
    assert len(fake.submissions) == 1  # one task, made when the provider took it
    assert fake.count("POST") == refusals + 1  # a 429 is not retried in a loop: admission decides
    assert "submit_started_at" in doc and doc["provider_task_id"] is not None
    assert [step["status"] for step in doc["timeline"]][:2] == ["processing", "queued"]


async def test_a_500_on_submit_is_ambiguous_and_not_retried(run: ProviderRun, fake: FakeRunway) -> None:
    fake.fail_next(1, status=500, kind="submit")
    doc = await run.run()

    assert doc["status"] == "failed"
    assert (doc["error"]["code"], doc["error"]["provider_code"]) == ("provider_unavailable", "http_500")
    assert fake.count("POST") == 1


async def test_an_invalid_request_is_provider_rejected_with_runways_reason(
    run: ProviderRun, fake: FakeRunway
) -> None:
    doc = await run.run(prompt="x" * 1001)  # over Runway's 1000-character promptText

    assert doc["status"] == "failed"
    assert doc["error"]["code"] == "provider_rejected"
    assert doc["error"]["provider_code"] == "http_400"
    assert "promptText" in doc["error"]["message"]
    assert doc["error"]["retriable"] is False


async def test_rejected_credentials_fail_the_generation_as_provider_unavailable(
    store: Store, base_env: dict[str, str], tmp_path: Path, fake: FakeRunway
) -> None:
    async with provider_run(store, base_env, tmp_path / "media", fake, runway_api_key="key_wrong") as run:
        doc = await run.run()

    assert doc["status"] == "failed"
    assert (doc["error"]["code"], doc["error"]["provider_code"]) == ("provider_unavailable", "http_401")
    assert doc["error"]["retriable"] is False
    assert fake.submissions == []


async def test_a_generation_resumed_past_its_deadline_is_not_submitted(
    run: ProviderRun, fake: FakeRunway
) -> None:
    inserted = await run.insert()
    run.clock.advance(timedelta(seconds=run.settings.generation_deadline_seconds + 1))
    assert await run.runner.start(inserted["_id"])
    await run.runner.wait_idle()

    doc = await run.get(inserted["_id"])
    assert (doc["status"], doc["error"]["code"]) == ("failed", "provider_timeout")
    assert fake.requests == []


async def test_an_instance_resuming_a_submitted_generation_polls_it_and_never_submits(
    run: ProviderRun, fake: FakeRunway
) -> None:
    task = fake.new_task({"model": "gen4.5", "promptText": PROMPT, "ratio": "1280:720", "duration": 5})
    doc = await run.run(provider_task_id=task.id, submit_started_at=run.clock.now())

    assert doc["status"] == "completed", doc["error"]
    assert len(fake.submissions) == 1  # only the one made before the "crash"
    assert fake.count("POST") == 0


async def test_a_submit_interrupted_before_its_id_was_saved_fails_rather_than_pay_twice(
    run: ProviderRun, fake: FakeRunway
) -> None:
    # An earlier owner marked the submit and died before saving the task id: a task may exist.
    doc = await run.run(submit_started_at=run.clock.now())

    assert doc["status"] == "failed"
    assert doc["error"]["code"] == "provider_unavailable"
    assert doc["error"]["retriable"] is True
    assert fake.requests == []


async def test_a_video_over_the_download_limit_fails_the_generation(
    store: Store, base_env: dict[str, str], tmp_path: Path, fake: FakeRunway
) -> None:
    async with provider_run(store, base_env, tmp_path / "media", fake, download_max_bytes=1024) as run:
        doc = await run.run()

    assert doc["status"] == "failed"
    assert doc["error"]["code"] == "provider_error"
    assert "too large" in doc["error"]["message"]
    assert doc.get("video_key") is None


async def test_a_graceful_stop_during_a_submit_saves_the_task_id_and_the_next_owner_polls_it(
    store: Store, base_env: dict[str, str], tmp_path: Path, fake: FakeRunway
) -> None:
    fake.submit_seconds = 0.3  # the task exists; its id is still on the way back
    async with provider_run(store, base_env, tmp_path / "media", fake) as first:
        gid = (await first.insert())["_id"]
        assert await first.runner.start(gid)

        async def arrived() -> bool:
            return len(fake.submissions) == 1

        await eventually(arrived)
        await first.runner.stop()  # SIGTERM while the submit is in flight

        stopped = await first.get(gid)
        assert stopped["provider_task_id"] == next(iter(fake.tasks))
        assert stopped["lease_owner"] is None

    fake.submit_seconds = 0
    async with provider_run(
        store, base_env, tmp_path / "media", fake, orchestrator_instance="orch-next"
    ) as nxt:
        assert await nxt.runner.start(gid)
        await nxt.runner.wait_idle()
        doc = await nxt.get(gid)

    assert doc["status"] == "completed", doc["error"]
    assert len(fake.submissions) == 1
    assert fake.count("POST") == 1


async def test_a_portrait_video_with_a_seed_is_asked_for_in_runways_terms(
    run: ProviderRun, fake: FakeRunway
) -> None:
    doc = await run.run(duration=5, aspect_ratio="9:16", resolution="720p", seed=42)

    assert doc["status"] == "completed", doc["error"]
    assert fake.submissions == [
        {"model": "gen4.5", "promptText": PROMPT, "ratio": "720:1280", "duration": 5, "seed": 42}
    ]
    assert doc["provider_request"]["ratio"] == "720:1280"


async def test_a_first_frame_starts_an_image_to_video_task_with_the_image_inline(
    run: ProviderRun, fake: FakeRunway
) -> None:
    image = solid_image((10, 200, 10))
    await run.media.put("upl_1/image.png", image)
    doc = await run.run(
        duration=5,
        image={"upload_id": "upl_1"},
        image_key="upl_1/image.png",
        image_type="image/png",
    )

    assert doc["status"] == "completed", doc["error"]
    assert ("POST", "/v1/image_to_video") in fake.requests
    [body] = fake.submissions
    assert body["promptImage"] == "data:image/png;base64," + base64.b64encode(image).decode()
    assert (body["promptText"], body["ratio"], body["duration"]) == (PROMPT, "1280:720", 5)
    assert doc["provider_request"]["from_image"] is True


async def test_a_first_frame_over_runways_data_uri_limit_is_uploaded_first_and_the_task_starts_from_it(
    run: ProviderRun, fake: FakeRunway
) -> None:
    image = b"\x89PNG\r\n\x1a\n" + bytes(MAX_DATA_URI_CHARS)  # well over 5 MB once base64-encoded
    await run.media.put("upl_1/image.png", image)
    doc = await run.run(
        duration=5, image={"upload_id": "upl_1"}, image_key="upl_1/image.png", image_type="image/png"
    )

    assert doc["status"] == "completed", doc["error"]
    [(upload_id, uploaded)] = fake.uploaded.items()
    assert uploaded == image  # the bytes went to the upload URL, not into the task's body
    [body] = fake.submissions
    assert body["promptImage"] == fake.runway_uri(upload_id)
    assert [p for m, p in fake.requests if m == "POST"] == [
        "/v1/uploads",
        f"/upload-bucket/{upload_id}",
        "/v1/image_to_video",
    ]


async def test_a_first_frame_within_the_limit_is_never_uploaded(run: ProviderRun, fake: FakeRunway) -> None:
    image = solid_image((10, 10, 200))
    await run.media.put("upl_1/image.png", image)
    doc = await run.run(image={"upload_id": "upl_1"}, image_key="upl_1/image.png", image_type="image/png")

    assert doc["status"] == "completed", doc["error"]
    assert fake.uploaded == {} and ("POST", "/v1/uploads") not in fake.requests


async def test_a_failed_upload_fails_the_generation_with_no_task_made(
    run: ProviderRun, fake: FakeRunway
) -> None:
    image = b"\x89PNG\r\n\x1a\n" + bytes(MAX_DATA_URI_CHARS)
    await run.media.put("upl_1/image.png", image)
    fake.refuse_uploads = True  # the storage host answers 403
    doc = await run.run(image={"upload_id": "upl_1"}, image_key="upl_1/image.png", image_type="image/png")

    assert doc["status"] == "failed"
    assert (doc["error"]["code"], doc["error"]["provider_code"]) == ("provider_error", "http_403")
    assert "upload" in doc["error"]["message"]
    assert fake.submissions == [] and fake.tasks == {}  # no task was made


async def test_first_frames_go_to_the_image_model_the_deployment_chose(
    store: Store, base_env: dict[str, str], tmp_path: Path, fake: FakeRunway
) -> None:
    image = solid_image((10, 200, 10))
    async with provider_run(
        store, base_env, tmp_path / "media", fake, runway_image_model="gen4_turbo"
    ) as run:
        await run.media.put("upl_1/image.png", image)
        from_image = await run.run(
            duration=7, image={"upload_id": "upl_1"}, image_key="upl_1/image.png", image_type="image/png"
        )
        from_text = await run.run(duration=7)

    assert (from_image["status"], from_text["status"]) == ("completed", "completed")
    assert [(b["model"], b["duration"]) for b in fake.submissions] == [("gen4_turbo", 10), ("gen4.5", 7)]
    assert from_image["provider_request"]["model"] == "gen4_turbo"
    assert from_image["cost"] == 0.5  # gen4_turbo: 5 credits of $0.01 a second, 10 s


async def test_runway_is_polled_no_more_often_than_its_cadence(
    store: Store, base_env: dict[str, str], tmp_path: Path, fake: FakeRunway
) -> None:
    fake.task_seconds = 0.6
    cadence = 0.25  # Runway's own is 5 s; the deployment's poll interval here is 0.01 s
    async with provider_run(
        store, base_env, tmp_path / "media", fake, runway_poll_interval_seconds=cadence
    ) as run:
        assert run.adapter.poll_interval_seconds == cadence
        doc = await run.run()

    assert doc["status"] == "completed", doc["error"]
    assert run.settings.poll_interval_seconds < cadence
    assert run.clock.slept and min(run.clock.slept) >= cadence
    assert 2 <= fake.count("GET", "/v1/tasks/") <= 4  # 0.6 s at one read every 0.25 s (not every 0.01 s)
