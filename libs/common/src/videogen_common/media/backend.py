"""The media store the settings choose."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from videogen_common.media.local import LocalMediaStore
from videogen_common.media.storage import MediaStore
from videogen_common.settings import CommonSettings


@asynccontextmanager
async def open_media_store(settings: CommonSettings) -> AsyncIterator[MediaStore]:
    """The media store the settings choose (``VIDEOGEN_MEDIA_BACKEND``), open for the life of the block."""
    if settings.media_backend == "local":
        yield LocalMediaStore(settings.media_dir)
        return
    # Imported here so that aiobotocore is loaded only by processes that use S3.
    from videogen_common.media.s3 import open_s3_media_store  # noqa: PLC0415

    async with open_s3_media_store(settings) as store:
        yield store
