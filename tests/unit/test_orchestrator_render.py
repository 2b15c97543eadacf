"""videogen_orchestrator.render: a real, playable H.264 MP4 of exactly the requested length."""

from __future__ import annotations

import io

import av
import pytest
from PIL import Image

from videogen_orchestrator.render import FPS, HEIGHT, WIDTH, Rendered, render


@pytest.fixture(scope="module", params=[3, 4])
def rendered(request: pytest.FixtureRequest) -> tuple[int, Rendered]:
    duration: int = request.param
    return duration, render("A cat riding a skateboard through a neon city at night, cinematic", duration)


def test_video_is_h264_mp4_of_exact_duration(rendered: tuple[int, Rendered]) -> None:
    duration, result = rendered
    assert result.video[4:8] == b"ftyp"
    with av.open(io.BytesIO(result.video), mode="r") as container:
        assert container.duration is not None
        assert container.duration / 1e6 == float(duration)
        stream = container.streams.video[0]
        assert stream.codec_context.name == "h264"
        assert (stream.codec_context.width, stream.codec_context.height) == (WIDTH, HEIGHT)
        assert stream.average_rate == FPS
        frames = list(container.decode(video=0))
    assert len(frames) == FPS * duration == 24 * duration
    # Moving frames: the first and the last really differ.
    assert (frames[0].to_ndarray(format="rgb24") != frames[-1].to_ndarray(format="rgb24")).any()


def test_thumbnail_is_a_jpeg(rendered: tuple[int, Rendered]) -> None:
    _, result = rendered
    assert result.thumbnail.startswith(b"\xff\xd8")
    with Image.open(io.BytesIO(result.thumbnail)) as image:
        assert image.format == "JPEG"
        assert image.size == (WIDTH, HEIGHT)
