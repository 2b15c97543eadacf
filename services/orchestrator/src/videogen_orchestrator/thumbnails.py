"""A JPEG thumbnail from a stored video, for providers that return none: the frame at the middle of the video
(as the mock renderer's own thumbnail), no wider or taller than ``MAX_SIDE``. Decoding is CPU-bound, so it
runs in a worker thread."""

from __future__ import annotations

import asyncio
import io

import av
from PIL import Image

MAX_SIDE = 640
JPEG_QUALITY = 85


class ThumbnailError(Exception):
    """The video could not be decoded into a frame."""


def _middle_frame(video: bytes) -> Image.Image:
    with av.open(io.BytesIO(video), mode="r") as container:
        if not container.streams.video:
            raise ThumbnailError("the file has no video stream")
        stream = container.streams.video[0]
        target: int | None = None
        if stream.duration:
            # In the stream's time base: seek to the keyframe at or before the middle, then decode up to it.
            target = (stream.start_time or 0) + stream.duration // 2
            container.seek(target, stream=stream)
        last: av.VideoFrame | None = None
        for frame in container.decode(stream):
            last = frame
            if target is None or frame.pts is None or frame.pts >= target:
                break
        if last is None:
            raise ThumbnailError("the video has no frames")
        image: Image.Image = last.to_image()  # type: ignore[no-untyped-call]
        return image


def thumbnail_of(video: bytes) -> bytes:
    """JPEG bytes of the video's middle frame. Raises ``ThumbnailError`` if the video cannot be decoded."""
    try:
        image = _middle_frame(video)
    except av.FFmpegError as exc:
        raise ThumbnailError(f"cannot decode the video: {exc}") from exc
    image.thumbnail((MAX_SIDE, MAX_SIDE))
    out = io.BytesIO()
    image.convert("RGB").save(out, format="JPEG", quality=JPEG_QUALITY)
    return out.getvalue()


async def make_thumbnail(video: bytes) -> bytes:
    return await asyncio.to_thread(thumbnail_of, video)
