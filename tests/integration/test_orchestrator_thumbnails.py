"""The actor makes a thumbnail from the stored video when the provider gives none; a video it cannot decode
still completes, without a thumbnail, and says so in a warning."""

from __future__ import annotations

import asyncio
import io
import logging
from pathlib import Path

import pytest
from PIL import Image

from tests.support.fakes import FinishedProvider
from tests.support.orchestration import Orchestration
from videogen_common.media import LocalMediaStore
from videogen_common.store import Store
from videogen_orchestrator.providers.base import Output
from videogen_orchestrator.render import HEIGHT, WIDTH, Rendered, Scene, render
from videogen_orchestrator.thumbnails import thumbnail_of


@pytest.fixture(scope="module")
def rendered() -> Rendered:
    return render(Scene("a paper boat drifting down a rainy street", 3))


@pytest.fixture
def media(tmp_path: Path) -> LocalMediaStore:
    return LocalMediaStore(tmp_path / "media")


@pytest.fixture
def orchestration(store: Store, base_env: dict[str, str], media: LocalMediaStore) -> Orchestration:
    return Orchestration(store, base_env, media)


async def test_a_thumbnail_is_made_from_the_video_when_the_provider_gives_none(
    orchestration: Orchestration, media: LocalMediaStore, rendered: Rendered
) -> None:
    final = await orchestration.run_actor(FinishedProvider(Output(video=rendered.video)))
    assert final["status"] == "completed"
    assert final["thumbnail_key"] == f"{final['_id']}/thumbnail.jpg"
    assert f"/v1/media/{final['_id']}/thumbnail.jpg?" in final["thumbnail_url"]
    stored = await media.get(final["thumbnail_key"])
    assert stored is not None
    assert stored == await asyncio.to_thread(thumbnail_of, rendered.video)  # the middle frame (unit-tested)
    with Image.open(io.BytesIO(stored)) as image:
        assert image.format == "JPEG" and image.size == (WIDTH, HEIGHT)


async def test_a_video_that_cannot_be_decoded_completes_without_a_thumbnail(
    orchestration: Orchestration, media: LocalMediaStore, caplog: pytest.LogCaptureFixture
) -> None:
    video = b"\x00\x00\x00\x18ftypmp42" + b"\x00" * 200
    with caplog.at_level(logging.WARNING, logger="videogen_orchestrator.media_copy"):
        final = await orchestration.run_actor(FinishedProvider(Output(video=video)))
    assert final["status"] == "completed" and final["error"] is None
    assert final["video_url"] and await media.get(final["video_key"]) == video
    assert final["thumbnail_url"] is None and "thumbnail_key" not in final
    assert await media.get(f"{final['_id']}/thumbnail.jpg") is None
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING and "thumbnail" in r.getMessage()]
    assert [getattr(r, "generation_id", None) for r in warnings] == [final["_id"]]


async def test_a_providers_own_thumbnail_is_kept(
    orchestration: Orchestration, media: LocalMediaStore, rendered: Rendered
) -> None:
    final = await orchestration.run_actor(
        FinishedProvider(Output(video=rendered.video, thumbnail=b"\xff\xd8the provider's own"))
    )
    assert await media.get(final["thumbnail_key"]) == b"\xff\xd8the provider's own"
