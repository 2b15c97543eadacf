"""The mock provider's renderer: a real, playable H.264 MP4 of exactly the requested length and frame size,
the prompt drawn on moving frames, and a JPEG thumbnail. CPU-bound, so callers run it in a thread.

Every input shows: the seed picks the palette and the ball's path (the same seed, the same frames), and a
negative prompt shifts the palette and is drawn, struck through, at the foot of the frame."""

from __future__ import annotations

import colorsys
import io
import textwrap
import zlib
from dataclasses import dataclass, field

import av
from PIL import Image, ImageDraw, ImageFont

WIDTH, HEIGHT, FPS = 640, 360, 24


@dataclass(frozen=True)
class Scene:
    """What a render depends on (and so what the render cache keys on)."""

    prompt: str
    duration_s: int
    width: int = WIDTH
    height: int = HEIGHT
    seed: int | None = None
    negative_prompt: str | None = None
    # The first frame asked for (PNG, JPEG or WebP bytes): the video opens on it, scaled to the frame.
    first_frame: bytes | None = field(default=None, repr=False)

    def hue(self) -> float:
        """The palette's starting hue: the original 0.55 without seed or negative prompt."""
        shift = 0.0
        if self.seed is not None:
            shift += self._seed_hash() % 1000 / 1000
        if self.negative_prompt is not None:
            shift += 0.5 + (zlib.crc32(self.negative_prompt.encode()) % 101) / 1010
        return (0.55 + shift) % 1.0

    def ball_row(self) -> float:
        """How far down the frame the ball rolls, 0 to 1 (the original path without a seed)."""
        return 1.0 if self.seed is None else (self._seed_hash() // 1000 % 7) / 6

    def _seed_hash(self) -> int:
        # Neighbouring seeds look nothing alike.
        return zlib.crc32(str(self.seed).encode())


@dataclass(frozen=True)
class Rendered:
    video: bytes
    thumbnail: bytes


def _frame(
    scene: Scene,
    lines: list[str],
    font: ImageFont.FreeTypeFont | ImageFont.ImageFont,
    index: int,
    total: int,
) -> Image.Image:
    width, height = scene.width, scene.height
    t = index / max(total - 1, 1)
    r, g, b = colorsys.hsv_to_rgb((scene.hue() + 0.35 * t) % 1.0, 0.6, 0.35)
    image = Image.new("RGB", (width, height), (int(r * 255), int(g * 255), int(b * 255)))
    draw = ImageDraw.Draw(image)
    # A ball crossing the frame, so consecutive frames really differ.
    x = int(t * (width - 60)) + 30
    ball = int(scene.ball_row() * (height - 140)) + 106
    draw.ellipse((x - 18, ball - 36, x + 18, ball), fill=(250, 200, 80))
    y = 40 + int(20 * abs(((index / FPS) % 2) - 1))
    for line in lines:
        draw.text((32, y), line, font=font, fill=(255, 255, 255))
        y += 34
    if scene.negative_prompt is not None:
        text = "no: " + scene.negative_prompt[:60]
        draw.text((32, height - 44), text, font=font, fill=(255, 150, 150))
        draw.line(
            (32, height - 30, 32 + int(draw.textlength(text, font=font)), height - 30), (255, 150, 150), 2
        )
    draw.rectangle((0, height - 8, int(width * t), height), fill=(255, 255, 255))
    return image


def _opening(scene: Scene) -> Image.Image | None:
    if scene.first_frame is None:
        return None
    with Image.open(io.BytesIO(scene.first_frame)) as image:
        return image.convert("RGB").resize((scene.width, scene.height), Image.Resampling.LANCZOS)


def render(scene: Scene) -> Rendered:
    """The scene's video and thumbnail (the middle frame)."""
    font = ImageFont.load_default(size=26)
    lines = textwrap.wrap(scene.prompt, width=max(10, scene.width // 16))[:6] or [" "]
    total = scene.duration_s * FPS
    buffer = io.BytesIO()
    thumbnail = b""
    with av.open(buffer, mode="w", format="mp4") as container:
        stream = container.add_stream("libx264", rate=FPS)
        stream.width, stream.height, stream.pix_fmt = scene.width, scene.height, "yuv420p"
        stream.options = {"preset": "ultrafast"}
        opening = _opening(scene)
        for index in range(total):
            image = (
                opening if index == 0 and opening is not None else _frame(scene, lines, font, index, total)
            )
            if index == total // 2:
                jpeg = io.BytesIO()
                image.save(jpeg, format="JPEG", quality=85)
                thumbnail = jpeg.getvalue()
            frame = av.VideoFrame.from_image(image)  # type: ignore[no-untyped-call]
            container.mux(stream.encode(frame))
        container.mux(stream.encode(None))
    return Rendered(video=buffer.getvalue(), thumbnail=thumbnail)
