"""videogen_orchestrator.thumbnails: a JPEG of the middle frame of a real MP4, or a clear error."""

from __future__ import annotations

import io

import av
import pytest
from PIL import Image, ImageChops, ImageStat

from videogen_orchestrator.render import HEIGHT, WIDTH, Rendered, Scene, render
from videogen_orchestrator.thumbnails import MAX_SIDE, ThumbnailError, make_thumbnail, thumbnail_of


@pytest.fixture(scope="module")
def rendered() -> Rendered:
    return render(Scene("a lighthouse in a storm, waves breaking", 4))


def difference(a: Image.Image, b: Image.Image) -> float:
    """Mean absolute difference per channel, from 0 to 255."""
    return sum(ImageStat.Stat(ImageChops.difference(a.convert("RGB"), b.convert("RGB"))).mean) / 3


def test_the_thumbnail_is_a_jpeg_of_the_middle_frame(rendered: Rendered) -> None:
    thumbnail = thumbnail_of(rendered.video)
    assert thumbnail.startswith(b"\xff\xd8")
    with av.open(io.BytesIO(rendered.video), mode="r") as container:
        frames = [frame.to_image() for frame in container.decode(video=0)]  # type: ignore[no-untyped-call]
    with Image.open(io.BytesIO(thumbnail)) as image:
        assert image.format == "JPEG" and image.size == (WIDTH, HEIGHT)
        distances = [difference(image, frame) for frame in frames]
    # Of all the video's frames, the thumbnail is the middle one (up to JPEG), as the renderer's own is.
    middle = len(frames) // 2
    assert min(range(len(frames)), key=distances.__getitem__) == middle
    assert distances[middle] < 1 and distances[0] > 5 and distances[-1] > 5


def test_a_large_video_gets_a_bounded_thumbnail() -> None:
    buffer = io.BytesIO()
    with av.open(buffer, mode="w", format="mp4") as container:
        stream = container.add_stream("libx264", rate=24)
        stream.width, stream.height, stream.pix_fmt = 1280, 720, "yuv420p"
        for index in range(12):
            frame = av.VideoFrame.from_image(Image.new("RGB", (1280, 720), (index * 20, 90, 160)))  # type: ignore[no-untyped-call]
            container.mux(stream.encode(frame))
        container.mux(stream.encode(None))
    with Image.open(io.BytesIO(thumbnail_of(buffer.getvalue()))) as image:
        assert image.size == (MAX_SIDE, 360)


@pytest.mark.parametrize(
    "video", [b"", b"not a video at all" * 50, b"\x00\x00\x00\x18ftypmp42" + b"\x00" * 200], ids=repr
)
def test_what_cannot_be_decoded_is_a_thumbnail_error(video: bytes) -> None:
    with pytest.raises(ThumbnailError):
        thumbnail_of(video)


def test_a_truncated_video_is_a_thumbnail_error(rendered: Rendered) -> None:
    with pytest.raises(ThumbnailError):
        thumbnail_of(rendered.video[:2000])


async def test_decoding_runs_off_the_event_loop(rendered: Rendered) -> None:
    # The autouse blockbuster fixture fails this test if decoding blocked the loop.
    assert (await make_thumbnail(rendered.video)).startswith(b"\xff\xd8")
