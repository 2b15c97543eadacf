"""What each provider can make, declared once: the orchestrator's adapters map a request onto their provider's
API with these tables (and a test holds every adapter to its own), and the api validates requests and answers
``GET /v1/providers`` from the same tables, without importing the orchestrator.

Aspect ratios and resolutions are strict: a provider is asked only for the values it declares, each mapped to
its own spelling of it (``native_ratios``: Runway's ``1280:720`` for ``16:9``). Durations stay what the spec
says (3 to 10 s for every provider), mapped to the nearest the provider makes."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from videogen_common.domain import Provider


class AspectRatio(StrEnum):
    """Every aspect ratio the API knows (width:height); a provider accepts a subset."""

    LANDSCAPE = "16:9"
    PORTRAIT = "9:16"
    SQUARE = "1:1"
    CLASSIC = "4:3"
    CLASSIC_PORTRAIT = "3:4"
    CINEMA = "21:9"
    CINEMA_PORTRAIT = "9:21"
    PORTRAIT_4_5 = "4:5"
    LANDSCAPE_5_4 = "5:4"
    PHOTO = "3:2"
    PHOTO_PORTRAIT = "2:3"


class Resolution(StrEnum):
    """Every resolution the API knows, by the frame's shorter side; a provider accepts a subset."""

    P360 = "360p"
    P480 = "480p"
    P540 = "540p"
    P720 = "720p"
    P1080 = "1080p"
    UHD = "4k"


ASPECT_RATIOS = tuple(r.value for r in AspectRatio)
RESOLUTIONS = tuple(r.value for r in Resolution)
# The shorter side of a frame at each resolution (a 9:16 720p video is 720 x 1280).
SHORT_SIDE = {"360p": 360, "480p": 480, "540p": 540, "720p": 720, "1080p": 1080, "4k": 2160}
DEFAULT_ASPECT_RATIO = "16:9"
MAX_SEED = 4_294_967_295


@dataclass(frozen=True)
class Capabilities:
    durations: tuple[int, ...]  # the lengths the provider makes; a request's is mapped to the nearest
    aspect_ratios: tuple[str, ...]
    resolutions: tuple[str, ...]
    default_resolution: str
    image: bool  # a first frame (image-to-video)
    seed: bool
    negative_prompt: bool
    # A video from text alone (False: only from a first frame, as Runway's Gen-4 Turbo).
    text: bool = True
    # The provider's own spelling of each aspect ratio, where it differs from ours.
    native_ratios: dict[str, str] = field(default_factory=dict)

    def native_ratio(self, ratio: str) -> str:
        return self.native_ratios.get(ratio, ratio)

    def public(self) -> dict[str, Any]:
        """What ``GET /v1/providers`` says of it."""
        return {
            "durations": list(self.durations),
            "aspect_ratios": list(self.aspect_ratios),
            "resolutions": list(self.resolutions),
            "default_resolution": self.default_resolution,
            "image_input": self.image,
            "seed": self.seed,
            "negative_prompt": self.negative_prompt,
        }


CAPABILITIES: dict[Provider, Capabilities] = {
    # Renders locally at any of these, and honours every field (see videogen_orchestrator.render).
    Provider.MOCK: Capabilities(
        durations=tuple(range(3, 11)),
        aspect_ratios=ASPECT_RATIOS,
        resolutions=("360p", "480p", "540p", "720p", "1080p"),
        default_resolution="360p",
        image=True,
        seed=True,
        negative_prompt=True,
    ),
    # Gen-4.5, text or image to video: 1280:720 or 720:1280, 2 to 10 s, a seed; no negative prompt.
    Provider.RUNWAY: Capabilities(
        durations=tuple(range(2, 11)),
        aspect_ratios=("16:9", "9:16"),
        resolutions=("720p",),
        default_resolution="720p",
        image=True,
        seed=True,
        negative_prompt=False,
        native_ratios={"16:9": "1280:720", "9:16": "720:1280"},
    ),
    # Ray 2: seven aspect ratios, 540p to 4k, 5 s or 9 s, a first keyframe; no seed, no negative prompt.
    Provider.LUMA: Capabilities(
        durations=(5, 9),
        aspect_ratios=("16:9", "9:16", "1:1", "4:3", "3:4", "21:9", "9:21"),
        resolutions=("540p", "720p", "1080p", "4k"),
        default_resolution="720p",
        image=True,
        seed=False,
        negative_prompt=False,
    ),
    # Pika 2.2 on fal: seven aspect ratios, 720p or 1080p, 5 s or 10 s, a seed, a negative prompt, and an
    # image (its image-to-video model, whose frame follows the image's shape).
    Provider.PIKA: Capabilities(
        durations=(5, 10),
        aspect_ratios=("16:9", "9:16", "1:1", "4:5", "5:4", "3:2", "2:3"),
        resolutions=("720p", "1080p"),
        default_resolution="720p",
        image=True,
        seed=True,
        negative_prompt=True,
    ),
}


def nearest_duration(requested: int, offered: Collection[int]) -> int:
    """The provider's duration for a request: the shortest it makes that is at least ``requested``, else
    its longest (a video is never cut shorter than asked unless the provider cannot make it longer)."""
    if not offered:
        raise ValueError("a provider offers at least one duration")
    longer = [d for d in offered if d >= requested]
    return min(longer) if longer else max(offered)


def frame_size(aspect_ratio: str, resolution: str) -> tuple[int, int]:
    """Width and height of a frame: the resolution's short side, the other side from the ratio, both even
    (H.264's 4:2:0 needs it)."""
    across, down = (int(part) for part in aspect_ratio.split(":"))
    short = float(SHORT_SIDE[resolution])
    if across >= down:
        width, height = short * across / down, short
    else:
        width, height = short, short * down / across
    return round(width / 2) * 2, round(height / 2) * 2


def unsupported(
    provider: Provider, options: dict[str, Any], caps: Capabilities | None = None
) -> list[dict[str, str]]:
    """Field errors for what ``options`` (the request's optional fields that were given) asks of
    ``provider`` (of its model whose capabilities are ``caps``; None: its default model's) and it cannot do:
    each names the field and what the provider would accept."""
    caps = caps or CAPABILITIES[provider]
    errors: list[dict[str, str]] = []

    def refuse(name: str, message: str) -> None:
        errors.append({"field": name, "message": message, "code": "unsupported_by_provider"})

    ratio = options.get("aspect_ratio")
    if ratio is not None and ratio not in caps.aspect_ratios:
        refuse("aspect_ratio", f"{provider.value} makes {', '.join(caps.aspect_ratios)}; not {ratio}")
    resolution = options.get("resolution")
    if resolution is not None and resolution not in caps.resolutions:
        refuse("resolution", f"{provider.value} makes {', '.join(caps.resolutions)}; not {resolution}")
    for name, able in (("seed", caps.seed), ("negative_prompt", caps.negative_prompt), ("image", caps.image)):
        if options.get(name) is not None and not able:
            refuse(name, f"{provider.value} does not take a {name.replace('_', ' ')}")
    return errors
