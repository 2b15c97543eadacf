"""A generation's first frame, when its request gave one: the bytes of an upload (already in media storage,
checked by the api), or an image fetched from the client's URL through the same destination guard as webhook
deliveries (no private, loopback or link-local address, after DNS too; bounded in size and time; checked by
its content) and then kept in media storage beside the video, so a retry or another instance does not fetch
it again."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import aiohttp

from videogen_common.destinations.guarded_http import DestinationNotAllowed, guarded_session
from videogen_common.failures import ErrorCode, GenerationError
from videogen_common.images import NotAnImage, inspect_image
from videogen_common.media import MediaStore, signed_media_url
from videogen_common.records.generation import GenerationRecord
from videogen_orchestrator.providers.base import Job
from videogen_orchestrator.providers.http import (
    DownloadRefused,
    DownloadTooLarge,
    RetryPolicy,
    TransientFailure,
    download,
)
from videogen_orchestrator.settings import OrchestratorSettings

USER_AGENT = "videogen-images/1"

# Fetches an image by URL: (url, max_bytes) -> bytes; raises ImageFetchError.
ImageFetcher = Callable[[str, int], Awaitable[bytes]]


@dataclass(frozen=True)
class FirstFrame:
    data: bytes
    content_type: str
    key: str  # where our copy is, in media storage


class ImageFetchError(Exception):
    """The image could not be fetched; ``retriable``: the same request may work later."""

    def __init__(self, message: str, *, retriable: bool) -> None:
        super().__init__(message)
        self.retriable = retriable


class FirstFrameUnusable(Exception):
    def __init__(self, error: GenerationError) -> None:
        super().__init__(error.message)
        self.error = error


def _unusable(message: str, *, retriable: bool = False) -> FirstFrameUnusable:
    return FirstFrameUnusable(GenerationError(ErrorCode.IMAGE_UNUSABLE, message, retriable=retriable))


def guarded_fetcher(allow: list[Any], timeout_seconds: float, policy: RetryPolicy) -> ImageFetcher:
    """Fetch with ``providers.http.download`` over a guarded session: only public addresses (and
    ``allow``'s networks), no redirects, no proxy."""

    def session(timeout: aiohttp.ClientTimeout) -> aiohttp.ClientSession:
        return guarded_session(allow, USER_AGENT)

    async def fetch(url: str, max_bytes: int) -> bytes:
        try:
            return await download(
                url,
                max_bytes=max_bytes,
                timeout_seconds=timeout_seconds,
                policy=policy,
                session=session,
                follow_redirects=False,
            )
        except DestinationNotAllowed as exc:
            message = f"the image URL points at an address we do not fetch from ({exc})"
            raise ImageFetchError(message, retriable=False) from None
        except DownloadTooLarge:
            raise ImageFetchError(f"the image is over {max_bytes} bytes", retriable=False) from None
        except DownloadRefused as exc:
            raise ImageFetchError(f"the image URL did not give the image ({exc})", retriable=False) from None
        except TransientFailure as exc:
            raise ImageFetchError(f"the image could not be fetched ({exc})", retriable=True) from None

    return fetch


async def resolve_first_frame(
    record: GenerationRecord, media: MediaStore, fetch: ImageFetcher, max_bytes: int
) -> tuple[FirstFrame | None, tuple[str, str] | None]:
    """The generation's first frame (None if it asked for none), and what to save on it once the image has
    been fetched and kept (its media key and content type; None when there is nothing new to save). Raises
    ``FirstFrameUnusable`` when the image cannot be had or used."""
    image = record.image
    if image is None:
        return None, None
    key, content_type = record.image_key, record.image_type
    if key is not None and content_type is not None:
        data = await media.get(key)
        if data is None:
            raise _unusable("the image is no longer stored; upload it again")
        return FirstFrame(data, content_type, key), None
    url = image.url
    if not isinstance(url, str):
        raise _unusable("the generation names no image to fetch")
    try:
        data = await fetch(url, max_bytes)
    except ImageFetchError as exc:
        raise _unusable(str(exc), retriable=exc.retriable) from None
    try:
        info = await asyncio.to_thread(inspect_image, data)
    except NotAnImage as exc:
        raise _unusable(f"the URL did not give a usable image: {exc}") from None
    key = f"{record.id}/first_frame{info.extension}"
    await media.put(key, data)
    return FirstFrame(data, info.content_type, key), (key, info.content_type)


def job_for(
    record: GenerationRecord,
    frame: FirstFrame | None,
    *,
    settings: OrchestratorSettings,
    now: datetime,
    on_progress: Callable[[int], None],
) -> Job:
    """What the adapter is asked to make of the generation, with its first frame (its bytes, and a link to
    our copy signed for an hour, for the providers that fetch it) if it has one."""
    image_url = None
    spec = settings.catalogue.get(record.provider, record.model) if record.model is not None else None
    if frame is not None:
        image_url = signed_media_url(
            settings.public_base_url,
            settings.media_signing_key.get_secret_value(),
            frame.key,
            now=now,
            retention=timedelta(hours=1),
        )
    return Job(
        generation_id=record.id,
        prompt=record.prompt,
        duration=record.duration,
        image=frame.data if frame else None,
        image_type=frame.content_type if frame else None,
        image_url=image_url,
        aspect_ratio=record.aspect_ratio,
        resolution=record.resolution,
        seed=record.seed,
        negative_prompt=record.negative_prompt,
        model=record.model,
        durations=spec.capabilities.durations if spec is not None else None,
        on_progress=on_progress,
    )
