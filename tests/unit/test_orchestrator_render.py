"""videogen_orchestrator.render: a real, playable H.264 MP4 of exactly the requested length."""

from __future__ import annotations

import io

import av
import pytest
from PIL import Image

from videogen_orchestrator.render import FPS, HEIGHT, WIDTH, Rendered, Scene, render


@pytest.fixture(scope="module", params=[3, 4])
def rendered(request: pytest.FixtureRequest) -> tuple[int, Rendered]:
    duration: int = request.param
    return duration, render(
        Scene("A cat riding a skateboard through a neon city at night, cinematic", duration)
    )


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


def _frames(video: bytes) -> list[bytes]:
    with av.open(io.BytesIO(video), mode="r") as container:
        return [frame.to_ndarray(format="rgb24").tobytes() for frame in container.decode(video=0)]


def _size(video: bytes) -> tuple[int, int]:
    with av.open(io.BytesIO(video), mode="r") as container:
        context = container.streams.video[0].codec_context
        return context.width, context.height


def test_the_frame_size_is_the_scenes() -> None:
    assert _size(render(Scene("a tall tower", 3, 360, 640)).video) == (360, 640)


def test_one_seed_renders_the_same_frames_and_another_seed_others() -> None:
    one = _frames(render(Scene("a fox in snow", 3, seed=7)).video)
    again = _frames(render(Scene("a fox in snow", 3, seed=7)).video)
    other = _frames(render(Scene("a fox in snow", 3, seed=8)).video)

    assert one == again
    assert all(a != b for a, b in zip(one, other, strict=True))


def test_a_negative_prompt_changes_every_frame() -> None:
    plain = _frames(render(Scene("a fox in snow", 3, seed=7)).video)
    negative = _frames(render(Scene("a fox in snow", 3, seed=7, negative_prompt="blurry")).video)

    assert all(a != b for a, b in zip(plain, negative, strict=True))
