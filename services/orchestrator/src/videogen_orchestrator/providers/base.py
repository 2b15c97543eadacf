"""What every provider adapter offers the actor: submit once, then poll until a terminal state; say what it
asks the provider for, cancel a task, close its connections. What an adapter can do beyond submit and poll is
declared (``can_cancel``, ``pays_per_submit``), not discovered: ``AdapterDefaults`` gives an adapter that
declares nothing the safe defaults."""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from videogen_common.failures import ErrorCode, GenerationError
from videogen_common.routing import TaskMade


@dataclass(frozen=True, slots=True)
class Job:
    generation_id: str
    prompt: str
    duration: int
    # What the request asked of the video beyond the spec's three fields; None: not asked (the provider's
    # default). The api has checked them against the provider's capabilities.
    aspect_ratio: str | None = None
    resolution: str | None = None
    seed: int | None = None
    negative_prompt: str | None = None
    # The model the generation asks of its provider (None: the adapter's own, the deployment's *_MODEL), and
    # the durations the catalogue says it makes (None: the adapter's table of its models).
    model: str | None = None
    durations: tuple[int, ...] | None = None
    # The first frame, when the request gave one: its bytes and type, and a signed link to our copy of it
    # (for providers that fetch it themselves).
    image: bytes | None = field(default=None, repr=False)
    image_type: str | None = None
    image_url: str | None = None
    # Where the provider is to call back about the task (an adapter that ``calls_back``, with provider
    # callbacks on); None: it is not told, and the task is polled.
    callback_url: str | None = None
    # Told how far the task is (0-100) by an adapter that learns it while a poll runs (the mock); adapters
    # that learn it from the poll's answer return it in ``TaskState.progress`` instead.
    on_progress: Callable[[int], None] | None = field(default=None, compare=False)

    def report(self, progress: int) -> None:
        if self.on_progress is not None:
            self.on_progress(progress)


class TaskStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"


class ProviderError(Exception):
    """An adapter call that did not get an answer it can map to a task state. ``transient``: the call may
    work later (retries exhausted on 429/5xx/connection errors), so a poll is tried again at the next tick,
    until the generation's deadline; anything else ends the generation with ``error``. ``task``, for a
    submit: whether it is proven that no task was made (``TaskMade.NONE``: never connected, or the provider
    answered a refusal), else unknown (routing moves a generation on only when none was made)."""

    def __init__(
        self, error: GenerationError, *, transient: bool = False, task: TaskMade = TaskMade.UNKNOWN
    ) -> None:
        super().__init__(error.message)
        self.error = error
        self.transient = transient
        self.task = task


class CapacityRefused(ProviderError):
    """The provider refused to start the task now because the key is at its concurrency or rate limit (429 at
    submit): no task was made, so the generation waits for capacity again instead of failing, and admission
    lowers the key's limit. ``retry_after``: the provider's Retry-After, in seconds, if it gave one."""

    def __init__(self, message: str, retry_after: float | None) -> None:
        error = GenerationError(ErrorCode.PROVIDER_UNAVAILABLE, message, "http_429", retriable=True)
        super().__init__(error, transient=True, task=TaskMade.NONE)
        self.retry_after = retry_after


@dataclass(frozen=True, slots=True)
class Output:
    """A finished task's media: bytes (the mock renders locally) or URLs the orchestrator copies into its own
    storage (real providers; their links expire within hours). Exactly one of ``video`` / ``video_url``; the
    thumbnail is optional either way."""

    video: bytes | None = None
    thumbnail: bytes | None = None
    video_url: str | None = None
    thumbnail_url: str | None = None

    def __post_init__(self) -> None:
        if (self.video is None) == (self.video_url is None):
            raise ValueError("an Output carries either the video's bytes or its URL")


@dataclass(frozen=True, slots=True)
class TaskState:
    status: TaskStatus
    output: Output | None = None
    error: GenerationError | None = None
    details: dict[str, Any] = field(default_factory=dict)
    progress: int | None = None  # 0-100, when the provider says how far it is


class ProviderAdapter(Protocol):
    """A provider's API as the actor drives it. Its operational features are declared, and the actor reads
    them and nothing else (``videogen_common.capabilities`` is another matter: what the provider can make)."""

    name: str
    # ``cancel`` stops a task at the provider; when False the actor never calls it.
    can_cancel: bool
    # A submit may be charged for: the generation is marked before it, and a submit interrupted by a crash
    # (no task id saved) is never made again. False for a free provider (the mock).
    pays_per_submit: bool
    # The least time between two reads of one task that the provider asks for (Runway: 5 s); the actor's
    # pause between polls is never shorter (0: the deployment's poll interval alone decides).
    poll_interval_seconds: float
    # The provider calls back when the task changes (Luma's callback_url, fal's webhook_url): with provider
    # callbacks on, the submit names ``Job.callback_url`` and the task is polled only as a safety net.
    calls_back: bool

    async def submit(self, job: Job) -> str:
        """Start the provider's task and return its id. Called at most once per generation: the id is saved
        before the first poll, so a restarted orchestrator resumes polling instead of paying twice. Raises
        ``ProviderError`` when the task could not be started (or it cannot tell)."""
        ...

    async def poll(self, task_id: str, job: Job) -> TaskState: ...

    def plan(self, job: Job) -> dict[str, Any]:
        """What ``submit`` asks the provider for (model, duration it can make, ...), without the prompt;
        recorded on the generation beside the task id ({}: nothing to record)."""
        ...

    async def cancel(self, task_id: str) -> None:
        """Ask the provider to stop (or drop) the task; only called when ``can_cancel``. Best effort: errors
        are the caller's to ignore."""
        ...

    async def close(self) -> None:
        """Release the adapter's connections (on shutdown)."""
        ...


class AdapterDefaults:
    """What an adapter has unless it says otherwise: no cancel, a submit that may be charged for (so never
    repeated after a crash), no poll cadence of its own, no callbacks, no plan to record, nothing to close."""

    can_cancel = False
    pays_per_submit = True
    poll_interval_seconds = 0.0
    calls_back = False

    def plan(self, job: Job) -> dict[str, Any]:
        return {}

    async def cancel(self, task_id: str) -> None:
        raise NotImplementedError(f"{type(self).__name__} declares that it cannot cancel a task")

    async def close(self) -> None:
        return None


def data_uri(job: Job) -> str | None:
    """The first frame as a ``data:`` URI (Runway and fal take one), or None without one."""
    if job.image is None or job.image_type is None:
        return None
    return f"data:{job.image_type};base64,{base64.b64encode(job.image).decode()}"


def adapter_for(
    providers: Mapping[str, ProviderAdapter], provider: str, pool: str | None
) -> ProviderAdapter | None:
    """The adapter of the key a generation runs on (its ``pool``), else of its ``provider``'s only or first
    key (a generation from before pools were kept)."""
    if pool is not None and pool in providers:
        return providers[pool]
    if provider in providers:
        return providers[provider]
    prefix = f"{provider}/"
    return next((a for name, a in sorted(providers.items()) if name.startswith(prefix)), None)
