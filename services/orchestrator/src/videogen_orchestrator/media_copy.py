"""Copying a finished video into our media storage: its bytes (and its thumbnail's) fetched from the
provider's links before they expire (``fetch``), stored and signed for as long as the generation's retention
(``store``: a thumbnail made from the video when the provider gave none), and what was stored for a
generation canceled meanwhile deleted again (``discard``).

**Fenced.** A copy is a lease holder's write like the others: its keys carry the lease's fence
(``media_keys``: ``{id}/video-{fence}.mp4``), so a holder that lost its lease while it copied (cut off, or
slow) writes only objects of its own, never over those of the holder that took the generation over; the
generation's terminal write (compare-and-set on the same fence) decides whose copy the generation names,
and the loser deletes its own (``discard_copy``). The actor checks the lease just before the copy, so a
stale holder usually copies nothing at all."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import datetime

from videogen_common.clock import Clock
from videogen_common.failures import ErrorCode, GenerationError
from videogen_common.media import MediaStore, signed_media_url
from videogen_common.records.generation import GenerationRecord, StoredVideo
from videogen_common.repositories.generations import GenerationRepository
from videogen_common.retention import RetentionPolicy
from videogen_common.store import Store
from videogen_orchestrator.providers.base import Output, ProviderError
from videogen_orchestrator.providers.http import DownloadRefused, DownloadTooLarge, TransientFailure, download
from videogen_orchestrator.providers.registry import retry_policy
from videogen_orchestrator.settings import OrchestratorSettings
from videogen_orchestrator.thumbnails import ThumbnailError, make_thumbnail

log = logging.getLogger(__name__)

# Fetches a provider's media by URL (bounded size); the default is ``providers.http.download``.
Downloader = Callable[[str, int], Awaitable[bytes]]

# A provider's thumbnail is small; a larger file is not a thumbnail.
THUMBNAIL_MAX_BYTES = 10 * 1024 * 1024


def media_keys(record: GenerationRecord) -> tuple[str, str]:
    """Where the video and thumbnail of ``record``'s lease holder are stored: under the generation's folder,
    named by the lease's fence (plain ``video.mp4`` for a generation never claimed), so no two holders share
    a key."""
    suffix = "" if record.lease_fence is None else f"-{record.lease_fence}"
    return f"{record.id}/video{suffix}.mp4", f"{record.id}/thumbnail{suffix}.jpg"


class MediaCopy:
    def __init__(
        self,
        *,
        settings: OrchestratorSettings,
        store: Store,
        media: MediaStore,
        clock: Clock,
        downloader: Downloader | None = None,
    ) -> None:
        self._settings = settings
        self._generations = GenerationRepository(store)
        self._media = media
        self._clock = clock
        self._download = downloader or self._download_over_http
        self._retention = RetentionPolicy(store, settings.media_retention_days)

    async def due_at(self, record: GenerationRecord, stored_at: datetime) -> datetime:
        """When what is stored now for the generation is due to be deleted."""
        return await self._retention.due_at(record, stored_at)

    async def _download_over_http(self, url: str, max_bytes: int) -> bytes:
        return await download(
            url,
            max_bytes=max_bytes,
            timeout_seconds=self._settings.download_timeout_seconds,
            policy=retry_policy(self._settings),
        )

    async def fetch(self, output: Output) -> tuple[bytes, bytes | None]:
        """The video's (and thumbnail's) bytes: given by the adapter, or copied from the provider's links
        before they expire. A download that keeps failing transiently is tried again at the next poll."""
        video = output.video
        if video is None:
            assert output.video_url is not None
            try:
                video = await self._download(output.video_url, self._settings.download_max_bytes)
            except TransientFailure as exc:
                raise ProviderError(
                    GenerationError(ErrorCode.PROVIDER_UNAVAILABLE, f"the video could not be fetched: {exc}"),
                    transient=True,
                ) from exc
            except DownloadTooLarge as exc:
                raise ProviderError(
                    GenerationError(ErrorCode.PROVIDER_ERROR, f"the provider's video is too large: {exc}")
                ) from exc
            except DownloadRefused as exc:
                raise ProviderError(
                    GenerationError(
                        ErrorCode.PROVIDER_ERROR,
                        f"the provider's video link did not work: {exc}",
                        retriable=True,
                    )
                ) from exc
        thumbnail = output.thumbnail
        if thumbnail is None and output.thumbnail_url:
            try:
                thumbnail = await self._download(output.thumbnail_url, THUMBNAIL_MAX_BYTES)
            except (TransientFailure, DownloadTooLarge, DownloadRefused) as exc:
                log.warning("the provider's thumbnail could not be fetched", extra={"error": str(exc)})
        return video, thumbnail

    async def store(self, record: GenerationRecord, video: bytes, thumbnail: bytes | None) -> StoredVideo:
        """The media stored, and signed for as long as the generation's retention (when it is due to be
        deleted)."""
        settings = self._settings
        generation_id = record.id
        now = self._clock.now()
        retention = await self._retention.retention(record)
        signing_key = settings.media_signing_key.get_secret_value()
        video_key, thumb_key = media_keys(record)
        await self._media.put(video_key, video)
        video_url = signed_media_url(
            settings.public_base_url, signing_key, video_key, now=now, retention=retention
        )
        if not thumbnail:
            try:
                thumbnail = await make_thumbnail(video)
            except ThumbnailError as exc:
                # A video without a thumbnail is still a finished video.
                log.warning(
                    "no thumbnail: the video could not be decoded",
                    extra={"generation_id": generation_id, "error": str(exc)},
                )
        if not thumbnail:
            return StoredVideo(video_url, video_key, due_at=now + retention)
        await self._media.put(thumb_key, thumbnail)
        thumbnail_url = signed_media_url(
            settings.public_base_url, signing_key, thumb_key, now=now, retention=retention
        )
        return StoredVideo(video_url, video_key, thumbnail_url, thumb_key, due_at=now + retention)

    async def discard_copy(self, generation_id: str, stored: StoredVideo) -> None:
        """A copy whose holder then lost the generation (its terminal write matched nothing): deleted, but
        for any key the generation names (none, as a key carries its holder's fence; checked all the same).
        A failure is logged: the retention sweeper deletes the generation's folder when it is deleted."""
        try:
            named = await self._generations.media_keys_of(generation_id)
            orphans = [key for key in stored.keys if key not in named]
            if orphans:
                await self._media.delete(orphans)
                log.info("discarded a stale copy of the media", extra={"generation_id": generation_id})
        except Exception as exc:
            log.warning("could not discard media", extra={"generation_id": generation_id, "error": repr(exc)})

    async def discard(self, generation_id: str, keys: list[str]) -> None:
        """Objects stored for a generation its actor then lost: deleted if the generation was canceled or
        deleted meanwhile, so nothing is left of it (a generation taken over by another instance keeps them:
        the new owner stores the same keys)."""
        try:
            if await self._generations.was_canceled(generation_id):
                await self._media.delete(keys)
                log.info(
                    "discarded the media of a canceled generation", extra={"generation_id": generation_id}
                )
        except Exception as exc:  # the retention sweeper deletes the folder of a deleted generation again
            log.warning("could not discard media", extra={"generation_id": generation_id, "error": repr(exc)})
