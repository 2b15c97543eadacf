"""The mock provider's renderer: a real, playable H.264 MP4 of exactly the requested length, the prompt drawn
on moving frames, and a JPEG thumbnail. CPU-bound, so callers run it in a thread."""

from __future__ import annotations

import colorsys
import io
import textwrap
from dataclasses import dataclass

import av
from PIL import Image, ImageDraw, ImageFont

WIDTH, HEIGHT, FPS = 640, 360, 24


@dataclass(frozen=True)
class Rendered:
    video: bytes
    thumbnail: bytes


def _frame(
    lines: list[str], font: ImageFont.FreeTypeFont | ImageFont.ImageFont, index: int, total: int
) -> Image.Image:
    t = index / max(total - 1, 1)
    r, g, b = colorsys.hsv_to_rgb((0.55 + 0.35 * t) % 1.0, 0.6, 0.35)
    image = Image.new("RGB", (WIDTH, HEIGHT), (int(r * 255), int(g * 255), int(b * 255)))
    draw = ImageDraw.Draw(image)
    # A ball crossing the frame, so consecutive frames really differ.
    x = int(t * (WIDTH - 60)) + 30
    draw.ellipse((x - 18, HEIGHT - 70, x + 18, HEIGHT - 34), fill=(250, 200, 80))
    y = 40 + int(20 * abs(((index / FPS) % 2) - 1))
    for line in lines:
        draw.text((32, y), line, font=font, fill=(255, 255, 255))
        y += 34
    draw.rectangle((0, HEIGHT - 8, int(WIDTH * t), HEIGHT), fill=(255, 255, 255))
    return image


def render(prompt: str, duration_s: int) -> Rendered:
    font = ImageFont.load_default(size=26)
    lines = textwrap.wrap(prompt, width=40)[:6] or [" "]
    total = duration_s * FPS
    buffer = io.BytesIO()
    thumbnail = b""
    with av.open(buffer, mode="w", format="mp4") as container:
        stream = container.add_stream("libx264", rate=FPS)
        stream.width, stream.height, stream.pix_fmt = WIDTH, HEIGHT, "yuv420p"
        stream.options = {"preset": "ultrafast"}
        for index in range(total):
            image = _frame(lines, font, index, total)
            if index == total // 2:
                jpeg = io.BytesIO()
                image.save(jpeg, format="JPEG", quality=85)
                thumbnail = jpeg.getvalue()
            frame = av.VideoFrame.from_image(image)  # type: ignore[no-untyped-call]
            container.mux(stream.encode(frame))
        container.mux(stream.encode(None))
    return Rendered(video=buffer.getvalue(), thumbnail=thumbnail)
