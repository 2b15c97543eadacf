"""Images for first-frame tests: solid colours in each format we take, and the colour a video opens on; a
video's decoded length."""

from __future__ import annotations

import io

import av
from PIL import Image

RGB = tuple[int, int, int]


def solid_image(colour: RGB, size: tuple[int, int] = (64, 48), kind: str = "PNG") -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, colour).save(buffer, format=kind)
    return buffer.getvalue()


def opening_colour(video: bytes) -> RGB:
    """The average colour of a video's first frame (CPU-bound: call it in a thread)."""
    with av.open(io.BytesIO(video), mode="r") as container:
        frame = next(container.decode(video=0))
        image = frame.to_image()  # type: ignore[no-untyped-call]
        average = image.resize((1, 1), Image.Resampling.BOX).getpixel((0, 0))
    assert isinstance(average, tuple)
    r, g, b = average[:3]
    return int(r), int(g), int(b)


def close_to(seen: RGB, expected: RGB, tolerance: int = 12) -> bool:
    """Equal within what H.264's 4:2:0 colour sampling changes."""
    return all(abs(a - b) <= tolerance for a, b in zip(seen, expected, strict=True))


def video_seconds(data: bytes) -> float:
    """An H.264 video's length, once a frame of it has decoded (CPU-bound: call it in a thread)."""
    with av.open(io.BytesIO(data)) as container:
        assert isinstance(container, av.container.InputContainer)
        assert container.streams.video[0].codec_context.name == "h264"
        assert next(container.decode(video=0)) is not None  # a frame decodes
        assert container.duration is not None
        return container.duration / 1_000_000
