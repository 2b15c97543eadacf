"""Images a client gives us (a first frame: uploaded, or fetched from a URL), checked by their content, never
by a name or a declared type: PNG, JPEG or WebP that really decodes, within a size in pixels. CPU-bound: call
``inspect_image`` in a thread."""

from __future__ import annotations

import io
import warnings
from dataclasses import dataclass

from PIL import Image, UnidentifiedImageError

# The formats we take, as Pillow names them, and what we store and serve each as.
CONTENT_TYPES = {"PNG": "image/png", "JPEG": "image/jpeg", "WEBP": "image/webp"}
EXTENSIONS = {"image/png": ".png", "image/jpeg": ".jpg", "image/webp": ".webp"}
# Larger than any frame we make (4k is 3840 x 2160), small enough that decoding one is cheap.
MAX_SIDE = 8192


class NotAnImage(ValueError):
    """The bytes are not a PNG, JPEG or WebP image we can use; the message says why."""


@dataclass(frozen=True)
class ImageInfo:
    content_type: str
    width: int
    height: int

    @property
    def extension(self) -> str:
        return EXTENSIONS[self.content_type]


def inspect_image(data: bytes) -> ImageInfo:
    """What the image is, from its bytes; ``NotAnImage`` if they are not a usable PNG, JPEG or WebP."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as image:
                kind, (width, height) = image.format, image.size
                if kind not in CONTENT_TYPES:
                    raise NotAnImage(f"a {kind or 'unknown'} image; send PNG, JPEG or WebP")
                if width > MAX_SIDE or height > MAX_SIDE:
                    raise NotAnImage(f"{width}x{height} pixels; at most {MAX_SIDE} on each side")
                image.load()  # the whole image decodes, not just its header
    except NotAnImage:
        raise
    except (UnidentifiedImageError, Image.DecompressionBombWarning, Image.DecompressionBombError):
        raise NotAnImage("not a PNG, JPEG or WebP image") from None
    except (OSError, ValueError, SyntaxError) as exc:  # truncated or corrupt data
        raise NotAnImage(f"the image does not decode ({exc})") from None
    return ImageInfo(CONTENT_TYPES[kind], width, height)
