"""One actor per in-flight generation: submit to the provider once, poll, store the media, and move the
generation to its terminal state with compare-and-set writes."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from videogen_common.clock import Clock
from videogen_common.domain import Status
from videogen_common.generations import transition
from videogen_common.media import MediaStore, signed_media_url
from videogen_common.store import Store
from videogen_orchestrator.providers.base import GenerationError, Job, ProviderAdapter, TaskState, TaskStatus
from videogen_orchestrator.settings import OrchestratorSettings
from videogen_orchestrator.status_events import EventSink, publish_status

log = logging.getLogger(__name__)

Doc = dict[str, Any]


class LeaseLost(Exception):
    """Another instance owns this generation now; this actor must stop touching it."""


class GenerationActor:
    def __init__(
        self,
        *,
        settings: OrchestratorSettings,
        store: Store,
        media: MediaStore,
        providers: Mapping[str, ProviderAdapter],
        sink: EventSink,
        clock: Clock,
    ) -> None:
        self._settings = settings
        self._store = store
        self._media = media
        self._providers = providers
        self._sink = sink
        self._clock = clock

    @property
    def owner(self) -> str:
        """The lease owner this actor writes as: this orchestrator instance."""
        return self._settings.orchestrator_instance

    async def run(self, doc: Doc) -> Doc | None:
        """Drive a leased generation to a terminal state. Returns the final document, or None if the
        generation was moved by someone else (cancelled, or its lease taken over)."""
        log_extra = {"generation_id": doc["_id"], "account_id": doc["account_id"]}
        adapter = self._providers.get(doc["provider"])
        if adapter is None:
            return await self._finish(
                doc,
                error=GenerationError(
                    code="provider_unavailable", message=f"provider {doc['provider']!r} is not configured"
                ),
            )
        job = Job(generation_id=doc["_id"], prompt=doc["prompt"], duration=doc["duration"])
        try:
            if doc.get("provider_task_id") is None:
                task_id = await adapter.submit(job)
                doc = await self._save_task_id(doc, task_id)
            while True:
                state = await adapter.poll(doc["provider_task_id"], job)
                await self._ensure_owned(doc)
                if state.status in (TaskStatus.SUCCEEDED, TaskStatus.FAILED):
                    return await self._finish(doc, state=state)
                doc = await self._follow(doc, state)
                await asyncio.sleep(self._settings.poll_interval_seconds)
        except LeaseLost:
            log.info("lease lost or generation canceled; stopping", extra=log_extra)
            return None

    async def _ensure_owned(self, doc: Doc) -> None:
        """A poll can take long and writes nothing while the provider's state is unchanged: check that the
        generation is still ours and unmoved (not canceled, not taken over) before acting on its result, so a
        canceled generation stops being polled and stores no media."""
        still = await self._store.generations.find_one(
            {"_id": doc["_id"], "lease_owner": self.owner, "version": doc["version"]}, projection={"_id": 1}
        )
        if still is None:
            raise LeaseLost

    async def _save_task_id(self, doc: Doc, task_id: str) -> Doc:
        updated = await self._store.generations.find_one_and_update(
            {"_id": doc["_id"], "lease_owner": self.owner, "version": doc["version"]},
            {"$set": {"provider_task_id": task_id, "updated_at": self._clock.now()}, "$inc": {"version": 1}},
            return_document=True,
        )
        if updated is None:
            raise LeaseLost
        return updated

    async def _follow(self, doc: Doc, state: TaskState) -> Doc:
        """Mirror the provider's non-terminal state: its queue → ``queued``, running → ``processing``."""
        target = Status.QUEUED if state.status is TaskStatus.QUEUED else Status.PROCESSING
        if doc["status"] == target.value:
            return doc
        updated = await transition(
            self._store.generations,
            doc,
            target,
            now=self._clock.now(),
            extra_filter={"lease_owner": self.owner},
        )
        if updated is None:
            raise LeaseLost
        return updated

    async def _finish(
        self, doc: Doc, *, state: TaskState | None = None, error: GenerationError | None = None
    ) -> Doc | None:
        now = self._clock.now()
        fields: Doc
        if state is not None and state.status is TaskStatus.SUCCEEDED and state.output is not None:
            fields = await self._store_media(doc["_id"], state.output.video, state.output.thumbnail)
            target = Status.COMPLETED
        else:
            err = (
                error
                or (state.error if state else None)
                or GenerationError(
                    code="provider_error", message="the provider reported failure without a reason"
                )
            )
            fields = {"error": err.to_dict()}
            target = Status.FAILED
        if doc["status"] == Status.QUEUED.value and target is Status.COMPLETED:
            doc = await self._follow(doc, TaskState(TaskStatus.RUNNING))
        final = await transition(
            self._store.generations,
            doc,
            target,
            now=now,
            fields=fields,
            extra_filter={"lease_owner": self.owner},
        )
        if final is None:
            log.info(
                "generation moved by someone else before it finished", extra={"generation_id": doc["_id"]}
            )
            return None
        log.info(
            "generation finished",
            extra={"generation_id": doc["_id"], "account_id": doc["account_id"], "status": final["status"]},
        )
        await publish_status(self._store, self._sink, final, now)
        return final

    async def _store_media(self, generation_id: str, video: bytes, thumbnail: bytes | None) -> Doc:
        settings = self._settings
        now = self._clock.now()
        retention = timedelta(days=settings.media_retention_days)
        signing_key = settings.media_signing_key.get_secret_value()
        video_key, thumb_key = f"{generation_id}/video.mp4", f"{generation_id}/thumbnail.jpg"
        await self._media.put(video_key, video)
        fields: Doc = {
            "video_url": signed_media_url(
                settings.public_base_url, signing_key, video_key, now=now, retention=retention
            ),
            "video_key": video_key,
            "thumbnail_url": None,
        }
        if thumbnail:
            await self._media.put(thumb_key, thumbnail)
            fields["thumbnail_url"] = signed_media_url(
                settings.public_base_url, signing_key, thumb_key, now=now, retention=retention
            )
            fields["thumbnail_key"] = thumb_key
        return fields
