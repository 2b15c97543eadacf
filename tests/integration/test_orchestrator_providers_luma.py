"""The Luma adapter end to end against a fake of Luma's Dream Machine API on 127.0.0.1: the real actor, runner
and store drive each generation; the fake counts what reached it. What every adapter does alike (queueing,
a lost submit answer, the deadline, a client's cancel) is in ``test_orchestrator_providers_shared``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest

from tests.support.fake_providers.luma import INTERNAL_FAILURE, MODERATION_FAILURE, FakeLuma
from tests.support.generations import PROMPT
from tests.support.images import solid_image
from tests.support.orchestration import ProviderRun, provider_run
from videogen_common.media import verify_media_link
from videogen_common.store import Store


@pytest.fixture
async def fake() -> AsyncIterator[FakeLuma]:
    async with FakeLuma(task_seconds=0.05) as fake:
        yield fake


@pytest.fixture
async def run(
    store: Store, base_env: dict[str, str], tmp_path: Path, fake: FakeLuma
) -> AsyncIterator[ProviderRun]:
    async with provider_run(store, base_env, tmp_path / "media", fake) as run:
        yield run


@pytest.mark.parametrize(("requested", "asked"), [(3, "5s"), (5, "5s"), (6, "9s"), (10, "9s")])
async def test_a_generation_completes_with_lumas_video_and_the_nearest_duration_it_makes(
    run: ProviderRun, fake: FakeLuma, requested: int, asked: str
) -> None:
    doc = await run.run(duration=requested)

    assert doc["status"] == "completed", doc["error"]
    assert await run.media.get(doc["video_key"]) == fake.video
    assert fake.submissions == [
        {
            "generation_type": "video",
            "prompt": PROMPT,
            "model": "ray-2",
            "resolution": "720p",
            "aspect_ratio": "16:9",
            "duration": asked,
        }
    ]
    assert doc["provider_request"]["duration_s"] == int(asked.removesuffix("s"))
    assert doc["provider_request"]["requested_duration_s"] == requested


async def test_lumas_thumbnail_is_copied_too(run: ProviderRun, fake: FakeLuma) -> None:
    fake.serve_thumbnail = True
    doc = await run.run()

    assert doc["status"] == "completed", doc["error"]
    assert await run.media.get(doc["thumbnail_key"]) == fake.thumbnail


@pytest.mark.parametrize(
    ("reason", "code", "retriable"),
    [(MODERATION_FAILURE, "content_policy", False), (INTERNAL_FAILURE, "provider_error", True)],
)
async def test_a_failed_generation_maps_its_failure_reason(
    run: ProviderRun, fake: FakeLuma, reason: str, code: str, retriable: bool
) -> None:
    fake.failure = reason
    doc = await run.run()

    assert doc["status"] == "failed"
    assert (doc["error"]["code"], doc["error"]["retriable"]) == (code, retriable)
    assert doc["error"]["message"] == reason


async def test_5xx_bursts_on_submit_and_poll_are_retried(run: ProviderRun, fake: FakeLuma) -> None:
    fake.fail_next(2, status=503, kind="submit")  # load shedding: nothing was made, safe to repeat
    fake.fail_next(2, status=500, kind="poll")
    doc = await run.run()

    assert doc["status"] == "completed", doc["error"]
    assert len(fake.submissions) == 1
    assert fake.count("POST") == 3


async def test_a_refused_request_is_provider_rejected(
    store: Store, base_env: dict[str, str], tmp_path: Path, fake: FakeLuma
) -> None:
    async with provider_run(store, base_env, tmp_path / "media", fake, luma_resolution="8k") as run:
        doc = await run.run()

    assert doc["status"] == "failed"
    assert (doc["error"]["code"], doc["error"]["provider_code"]) == ("provider_rejected", "http_400")
    assert "resolution" in doc["error"]["message"]


async def test_the_aspect_ratio_and_resolution_asked_for_reach_luma(run: ProviderRun, fake: FakeLuma) -> None:
    doc = await run.run(duration=5, aspect_ratio="21:9", resolution="1080p")

    assert doc["status"] == "completed", doc["error"]
    assert fake.submissions == [
        {
            "generation_type": "video",
            "prompt": PROMPT,
            "model": "ray-2",
            "resolution": "1080p",
            "aspect_ratio": "21:9",
            "duration": "5s",
        }
    ]
    assert (doc["provider_request"]["aspect_ratio"], doc["provider_request"]["resolution"]) == (
        "21:9",
        "1080p",
    )


async def test_a_first_frame_is_lumas_first_keyframe_at_our_signed_link(
    run: ProviderRun, fake: FakeLuma
) -> None:
    await run.media.put("upl_1/image.png", solid_image((10, 200, 10)))
    doc = await run.run(
        duration=5, image={"upload_id": "upl_1"}, image_key="upl_1/image.png", image_type="image/png"
    )

    assert doc["status"] == "completed", doc["error"]
    [body] = fake.submissions
    frame = body["keyframes"]["frame0"]
    assert frame["type"] == "image"
    link = urlsplit(frame["url"])
    assert frame["url"].startswith(run.settings.public_base_url + "/v1/media/upl_1/image.png?")
    query = dict(parse_qsl(link.query))
    signing_key = run.settings.media_signing_key.get_secret_value()
    assert verify_media_link(
        signing_key, "upl_1/image.png", int(query["exp"]), query["sig"], now=run.clock.now()
    )
