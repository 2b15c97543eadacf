"""One actor per in-flight generation: submit to the provider once, read its task until it ends
(``task_watch`` says when: polls at the provider's cadence, or its callbacks), copy the media into our
storage, and move the generation to its terminal state with compare-and-set writes.

Paying twice is worse than failing once. The provider's task id is saved before the first poll, so a
restarted or different instance resumes polling instead of submitting again; and before a submit that may be
charged for, the generation is marked ``submit_started_at``: a next owner that finds the mark without an id
cannot know whether a task was made, and fails the generation (``provider_unavailable``, retriable) rather
than submit again. A graceful stop lets a submit in flight finish and save its id first.

Past its deadline (``deadlines``) a generation fails; a client's cancel (the api ends it failed/canceled) is
noticed at the next ownership check; either way its task is canceled where the provider allows it.

``run`` answers with what became of the generation (``outcomes``): ``Finished`` (this actor wrote its
terminal state), ``Lost`` (someone else moved it), ``Refused`` or ``Failover`` (its runner moves it on).
Inside, each ending is an ``Outcome`` (``Completed`` or ``Failed``): a failed attempt moves on where
``rerouting.may_move_on`` says it may, else ``_finish`` ends the generation the one way
(``videogen_common.endings``), the video first copied into our storage (``media_copy``). Every pause is
taken through the injected clock."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from opentelemetry.trace import SpanKind

from videogen_common import attempts
from videogen_common.clock import Clock
from videogen_common.domain import Status
from videogen_common.endings import end_generation
from videogen_common.failures import GenerationError
from videogen_common.logs import log_context
from videogen_common.media import MediaStore
from videogen_common.records.generation import GenerationRecord, StoredVideo
from videogen_common.repositories.generations import GenerationRepository
from videogen_common.routing import TaskMade, is_provider_failure
from videogen_common.store import Store
from videogen_common.tracing import annotate, tracer
from videogen_orchestrator.deadlines import (
    cancel_if_canceled,
    cancel_task,
    late,
    poll_within,
    task_seconds,
    until_client_deadline,
)
from videogen_orchestrator.first_frame import (
    FirstFrameUnusable,
    ImageFetcher,
    guarded_fetcher,
    job_for,
    resolve_first_frame,
)
from videogen_orchestrator.media_copy import MediaCopy
from videogen_orchestrator.outcomes import (
    NO_REASON,
    Completed,
    Failed,
    Failover,
    Finished,
    FinishedObserver,
    HealthObserver,
    LeaseLost,
    Lost,
    Outcome,
    PollAgain,
    Refused,
    RunResult,
    TaskEvent,
    TaskObserver,
    interrupted_submit,
    not_configured,
    told,
)
from videogen_orchestrator.progress import ProgressReporter
from videogen_orchestrator.providers.base import (
    CapacityRefused,
    Job,
    ProviderAdapter,
    ProviderError,
    TaskStatus,
    adapter_for,
)
from videogen_orchestrator.providers.registry import retry_policy
from videogen_orchestrator.rerouting import may_move_on
from videogen_orchestrator.settings import OrchestratorSettings
from videogen_orchestrator.status_events import EventSink, mirror, publish_status
from videogen_orchestrator.task_watch import TaskWatch

log = logging.getLogger(__name__)


class GenerationActor:
    """Drives generations, each in its own ``run``. ``on_health``: told what a provider's answers say of its
    health (the breakers); ``contended``: whether work waits for a provider's capacity (admission's view: its
    tasks are polled sooner); ``on_finished``: told of every generation it finishes (the metrics)."""

    def __init__(
        self,
        *,
        settings: OrchestratorSettings,
        store: Store,
        media: MediaStore,
        media_copy: MediaCopy,
        providers: Mapping[str, ProviderAdapter],
        sink: EventSink,
        clock: Clock,
        image_fetcher: ImageFetcher | None = None,
        on_finished: FinishedObserver | None = None,
        on_health: HealthObserver | None = None,
        contended: Callable[[str], bool] | None = None,
        watch: TaskWatch | None = None,
    ) -> None:
        self._settings = settings
        self._prices = settings.price_table
        self._store = store
        self._generations = GenerationRepository(store)
        self._providers = providers
        self._sink = sink
        self._clock = clock
        # The first frame read (or fetched, then kept), and the finished video copied, into media storage.
        self._media = media
        self._fetch_image = image_fetcher or guarded_fetcher(
            settings.image_fetch_networks, settings.image_fetch_timeout_seconds, retry_policy(settings)
        )
        self._copy = media_copy
        # Its peers: the metrics, the breakers; its waits between reads of a task (``task_watch``: admission's
        # view of the providers' capacity, the providers' callbacks).
        self._on_finished = on_finished
        self._on_health = on_health
        self._watch = watch or TaskWatch(settings, clock, contended)
        # Each generation's runner's ``on_task``, while it runs.
        self._on_task: dict[str, TaskObserver] = {}

    @property
    def owner(self) -> str:
        """The lease owner this actor writes as: this orchestrator instance."""
        return self._settings.orchestrator_instance

    async def run(self, record: GenerationRecord, on_task: TaskObserver | None = None) -> RunResult:
        """Drive a leased generation to a terminal state. Every line logged meanwhile carries the generation's
        ids (its account, and the id of the request that created it). ``on_task``: told when its task is
        accepted at the provider, and when it ends there (its runner's slots)."""
        with log_context(generation_id=record.id, account_id=record.account_id, request_id=record.trace_id):
            if on_task is not None:
                self._on_task[record.id] = on_task
            self._watch.watch(record.id)  # before the submit: a callback may come before its answer
            try:
                result = await self._run(record)
            finally:
                self._on_task.pop(record.id, None)
                self._watch.unwatch(record.id)
        if isinstance(result, Finished) and self._on_finished is not None:
            self._on_finished(result.record)
        return result

    async def _run(self, record: GenerationRecord) -> RunResult:
        adapter = adapter_for(self._providers, record.provider, record.provider_pool)
        if adapter is None:
            return await self._finish(record, Failed(not_configured(record.provider)))
        every, notice_every = self._settings.progress_write_seconds, self._settings.progress_webhook_seconds
        progress = ProgressReporter(
            store=self._store,
            sink=self._sink,
            clock=self._clock,
            owner=self.owner,
            every=every,
            notice_every=notice_every,
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
            due_at = await self._copy.due_at(record, self._clock.now())
            try:
                saving = self._generations.save_first_frame(record, self.owner, *fetched, due_at)
                record = await self._owned(saving)
            except LeaseLost:
                await self._copy.discard(record.id, [fetched[0]])
                raise
        job = job_for(
            record, frame, settings=self._settings, now=self._clock.now(), on_progress=progress.seen
        )
        return record, job

    async def _drive(
        self, record: GenerationRecord, adapter: ProviderAdapter, progress: ProgressReporter
    ) -> RunResult:
        """The job, the task at the provider (submitted now unless an earlier attempt did), then reads of it
        until the generation ends (``task_watch``: polls, or waits for the provider's callback; a task
        submitted now to a provider that calls back is first waited for). Losing the generation at any point
        stops it all."""
        try:
            try:
                record, job = await self._job(record, progress)
            except FirstFrameUnusable as exc:
                return await self._finish(record, Failed(exc.error))
            job = self._watch.with_callback(job, record, adapter)
            wait = record.provider_task_id is None and self._watch.called_back(adapter)
            record, refused = await self._submitted(record, adapter, job, progress)
            if isinstance(refused, Refused):
                return refused
            if refused is not None:
                return await self._end(record, refused)
            task_id = record.provider_task_id
            assert task_id is not None
            unanswered = False
            while True:
                if wait:
                    await self._watch.pause(record, adapter, unanswered=unanswered)
                if (overdue := late(self._settings, record, self._clock.now())) is not None:
                    result = await self._finish(record, Failed(overdue))
                    if isinstance(result, Finished):
                        await cancel_task(adapter, task_id, record.id, reason="deadline")
                    return result
                progress.follow(record)
                step = await self._poll_step(record, adapter, task_id, job, progress)
                if not isinstance(step, PollAgain):
                    return await self._end(record, step)
                record, wait, unanswered = step.record, step.pause, step.unanswered
        except LeaseLost:
            log.info(
                "lease lost or generation canceled; stopping",
                extra={"generation_id": record.id, "account_id": record.account_id},
            )
            await cancel_if_canceled(self._generations, adapter, record.provider_task_id, record.id)
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
        if (overdue := late(self._settings, record, self._clock.now())) is not None:
            return record, Failed(overdue)
        if record.submit_started_at is not None:
            return record, Failed(interrupted_submit(adapter.name), TaskMade.UNKNOWN)
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
        if self._on_health is not None and (error is None or is_provider_failure(error)):
            await told(self._on_health(record, error, seconds), "the provider's health", record)

    async def _tell(self, record: GenerationRecord, event: TaskEvent) -> None:
        """Tell the generation's runner of its task's news."""
        on_task = self._on_task.get(record.id)
        if on_task is not None:
            await told(on_task(record, event), f"the task's news ({event})", record)

    async def _poll_step(
        self,
        record: GenerationRecord,
        adapter: ProviderAdapter,
        task_id: str,
        job: Job,
        progress: ProgressReporter,
    ) -> Outcome | PollAgain:
        """One poll and what it leads to: the generation's outcome (its media fetched if the task succeeded),
        or another poll, with the provider's non-terminal state mirrored onto the generation."""
        try:
            left = until_client_deadline(record, self._clock.now())
            state = await poll_within(left, adapter, task_id, job)
            if state is None:
                return PollAgain(record, pause=False)
            if state.status in (TaskStatus.SUCCEEDED, TaskStatus.FAILED):  # its slot is free, whoever owns it
                await self._tell(record, TaskEvent.ENDED)
            await self._ensure_owned(record)
            if state.status is TaskStatus.SUCCEEDED and state.output is not None:
                await self._judged(record, None, task_seconds(record, self._clock.now()))
                with tracer.start_as_current_span("media.fetch"):
                    video, thumbnail = await self._copy.fetch(state.output)
                return Completed(video, thumbnail)
            if state.status is TaskStatus.FAILED:
                error = state.error or NO_REASON
                await self._judged(record, error)
                return Failed(error, TaskMade.MADE)
            if state.status is TaskStatus.SUCCEEDED:
                return Failed(state.error or NO_REASON)
            queued = state.status is TaskStatus.QUEUED
            record = await self._follow(record, Status.QUEUED if queued else Status.PROCESSING)
            progress.follow(record)
            if state.progress is not None:
                progress.seen(state.progress)
            return PollAgain(record)
        except ProviderError as exc:
            await self._ensure_owned(record)
            if not exc.transient:
                return Failed(exc.error)
            # The deadline bounds how long a provider that does not answer is waited for.
            log.warning(
                "provider did not answer; polling again",
                extra={"generation_id": record.id, "account_id": record.account_id, "error": str(exc)},
            )
            return PollAgain(record, unanswered=True)

    # -- submitting ---------------------------------------------------------------------------------------

    async def _start_task(
        self, record: GenerationRecord, adapter: ProviderAdapter, job: Job
    ) -> tuple[GenerationRecord, Failed | Refused | None]:
        """Submit once and save the task id. Returns the updated generation and, if no task was started,
        why. Cancellation (a graceful stop) waits for a submit in flight, so its task id is not lost."""
        plan = adapter.plan(job)
        if adapter.pays_per_submit:
            submitting = self._generations.mark_submitting(record, self.owner, self._clock.now(), plan)
            record = await self._owned(submitting)
        await self._tell(record, TaskEvent.SUBMITTING)
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
                record, exc.retry_after, attempts.ended(record, exc.error, self._prices, now)
            )
        except ProviderError as exc:
            log.warning(
                "provider refused or could not take the task",
                extra={"generation_id": record.id, "provider": adapter.name, "error": str(exc)},
            )
            await self._judged(record, exc.error)
            return record, Failed(exc.error, exc.task)
        try:
            saving = self._generations.save_task_id(record, self.owner, task_id, self._clock.now(), plan)
            return await self._owned(saving), None
        except LeaseLost:
            # Canceled while it was being submitted: the task exists, so stop it too.
            await cancel_if_canceled(self._generations, adapter, task_id, record.id)
            raise

    async def _owned(self, write: Awaitable[GenerationRecord | None]) -> GenerationRecord:
        """The generation as a compare-and-set under this actor's lease wrote it (a new version, like a
        transition); ``LeaseLost`` if it moved."""
        updated = await write
        if updated is None:
            raise LeaseLost
        return updated

    async def _ensure_owned(self, record: GenerationRecord) -> None:
        """A poll can take long and writes nothing while the provider's state is unchanged: check that the
        generation is still ours and unmoved (not canceled, not taken over) before acting on its result, so a
        canceled generation stops being polled and stores no media."""
        if not await self._generations.still_owned(record, self.owner):
            raise LeaseLost

    async def _follow(self, record: GenerationRecord, status: Status) -> GenerationRecord:
        now = self._clock.now()
        return await mirror(self._generations, self._sink, record, status, now=now, owner=self.owner)

    async def _end(self, record: GenerationRecord, outcome: Outcome) -> RunResult:
        """The generation's end at this provider: it moves on to its next candidate where rerouting says it
        may (``Failover``: nothing is written here), else it finishes (``_finish``)."""
        if isinstance(outcome, Failed) and may_move_on(record, outcome.error, outcome.at_provider):
            attempt = attempts.ended(record, outcome.error, self._prices, self._clock.now())
            log.info(
                "the attempt failed; the generation moves on to its next candidate",
                extra={"generation_id": record.id, "provider": record.provider, "error": outcome.error.code},
            )
            return Failover(record, outcome.error, attempt)
        return await self._finish(record, outcome)

    async def _finish(self, record: GenerationRecord, outcome: Outcome) -> RunResult:
        """End the generation as ``outcome`` calls for (``videogen_common.endings``), its media stored first
        if it completed."""
        result: StoredVideo | GenerationError
        stored: StoredVideo | None = None
        if isinstance(outcome, Completed):
            # The copy is fenced (``media_copy``): checked against the lease first (the fetch can take
            # long), stored under keys of this lease's own, and deleted again if the lease is lost after.
            await self._ensure_owned(record)
            with tracer.start_as_current_span("media.store"):
                annotate(video_bytes=len(outcome.video))
                stored = result = await self._copy.store(record, outcome.video, outcome.thumbnail)
            if record.status is Status.QUEUED:
                try:
                    record = await self._follow(record, Status.PROCESSING)
                except LeaseLost:
                    await self._copy.discard_copy(record.id, stored)
                    raise
        else:
            result = outcome.error
        now = self._clock.now()
        final = await end_generation(
            self._store,
            record,
            result,
            prices=self._prices,
            now=now,
            owner=self.owner,
            announce=lambda ended: publish_status(self._sink, ended, now),
            sink=self._sink,
        )
        if final is None:
            log.info(
                "generation moved by someone else before it finished", extra={"generation_id": record.id}
            )
            if stored is not None:
                await self._copy.discard_copy(record.id, stored)
            return Lost()
        log.info(
            "generation finished",
            extra={"generation_id": record.id, "account_id": record.account_id, "status": final.status.value},
        )
        return Finished(final)
