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
from enum import StrEnum
from typing import Any

from opentelemetry.trace import SpanKind

from videogen_common import attempts
from videogen_common.clock import Clock
from videogen_common.domain import Status
from videogen_common.endings import end_generation
from videogen_common.failures import ErrorCode, GenerationError
from videogen_common.logs import log_context
from videogen_common.media import MediaStore, signed_media_url
from videogen_common.records.generation import GenerationRecord, StoredVideo
from videogen_common.repositories.generations import GenerationRepository
from videogen_common.retention import RetentionPolicy
from videogen_common.routing import TaskMade, is_provider_failure, later, may_fall_back
from videogen_common.store import Store
from videogen_common.tracing import annotate, tracer
from videogen_orchestrator.first_frame import (
    FirstFrameUnusable,
    ImageFetcher,
    guarded_fetcher,
    resolve_first_frame,
)
from videogen_orchestrator.outcomes import (
    Completed,
    Failed,
    Failover,
    Finished,
    Lost,
    Outcome,
    Refused,
    RunResult,
)
from videogen_orchestrator.progress import ProgressReporter
from videogen_orchestrator.providers.base import (
    CapacityRefused,
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

# Fetches a provider's media by URL (bounded size); the default is ``providers.http.download``.
Downloader = Callable[[str, int], Awaitable[bytes]]

# A provider's thumbnail is small; a larger file is not a thumbnail.
THUMBNAIL_MAX_BYTES = 10 * 1024 * 1024
# A best-effort cancel at the provider is not worth holding an actor (or a shutdown) longer than this.
CANCEL_TIMEOUT_SECONDS = 15.0


# Told of every generation this actor finishes (the metrics count them).
FinishedObserver = Callable[[GenerationRecord], None]


class TaskEvent(StrEnum):
    """What the actor tells admission about a generation's task at the provider."""

    # The provider accepted it (a lowered limit may climb back).
    ACCEPTED = "accepted"
    # It ended at the provider (its slot there is free, before the media is copied).
    ENDED = "ended"


TaskObserver = Callable[[GenerationRecord, TaskEvent], Awaitable[None]]
# Told what a provider's answer says of its health: the generation's task succeeded there (error None,
# ``seconds`` after it was accepted), or the provider failed it (its submit or its task) by its own fault.
HealthObserver = Callable[[GenerationRecord, GenerationError | None, float | None], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class _PollAgain:
    """Not finished yet: poll again, holding ``record``; ``pause`` first unless the poll was cut short by the
    client's deadline (then the deadline is looked at at once)."""

    record: GenerationRecord
    pause: bool = True


NO_REASON = GenerationError(ErrorCode.PROVIDER_ERROR, "the provider reported failure without a reason")


def _interrupted_submit(provider: str) -> GenerationError:
    return GenerationError(
        ErrorCode.PROVIDER_UNAVAILABLE,
        f"an earlier attempt stopped while submitting to {provider}; whether a task was started is unknown, "
        "so it is not submitted again (never paid for twice)",
        retriable=True,
    )


def poll_pause(
    settings: OrchestratorSettings, record: GenerationRecord, now: datetime, *, contended: bool = False
) -> float:
    """Seconds until the next poll of the generation's task: a fraction of the task's age, at least the base
    interval and at most the maximum, so a long video costs few polls and a short one is seen at once. While
    work waits for the provider's capacity (``contended``), the base interval: the slot a finished task frees
    is someone's, and a poll that comes late keeps it idle."""
    base = settings.poll_interval_seconds
    started = record.task_started_at or record.submit_started_at
    if started is None or contended:
        return base
    age = max(0.0, (now - started).total_seconds())
    return max(base, min(settings.poll_max_interval_seconds, age * settings.poll_age_fraction))


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
        on_task: TaskObserver | None = None,
        on_health: HealthObserver | None = None,
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
        self.on_task = on_task
        self.on_health = on_health
        # Whether work waits for a provider's capacity (admission's view; its tasks are polled sooner).
        self.contended: Callable[[str], bool] | None = None
        self.prices = settings.price_table
        self._retention = RetentionPolicy(store, settings.media_retention_days)

    @property
    def owner(self) -> str:
        """The lease owner this actor writes as: this orchestrator instance."""
        return self._settings.orchestrator_instance

    async def run(self, record: GenerationRecord) -> RunResult:
        """Drive a leased generation to a terminal state. Every line logged meanwhile carries the generation's
        ids (its account, and the id of the request that created it)."""
        with log_context(generation_id=record.id, account_id=record.account_id, request_id=record.trace_id):
            result = await self._run(record)
        if isinstance(result, Finished) and self._on_finished is not None:
            self._on_finished(result.record)
        return result

    def _adapter_for(self, record: GenerationRecord) -> ProviderAdapter | None:
        """The adapter of the key the generation runs on (its pool), else of its provider's only or first
        key (a generation from before pools were kept)."""
        if record.provider_pool is not None and record.provider_pool in self._providers:
            return self._providers[record.provider_pool]
        if record.provider in self._providers:
            return self._providers[record.provider]
        prefix = f"{record.provider}/"
        return next((a for name, a in sorted(self._providers.items()) if name.startswith(prefix)), None)

    async def _run(self, record: GenerationRecord) -> RunResult:
        adapter = self._adapter_for(record)
        if adapter is None:
            return await self._finish(
                record,
                Failed(
                    GenerationError(
                        code=ErrorCode.PROVIDER_UNAVAILABLE,
                        message=f"provider {record.provider!r} is not configured",
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
            return await self._drive(record, adapter, progress)
        finally:
            await progress.close()

    async def _job(
        self, record: GenerationRecord, progress: ProgressReporter
    ) -> tuple[GenerationRecord, Job]:
        """What the adapter is asked to make, the first frame fetched (and kept) if the request gave one.
        Raises ``FirstFrameUnusable`` when it cannot be had."""
        frame, fetched = await resolve_first_frame(
            record, self._media, self._fetch_image, self._settings.image_max_bytes
        )
        if fetched is not None:
            due_at = await self._retention.due_at(record, self._clock.now())
            try:
                saving = self._generations.save_first_frame(record, self.owner, *fetched, due_at)
                record = await self._owned(saving)
            except LeaseLost:
                await self._discard_media(record.id, [fetched[0]])
                raise
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
            generation_id=record.id,
            prompt=record.prompt,
            duration=record.duration,
            aspect_ratio=record.aspect_ratio,
            resolution=record.resolution,
            seed=record.seed,
            negative_prompt=record.negative_prompt,
            image=frame.data if frame else None,
            image_type=frame.content_type if frame else None,
            image_url=image_url,
            on_progress=progress.seen,
        )
        return record, job

    async def _drive(
        self, record: GenerationRecord, adapter: ProviderAdapter, progress: ProgressReporter
    ) -> RunResult:
        """The job, the task at the provider (submitted now unless an earlier attempt did), then polls until
        the generation ends. Losing the generation at any point stops it all."""
        try:
            try:
                record, job = await self._job(record, progress)
            except FirstFrameUnusable as exc:
                return await self._finish(record, Failed(exc.error))
            record, refused = await self._submitted(record, adapter, job, progress)
            if isinstance(refused, Refused):
                return refused
            if refused is not None:
                return await self._end(record, refused)
            task_id = record.provider_task_id
            assert task_id is not None
            while True:
                if (late := self._late(record)) is not None:
                    result = await self._finish(record, Failed(late))
                    if isinstance(result, Finished):
                        await self._cancel_task(adapter, task_id, record.id, reason="deadline")
                    return result
                progress.follow(record)
                step = await self._poll_step(record, adapter, task_id, job, progress)
                if not isinstance(step, _PollAgain):
                    return await self._end(record, step)
                record = step.record
                if step.pause:
                    contended = self.contended is not None and self.contended(record.provider)
                    pause = poll_pause(self._settings, record, self._clock.now(), contended=contended)
                    await self._clock.sleep(min(pause, self._until_client_deadline(record) or pause))
        except LeaseLost:
            log.info(
                "lease lost or generation canceled; stopping",
                extra={"generation_id": record.id, "account_id": record.account_id},
            )
            await self._cancel_if_canceled(record.id, adapter, record.provider_task_id)
            return Lost()

    async def _submitted(
        self, record: GenerationRecord, adapter: ProviderAdapter, job: Job, progress: ProgressReporter
    ) -> tuple[GenerationRecord, Failed | Refused | None]:
        """The generation with its provider task id: kept from an earlier attempt, or submitted now. Or, with
        the generation as it stands, why no task can be had: past a deadline, an earlier submit interrupted
        (whether it made a task is unknown), the provider refused it, or refused it for now for capacity
        (``Refused``: it waits again)."""
        if record.provider_task_id is not None:
            return record, None
        if (late := self._late(record)) is not None:
            return record, Failed(late)
        if record.submit_started_at is not None:
            return record, Failed(_interrupted_submit(adapter.name), TaskMade.UNKNOWN)
        record, error = await self._start_task(record, adapter, job)
        if error is not None:
            return record, error
        progress.started(record)
        await self._tell(record, TaskEvent.ACCEPTED)
        return record, None

    async def _judged(
        self, record: GenerationRecord, error: GenerationError | None, seconds: float | None = None
    ) -> None:
        """Tell the provider's health what its answer says (a failure only when it is the provider's)."""
        if self.on_health is None or (error is not None and not is_provider_failure(error)):
            return
        try:
            await self.on_health(record, error, seconds)
        except Exception:
            log.exception("could not note the provider's health", extra={"generation_id": record.id})

    async def _tell(self, record: GenerationRecord, event: TaskEvent) -> None:
        if self.on_task is None:
            return
        try:
            await self.on_task(record, event)
        except Exception:
            log.exception(
                "could not note the task's news", extra={"generation_id": record.id, "event": event}
            )

    async def _poll_step(
        self,
        record: GenerationRecord,
        adapter: ProviderAdapter,
        task_id: str,
        job: Job,
        progress: ProgressReporter,
    ) -> Outcome | _PollAgain:
        """One poll and what it leads to: the generation's outcome (its media fetched if the task succeeded),
        or another poll, with the provider's non-terminal state mirrored onto the generation."""
        try:
            state = await self._poll(record, adapter, task_id, job)
            if state is None:
                return _PollAgain(record, pause=False)
            await self._ensure_owned(record)
            if state.status in (TaskStatus.SUCCEEDED, TaskStatus.FAILED):
                await self._tell(record, TaskEvent.ENDED)
            if state.status is TaskStatus.SUCCEEDED and state.output is not None:
                await self._judged(record, None, self._task_seconds(record))
                with tracer.start_as_current_span("media.fetch"):
                    video, thumbnail = await self._fetch_media(state.output)
                return Completed(video, thumbnail)
            if state.status is TaskStatus.FAILED:
                error = state.error or NO_REASON
                await self._judged(record, error)
                return Failed(error, TaskMade.MADE)
            if state.status is TaskStatus.SUCCEEDED:
                return Failed(state.error or NO_REASON)
            record = await self._follow(record, state)
            progress.follow(record)
            if state.progress is not None:
                progress.seen(state.progress)
            return _PollAgain(record)
        except ProviderError as exc:
            await self._ensure_owned(record)
            if not exc.transient:
                return Failed(exc.error)
            # The deadline bounds how long a provider that does not answer is waited for.
            log.warning(
                "provider did not answer; polling again",
                extra={"generation_id": record.id, "account_id": record.account_id, "error": str(exc)},
            )
            return _PollAgain(record)

    async def _poll(
        self, record: GenerationRecord, adapter: ProviderAdapter, task_id: str, job: Job
    ) -> TaskState | None:
        """The task's state, or None if the client's deadline cut the poll short (a client's deadline is kept
        to the poll, not to the next one)."""
        deadline = asyncio.timeout(self._until_client_deadline(record))
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

    def _task_seconds(self, record: GenerationRecord) -> float | None:
        """Seconds since the provider accepted the generation's task."""
        if record.task_started_at is None:
            return None
        return max(0.0, (self._clock.now() - record.task_started_at).total_seconds())

    async def _start_task(
        self, record: GenerationRecord, adapter: ProviderAdapter, job: Job
    ) -> tuple[GenerationRecord, Failed | Refused | None]:
        """Submit once and save the task id. Returns the updated generation and, if no task was started,
        why. Cancellation (a graceful stop) waits for a submit in flight, so its task id is not lost."""
        plan = adapter.plan(job)
        if adapter.pays_per_submit:
            submitting = self._generations.mark_submitting(record, self.owner, self._clock.now(), plan)
            record = await self._owned(submitting)
        submission = asyncio.ensure_future(self._submit_and_save(record, adapter, job, plan))
        try:
            return await asyncio.shield(submission)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await submission
            raise

    async def _submit_and_save(
        self, record: GenerationRecord, adapter: ProviderAdapter, job: Job, plan: dict[str, Any]
    ) -> tuple[GenerationRecord, Failed | Refused | None]:
        try:
            with tracer.start_as_current_span("provider.submit", kind=SpanKind.CLIENT):
                annotate(provider=adapter.name)
                task_id = await adapter.submit(job)
        except CapacityRefused as exc:
            log.info(
                "provider refused the task for capacity; it waits again",
                extra={
                    "generation_id": record.id,
                    "provider": adapter.name,
                    "retry_after_s": exc.retry_after,
                },
            )
            now = self._clock.now()
            return record, Refused(
                record, exc.retry_after, attempts.ended(record, exc.error, self.prices, now)
            )
        except ProviderError as exc:
            log.warning(
                "provider refused or could not take the task",
                extra={"generation_id": record.id, "provider": adapter.name, "error": str(exc)},
            )
            await self._judged(record, exc.error)
            return record, Failed(exc.error, exc.task)
        try:
            return await self._save_task_id(record, task_id, plan), None
        except LeaseLost:
            # Canceled while it was being submitted: the task exists, so stop it too.
            await self._cancel_if_canceled(record.id, adapter, task_id)
            raise

    async def _save_task_id(
        self, record: GenerationRecord, task_id: str, plan: dict[str, Any] | None = None
    ) -> GenerationRecord:
        saving = self._generations.save_task_id(record, self.owner, task_id, self._clock.now(), plan)
        return await self._owned(saving)

    async def _owned(self, write: Awaitable[GenerationRecord | None]) -> GenerationRecord:
        """The generation as a compare-and-set under this actor's lease wrote it (a new version, like a
        transition); ``LeaseLost`` if it moved."""
        updated = await write
        if updated is None:
            raise LeaseLost
        return updated

    # -- deadline and cancel ------------------------------------------------------------------------------

    def _late(self, record: GenerationRecord) -> GenerationError | None:
        """Why the generation must stop now, if it is past a deadline: the client's own (``deadline_at``, from
        ``deadline_seconds`` or ``Cancel-After``), or the deployment's for every generation."""
        now = self._clock.now()
        client: datetime | None = record.deadline_at
        if client is not None and now >= client:
            return GenerationError(
                ErrorCode.DEADLINE_EXCEEDED,
                "the video was not finished by the deadline the request set",
                retriable=True,
            )
        # Time spent waiting in our own queue for capacity does not count.
        admitted: datetime = record.admitted_at or record.created_at
        seconds = self._settings.generation_deadline_seconds
        if now >= admitted + timedelta(seconds=seconds):
            return GenerationError(
                ErrorCode.PROVIDER_TIMEOUT,
                f"the provider did not finish the video within {seconds:g} s of its start",
                retriable=True,
            )
        return None

    def _until_client_deadline(self, record: GenerationRecord) -> float | None:
        """Seconds left before the client's deadline (0 once past); None without one."""
        client: datetime | None = record.deadline_at
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

    async def _ensure_owned(self, record: GenerationRecord) -> None:
        """A poll can take long and writes nothing while the provider's state is unchanged: check that the
        generation is still ours and unmoved (not canceled, not taken over) before acting on its result, so a
        canceled generation stops being polled and stores no media."""
        if not await self._generations.still_owned(record, self.owner):
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

    async def _follow(self, record: GenerationRecord, state: TaskState) -> GenerationRecord:
        """Mirror the provider's non-terminal state: its queue → ``queued`` (the provider's), running →
        ``processing``; each change is published (best effort: a client streaming the generation sees it)."""
        target = Status.QUEUED if state.status is TaskStatus.QUEUED else Status.PROCESSING
        if record.status is target:
            return record
        now = self._clock.now()
        updated = await self._generations.follow_provider(record, target, now=now, owner=self.owner)
        if updated is None:
            raise LeaseLost
        await publish_status(self._sink, updated, now)
        return updated

    async def _end(self, record: GenerationRecord, outcome: Outcome) -> RunResult:
        """The generation's end at this provider: it moves on to its next candidate where its route allows
        (``Failover``: nothing is written here), else it finishes (``_finish``)."""
        if isinstance(outcome, Failed) and outcome.at_provider is not None:
            route = record.route or {}
            candidates = [c["provider"] for c in route.get("candidates") or ()]
            allowed = may_fall_back(
                outcome.error,
                outcome.at_provider,
                fallback_on_failure=bool(route.get("fallback_on_failure", False)),
            )
            if allowed and later(candidates, record.provider):
                attempt = attempts.ended(record, outcome.error, self.prices, self._clock.now())
                log.info(
                    "the attempt failed; the generation moves on to its next candidate",
                    extra={
                        "generation_id": record.id,
                        "provider": record.provider,
                        "error": outcome.error.code,
                    },
                )
                return Failover(record, outcome.error, attempt)
        return await self._finish(record, outcome)

    async def _finish(self, record: GenerationRecord, outcome: Outcome) -> RunResult:
        """End the generation as ``outcome`` calls for (``videogen_common.endings``), its media stored first
        if it completed."""
        result: StoredVideo | GenerationError
        stored: StoredVideo | None = None
        if isinstance(outcome, Completed):
            with tracer.start_as_current_span("media.store"):
                annotate(video_bytes=len(outcome.video))
                stored = result = await self._store_media(record, outcome.video, outcome.thumbnail)
            if record.status is Status.QUEUED:
                try:
                    record = await self._follow(record, TaskState(TaskStatus.RUNNING))
                except LeaseLost:
                    await self._discard_media(record.id, stored.keys)
                    raise
        else:
            result = outcome.error
        now = self._clock.now()
        final = await end_generation(
            self._store,
            record,
            result,
            prices=self.prices,
            now=now,
            owner=self.owner,
            announce=lambda ended: publish_status(self._sink, ended, now),
        )
        if final is None:
            log.info(
                "generation moved by someone else before it finished", extra={"generation_id": record.id}
            )
            if stored is not None:
                await self._discard_media(record.id, stored.keys)
            return Lost()
        log.info(
            "generation finished",
            extra={"generation_id": record.id, "account_id": record.account_id, "status": final.status.value},
        )
        return Finished(final)

    async def _discard_media(self, generation_id: str, keys: list[str]) -> None:
        """Objects this actor stored for a generation it then lost: deleted if the generation was canceled or
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

    async def _store_media(
        self, record: GenerationRecord, video: bytes, thumbnail: bytes | None
    ) -> StoredVideo:
        """The media stored, and signed for as long as the generation's retention (when it is due to be
        deleted)."""
        settings = self._settings
        generation_id = record.id
        now = self._clock.now()
        retention = await self._retention.retention(record)
        signing_key = settings.media_signing_key.get_secret_value()
        video_key, thumb_key = f"{generation_id}/video.mp4", f"{generation_id}/thumbnail.jpg"
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
