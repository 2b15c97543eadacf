"""One actor per in-flight generation: submit to the provider once, poll, copy the media into our storage,
and move the generation to its terminal state with compare-and-set writes.

Paying twice is worse than failing once. The provider's task id is saved before the first poll, so a
restarted or different instance resumes polling instead of submitting again; and before a submit to a
provider that charges for it, the generation is marked ``submit_started_at``: if the process dies between
the submit and the save of its id, the next owner finds the mark without an id, cannot know whether a task
was made, and fails the generation (``provider_unavailable``, retriable) rather than submit again. A graceful
stop lets a submit in flight finish and save its id first.

Each generation has a deadline (``generation_deadline_seconds`` after its creation): past it, it fails with
``provider_timeout`` and the provider's task is canceled, best effort. A client's cancel (the api marks the
generation failed/canceled) is noticed at the next ownership check, and the provider's task is canceled too
where the provider allows it.

``run`` answers with what became of the generation: ``Finished`` (this actor wrote its terminal state) or
``Lost`` (someone else moved it). Inside, each ending is an ``Outcome`` (``Completed`` or ``Failed``) handed
to ``_finish``; every pause between polls is taken through the injected clock."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from opentelemetry.trace import SpanKind

from videogen_common.clock import Clock
from videogen_common.domain import Status
from videogen_common.generations import QueueReason
from videogen_common.logs import log_context
from videogen_common.media import MediaStore, signed_media_url
from videogen_common.records.generation import GenerationRecord
from videogen_common.repositories.generations import GenerationRepository
from videogen_common.store import Store
from videogen_common.tracing import annotate, tracer
from videogen_orchestrator.first_frame import (
    FirstFrameUnusable,
    ImageFetcher,
    guarded_fetcher,
    resolve_first_frame,
)
from videogen_orchestrator.outcomes import Completed, Failed, Finished, Lost, Outcome, RunResult
from videogen_orchestrator.progress import ProgressReporter
from videogen_orchestrator.providers.base import (
    ErrorCode,
    GenerationError,
    Job,
    Output,
    ProviderAdapter,
    ProviderError,
    TaskState,
    TaskStatus,
)
from videogen_orchestrator.providers.http import DownloadRefused, DownloadTooLarge, TransientFailure, download
from videogen_orchestrator.providers.registry import retry_policy
from videogen_orchestrator.settings import OrchestratorSettings
from videogen_orchestrator.status_events import EventSink, publish_status
from videogen_orchestrator.thumbnails import ThumbnailError, make_thumbnail

log = logging.getLogger(__name__)

Doc = dict[str, Any]
# Fetches a provider's media by URL (bounded size); the default is ``providers.http.download``.
Downloader = Callable[[str, int], Awaitable[bytes]]

# A provider's thumbnail is small; a larger file is not a thumbnail.
THUMBNAIL_MAX_BYTES = 10 * 1024 * 1024
# A best-effort cancel at the provider is not worth holding an actor (or a shutdown) longer than this.
CANCEL_TIMEOUT_SECONDS = 15.0


# Told of every generation this actor finishes (the metrics count them).
FinishedObserver = Callable[[Doc], None]


@dataclass(frozen=True, slots=True)
class _PollAgain:
    """Not finished yet: poll again, holding ``doc``; ``pause`` first unless the poll was cut short by the
    client's deadline (then the deadline is looked at at once)."""

    doc: Doc
    pause: bool = True


NO_REASON = GenerationError(code="provider_error", message="the provider reported failure without a reason")


def _interrupted_submit(provider: str) -> GenerationError:
    return GenerationError(
        ErrorCode.PROVIDER_UNAVAILABLE,
        f"an earlier attempt stopped while submitting to {provider}; whether a task was started is unknown, "
        "so it is not submitted again (never paid for twice)",
        retriable=True,
    )


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
        downloader: Downloader | None = None,
        image_fetcher: ImageFetcher | None = None,
        on_finished: FinishedObserver | None = None,
    ) -> None:
        self._settings = settings
        self._store = store
        self._generations = GenerationRepository(store)
        self._media = media
        self._providers = providers
        self._sink = sink
        self._clock = clock
        self._download = downloader or self._download_over_http
        self._fetch_image = image_fetcher or guarded_fetcher(
            settings.image_fetch_networks, settings.image_fetch_timeout_seconds, retry_policy(settings)
        )
        self._on_finished = on_finished

    @property
    def owner(self) -> str:
        """The lease owner this actor writes as: this orchestrator instance."""
        return self._settings.orchestrator_instance

    async def run(self, generation: GenerationRecord | Doc) -> RunResult:
        """Drive a leased generation to a terminal state. Every line logged meanwhile carries the generation's
        ids (its account, and the id of the request that created it). The steps below still hold the
        generation as its document."""
        doc = generation.to_doc() if isinstance(generation, GenerationRecord) else generation
        with log_context(
            generation_id=doc["_id"], account_id=doc["account_id"], request_id=doc.get("trace_id")
        ):
            result = await self._run(doc)
        if isinstance(result, Finished) and self._on_finished is not None:
            self._on_finished(result.doc)
        return result

    async def _run(self, doc: Doc) -> RunResult:
        adapter = self._providers.get(doc["provider"])
        if adapter is None:
            return await self._finish(
                doc,
                Failed(
                    GenerationError(
                        code="provider_unavailable", message=f"provider {doc['provider']!r} is not configured"
                    )
                ),
            )
        progress = ProgressReporter(
            store=self._store,
            sink=self._sink,
            clock=self._clock,
            owner=self.owner,
            every=self._settings.progress_write_seconds,
            notice_every=self._settings.progress_webhook_seconds,
        )
        try:
            return await self._drive(doc, adapter, progress)
        finally:
            await progress.close()

    async def _job(self, doc: Doc, progress: ProgressReporter) -> tuple[Doc, Job]:
        """What the adapter is asked to make, the first frame fetched (and kept) if the request gave one.
        Raises ``FirstFrameUnusable`` when it cannot be had."""
        frame, fetched = await resolve_first_frame(
            doc, self._media, self._fetch_image, self._settings.image_max_bytes
        )
        if fetched:
            doc = await self._set(doc, fetched)
        image_url = None
        if frame is not None:
            settings = self._settings
            image_url = signed_media_url(
                settings.public_base_url,
                settings.media_signing_key.get_secret_value(),
                frame.key,
                now=self._clock.now(),
                retention=timedelta(hours=1),
            )
        job = Job(
            generation_id=doc["_id"],
            prompt=doc["prompt"],
            duration=doc["duration"],
            aspect_ratio=doc.get("aspect_ratio"),
            resolution=doc.get("resolution"),
            seed=doc.get("seed"),
            negative_prompt=doc.get("negative_prompt"),
            image=frame.data if frame else None,
            image_type=frame.content_type if frame else None,
            image_url=image_url,
            on_progress=progress.seen,
        )
        return doc, job

    async def _drive(self, doc: Doc, adapter: ProviderAdapter, progress: ProgressReporter) -> RunResult:
        """The job, the task at the provider (submitted now unless an earlier attempt did), then polls until
        the generation ends. Losing the generation at any point stops it all."""
        try:
            try:
                doc, job = await self._job(doc, progress)
            except FirstFrameUnusable as exc:
                return await self._finish(doc, Failed(exc.error))
            doc, refused = await self._submitted(doc, adapter, job, progress)
            if refused is not None:
                return await self._finish(doc, refused)
            task_id: str = doc["provider_task_id"]
            while True:
                if (late := self._late(doc)) is not None:
                    result = await self._finish(doc, Failed(late))
                    if isinstance(result, Finished):
                        await self._cancel_task(adapter, task_id, doc["_id"], reason="deadline")
                    return result
                progress.follow(doc)
                step = await self._poll_step(doc, adapter, task_id, job, progress)
                if not isinstance(step, _PollAgain):
                    return await self._finish(doc, step)
                doc = step.doc
                if step.pause:
                    pause = self._settings.poll_interval_seconds
                    await self._clock.sleep(min(pause, self._until_client_deadline(doc) or pause))
        except LeaseLost:
            log.info(
                "lease lost or generation canceled; stopping",
                extra={"generation_id": doc["_id"], "account_id": doc["account_id"]},
            )
            await self._cancel_if_canceled(doc["_id"], adapter, doc.get("provider_task_id"))
            return Lost()

    async def _submitted(
        self, doc: Doc, adapter: ProviderAdapter, job: Job, progress: ProgressReporter
    ) -> tuple[Doc, Failed | None]:
        """The generation with its provider task id: kept from an earlier attempt, or submitted now. Or, with
        the generation as it stands, why no task can be had: past a deadline, an earlier submit interrupted
        (whether it made a task is unknown), or the provider refused."""
        if doc.get("provider_task_id") is not None:
            return doc, None
        if (late := self._late(doc)) is not None:
            return doc, Failed(late)
        if doc.get("submit_started_at") is not None:
            return doc, Failed(_interrupted_submit(adapter.name))
        doc, error = await self._start_task(doc, adapter, job)
        if error is not None:
            return doc, Failed(error)
        progress.started(doc)
        return doc, None

    async def _poll_step(
        self, doc: Doc, adapter: ProviderAdapter, task_id: str, job: Job, progress: ProgressReporter
    ) -> Outcome | _PollAgain:
        """One poll and what it leads to: the generation's outcome (its media fetched if the task succeeded),
        or another poll, with the provider's non-terminal state mirrored onto the generation."""
        try:
            state = await self._poll(doc, adapter, task_id, job)
            if state is None:
                return _PollAgain(doc, pause=False)
            await self._ensure_owned(doc)
            if state.status is TaskStatus.SUCCEEDED and state.output is not None:
                with tracer.start_as_current_span("media.fetch"):
                    video, thumbnail = await self._fetch_media(state.output)
                return Completed(video, thumbnail)
            if state.status in (TaskStatus.SUCCEEDED, TaskStatus.FAILED):
                return Failed(state.error or NO_REASON)
            doc = await self._follow(doc, state)
            progress.follow(doc)
            if state.progress is not None:
                progress.seen(state.progress)
            return _PollAgain(doc)
        except ProviderError as exc:
            await self._ensure_owned(doc)
            if not exc.transient:
                return Failed(exc.error)
            # The deadline bounds how long a provider that does not answer is waited for.
            log.warning(
                "provider did not answer; polling again",
                extra={"generation_id": doc["_id"], "account_id": doc["account_id"], "error": str(exc)},
            )
            return _PollAgain(doc)

    async def _poll(self, doc: Doc, adapter: ProviderAdapter, task_id: str, job: Job) -> TaskState | None:
        """The task's state, or None if the client's deadline cut the poll short (a client's deadline is kept
        to the poll, not to the next one)."""
        deadline = asyncio.timeout(self._until_client_deadline(doc))
        try:
            with tracer.start_as_current_span("provider.poll", kind=SpanKind.CLIENT):
                async with deadline:
                    state = await adapter.poll(task_id, job)
                annotate(provider=adapter.name, task_status=state.status.value)
        except TimeoutError:
            if not deadline.expired():
                raise  # not the client's deadline: someone else's timeout
            return None
        return state

    # -- submitting ---------------------------------------------------------------------------------------

    async def _start_task(
        self, doc: Doc, adapter: ProviderAdapter, job: Job
    ) -> tuple[Doc, GenerationError | None]:
        """Submit once and save the task id. Returns the updated generation and, if no task was started,
        why. Cancellation (a graceful stop) waits for a submit in flight, so its task id is not lost."""
        plan = adapter.plan(job)
        if adapter.pays_per_submit:
            doc = await self._set(doc, {"submit_started_at": self._clock.now(), "provider_request": plan})
        submission = asyncio.ensure_future(self._submit_and_save(doc, adapter, job, plan))
        try:
            return await asyncio.shield(submission)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await submission
            raise

    async def _submit_and_save(
        self, doc: Doc, adapter: ProviderAdapter, job: Job, plan: dict[str, Any]
    ) -> tuple[Doc, GenerationError | None]:
        try:
            with tracer.start_as_current_span("provider.submit", kind=SpanKind.CLIENT):
                annotate(provider=adapter.name)
                task_id = await adapter.submit(job)
        except ProviderError as exc:
            log.warning(
                "provider refused or could not take the task",
                extra={"generation_id": doc["_id"], "provider": adapter.name, "error": str(exc)},
            )
            return doc, exc.error
        try:
            return await self._save_task_id(doc, task_id, plan), None
        except LeaseLost:
            # Canceled while it was being submitted: the task exists, so stop it too.
            await self._cancel_if_canceled(doc["_id"], adapter, task_id)
            raise

    async def _save_task_id(self, doc: Doc, task_id: str, plan: dict[str, Any] | None = None) -> Doc:
        fields: Doc = {"provider_task_id": task_id, "updated_at": self._clock.now()}
        if plan:
            fields["provider_request"] = plan
        return await self._set(doc, fields)

    async def _set(self, doc: Doc, fields: Doc) -> Doc:
        """Compare-and-set ``fields`` under this actor's lease, bumping the version, like a transition."""
        updated = await self._generations.set_owned(doc, self.owner, fields)
        if updated is None:
            raise LeaseLost
        return updated

    # -- deadline and cancel ------------------------------------------------------------------------------

    def _late(self, doc: Doc) -> GenerationError | None:
        """Why the generation must stop now, if it is past a deadline: the client's own (``deadline_at``, from
        ``deadline_seconds`` or ``Cancel-After``), or the deployment's for every generation."""
        now = self._clock.now()
        client: datetime | None = doc.get("deadline_at")
        if client is not None and now >= client:
            return GenerationError(
                ErrorCode.DEADLINE_EXCEEDED,
                "the video was not finished by the deadline the request set",
                retriable=True,
            )
        created: datetime = doc["created_at"]
        seconds = self._settings.generation_deadline_seconds
        if now >= created + timedelta(seconds=seconds):
            return GenerationError(
                ErrorCode.PROVIDER_TIMEOUT,
                f"the provider did not finish the video within {seconds:g} s of the request",
                retriable=True,
            )
        return None

    def _until_client_deadline(self, doc: Doc) -> float | None:
        """Seconds left before the client's deadline (0 once past); None without one."""
        client: datetime | None = doc.get("deadline_at")
        if client is None:
            return None
        return max(0.0, (client - self._clock.now()).total_seconds())

    async def _cancel_if_canceled(
        self, generation_id: str, adapter: ProviderAdapter, task_id: str | None
    ) -> None:
        """After losing the generation: if that is because its client canceled it, cancel the provider's task
        (a takeover by another instance leaves the task alone: the new owner polls it)."""
        if task_id is None or not adapter.can_cancel:
            return
        if await self._generations.was_canceled(generation_id):
            await self._cancel_task(adapter, task_id, generation_id, reason="canceled")

    async def _cancel_task(
        self, adapter: ProviderAdapter, task_id: str, generation_id: str, *, reason: str
    ) -> None:
        if not adapter.can_cancel:
            return
        extra = {"generation_id": generation_id, "provider": adapter.name, "reason": reason}
        try:
            async with asyncio.timeout(CANCEL_TIMEOUT_SECONDS):
                with tracer.start_as_current_span("provider.cancel", kind=SpanKind.CLIENT):
                    await adapter.cancel(task_id)
            log.info("canceled the provider's task", extra=extra)
        except Exception as exc:  # best effort: the generation is already final
            log.warning("could not cancel the provider's task", extra={**extra, "error": str(exc)})

    async def _ensure_owned(self, doc: Doc) -> None:
        """A poll can take long and writes nothing while the provider's state is unchanged: check that the
        generation is still ours and unmoved (not canceled, not taken over) before acting on its result, so a
        canceled generation stops being polled and stores no media."""
        if not await self._generations.still_owned(doc, self.owner):
            raise LeaseLost

    # -- media --------------------------------------------------------------------------------------------

    async def _download_over_http(self, url: str, max_bytes: int) -> bytes:
        return await download(
            url,
            max_bytes=max_bytes,
            timeout_seconds=self._settings.download_timeout_seconds,
            policy=retry_policy(self._settings),
        )

    async def _fetch_media(self, output: Output) -> tuple[bytes, bytes | None]:
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

    # -- state --------------------------------------------------------------------------------------------

    async def _follow(self, doc: Doc, state: TaskState) -> Doc:
        """Mirror the provider's non-terminal state: its queue → ``queued`` (the provider's), running →
        ``processing``; each change is published (best effort: a client streaming the generation sees it)."""
        target = Status.QUEUED if state.status is TaskStatus.QUEUED else Status.PROCESSING
        if doc["status"] == target.value:
            return doc
        now = self._clock.now()
        updated = await self._generations.transition(
            doc,
            target,
            now=now,
            fields={"queue_reason": QueueReason.PROVIDER} if target is Status.QUEUED else None,
            owner=self.owner,
        )
        if updated is None:
            raise LeaseLost
        await publish_status(self._sink, updated, now)
        return updated

    async def _finish(self, doc: Doc, outcome: Outcome) -> RunResult:
        """Move the generation to the state ``outcome`` calls for, its media stored first if it completed."""
        now = self._clock.now()
        fields: Doc
        if isinstance(outcome, Completed):
            with tracer.start_as_current_span("media.store"):
                annotate(video_bytes=len(outcome.video))
                stored = await self._store_media(doc["_id"], outcome.video, outcome.thumbnail)
                fields = {**stored, "progress": 100}
            target = Status.COMPLETED
            if doc["status"] == Status.QUEUED.value:
                doc = await self._follow(doc, TaskState(TaskStatus.RUNNING))
        else:
            fields = {"error": outcome.error.to_dict()}
            target = Status.FAILED
        final = await self._generations.transition(doc, target, now=now, fields=fields, owner=self.owner)
        if final is None:
            log.info(
                "generation moved by someone else before it finished", extra={"generation_id": doc["_id"]}
            )
            return Lost()
        log.info(
            "generation finished",
            extra={"generation_id": doc["_id"], "account_id": doc["account_id"], "status": final["status"]},
        )
        await publish_status(self._sink, final, now)
        return Finished(final)

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
        if not thumbnail:
            try:
                thumbnail = await make_thumbnail(video)
            except ThumbnailError as exc:
                # A video without a thumbnail is still a finished video.
                log.warning(
                    "no thumbnail: the video could not be decoded",
                    extra={"generation_id": generation_id, "error": str(exc)},
                )
        if thumbnail:
            await self._media.put(thumb_key, thumbnail)
            fields["thumbnail_url"] = signed_media_url(
                settings.public_base_url, signing_key, thumb_key, now=now, retention=retention
            )
            fields["thumbnail_key"] = thumb_key
        return fields
