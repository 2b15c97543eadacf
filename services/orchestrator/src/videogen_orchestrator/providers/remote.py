"""What the real adapters share: the submit / poll / cancel skeleton (an adapter supplies its paths, bodies
and status values), and their API calls turned into the error taxonomy. A refused request becomes a
``GenerationError``; a provider that cannot be reached becomes a ``ProviderError`` (transient for reads, which
the actor retries at its next tick, final for a submit, which is never blindly repeated)."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from videogen_common.capabilities import DEFAULT_ASPECT_RATIO, Capabilities, nearest_duration
from videogen_common.failures import ErrorCode, GenerationError
from videogen_common.routing import TaskMade
from videogen_orchestrator.providers.base import (
    AdapterDefaults,
    CapacityRefused,
    Job,
    ProviderError,
    TaskState,
    TaskStatus,
)
from videogen_orchestrator.providers.http import (
    TRANSIENT_STATUSES,
    AmbiguousRequest,
    ProviderHTTP,
    Reply,
    TransientFailure,
    parse_retry_after,
)

# A submit answered 429 is not retried here: admission puts the generation back in line and lowers the key's
# limit, so the provider's capacity, not a retry loop, decides when it goes again.
_SUBMIT_RETRY_STATUSES = TRANSIENT_STATUSES - {429}

# Words a provider's refusal uses when content moderation (not a malformed request) refused it.
_MODERATION = re.compile(r"moderat|content.?polic|safety|nsfw|inappropriate|not allowed", re.IGNORECASE)


def message_of(body: Any) -> str:
    """The human-readable part of a provider's error body: ``{"error": ...}`` (Runway), ``{"detail": ...}``
    (Luma, fal: a string or a list of ``{"msg": ...}``), or the text itself."""
    if isinstance(body, dict):
        for key in ("error", "detail", "message", "failure", "failure_reason"):
            value = body.get(key)
            if isinstance(value, str) and value:
                return value
            if isinstance(value, list) and value:
                return "; ".join(message_of(item) for item in value)
        msg = body.get("msg")
        if isinstance(msg, str):
            return msg
    if isinstance(body, str) and body:
        return body[:500]
    return "no reason given"


def looks_like_moderation(text: str) -> bool:
    return bool(_MODERATION.search(text))


class UnsureSubmit(ProviderError):
    """A submit that failed after it may have reached the provider (never repeated): whether a task was
    made is unknown. ``headers``: the failed answer's, if there was one (empty after a reset or a timeout);
    an adapter whose provider names the request it made there can look it up instead of giving up."""

    def __init__(self, error: GenerationError, headers: Mapping[str, str]) -> None:
        super().__init__(error, task=TaskMade.UNKNOWN)
        self.headers = headers


def planned(job: Job, durations: Collection[int], **asked: Any) -> dict[str, Any]:
    """A plan: what the adapter asks for (``asked``), the duration the provider makes nearest the requested
    one, and the requested one."""
    return {
        **asked,
        "duration_s": nearest_duration(job.duration, durations),
        "requested_duration_s": job.duration,
    }


def failed(
    details: dict[str, Any],
    message: str,
    code: str = ErrorCode.PROVIDER_ERROR,
    provider_code: str | None = None,
) -> TaskState:
    """A task that ended without a usable output (a provider error unless ``code`` says otherwise)."""
    return TaskState(TaskStatus.FAILED, error=GenerationError(code, message, provider_code), details=details)


@dataclass(frozen=True)
class TaskStatuses:
    """How a provider's status answer says where its task is: the field that holds the task's status, the
    values of it that mean "waiting in the provider's queue" and "running" (any other: ended, or unknown),
    and the answer's other fields recorded with it (``TaskState.details``)."""

    queued: Collection[str] = ()
    running: Collection[str] = ()
    details: tuple[str, ...] = ()
    field: str = "status"


class RemoteAdapter(AdapterDefaults):
    """Base of the adapters that call a provider's HTTP API through ``ProviderHTTP``. A submit is paid for
    (``pays_per_submit``, the default); an adapter whose provider can stop a task declares ``can_cancel``."""

    name: str
    # What the provider can make (``videogen_common.capabilities``, which the api checks requests against).
    capabilities: Capabilities
    # Statuses the provider documents as "nothing was done, try again": a submit answered with one of these
    # is repeated (within the retry policy), and so is one ``submit_never_made`` says never reached the
    # provider. Any other failure of a submit is never repeated.
    submit_safe_statuses: Collection[int] = (429,)
    # ``Authorization: <auth_scheme> <API key>``.
    auth_scheme = "Bearer"
    # How the status answer says where the task is.
    statuses: TaskStatuses = TaskStatuses()

    def __init__(self, http: ProviderHTTP, *, poll_interval_seconds: float | None = None) -> None:
        self.http = http
        if poll_interval_seconds is not None:
            self.poll_interval_seconds = poll_interval_seconds

    def submit_never_made(self, status: int, headers: Mapping[str, str], raw: bytes | None) -> bool:
        """Whether an error answer to a submit (beyond ``submit_safe_statuses``) proves that it never reached
        the provider, so it may be sent again. None does by default."""
        return False

    @classmethod
    def headers(cls, api_key: str) -> dict[str, str]:
        """The headers every call to the provider carries."""
        return {"Authorization": f"{cls.auth_scheme} {api_key}"}

    async def close(self) -> None:
        await self.http.close()

    async def poll(self, task_id: str, job: Job) -> TaskState:
        reply = await self.send_read("GET", self.status_path(task_id))
        if not reply.ok:
            return TaskState(TaskStatus.FAILED, error=self.refusal(reply))
        task: dict[str, Any] = reply.body if isinstance(reply.body, dict) else {}
        status = task.get(self.statuses.field)
        details = {"provider_status": status, **{name: task.get(name) for name in self.statuses.details}}
        if status in self.statuses.queued:
            return TaskState(TaskStatus.QUEUED, details=details)
        if status in self.statuses.running:
            return TaskState(TaskStatus.RUNNING, details=details, progress=self.running_progress(task))
        return await self.final_state(task_id, status, task, details)

    def running_progress(self, task: dict[str, Any]) -> int | None:
        """How far a running task is, 0-100, from its status answer; None when the answer does not say.
        By default the answer's ``progress`` as a fraction from 0 to 1 (Runway's)."""
        return _percent(task.get("progress"))

    def status_path(self, task_id: str) -> str:
        """Where the task's status is read."""
        raise NotImplementedError

    async def final_state(
        self, task_id: str, status: Any, task: dict[str, Any], details: dict[str, Any]
    ) -> TaskState:
        """The state of a task whose ``status`` (read from ``task``, the status answer) is neither queued nor
        running: finished, or one the adapter does not know."""
        raise NotImplementedError

    async def submit_task(self, path: str, body: Any, *, id_field: str, missing: str) -> str:
        """Submit, and return the task id the answer gives in ``id_field`` (``missing``: the error if not)."""
        reply = await self.send_submit(path, body)
        task_id = reply.body.get(id_field) if isinstance(reply.body, dict) else None
        if not isinstance(task_id, str) or not task_id:
            raise ProviderError(GenerationError(ErrorCode.PROVIDER_ERROR, missing))
        return task_id

    async def send_cancel(self, method: str, path: str, *, finished: Collection[int] = (404,)) -> None:
        """A cancel call; an error answer in ``finished`` means there is no task left to stop."""
        reply = await self.send_read(method, path)
        if not reply.ok and reply.status not in finished:
            raise ProviderError(self.refusal(reply))

    async def send_submit(self, path: str, body: Any) -> Reply:
        """A task-creation call: a 429 raises ``CapacityRefused`` at once; other transient answers are retried
        only where they prove no task was made (``submit_safe_statuses``)."""
        try:
            reply = await self.http.request(
                "POST",
                path,
                json=body,
                idempotent=False,
                safe_statuses=self.submit_safe_statuses,
                never_made=self.submit_never_made,
                retry_statuses=_SUBMIT_RETRY_STATUSES,
            )
        except TransientFailure as exc:
            # Never connected, or only answers that prove nothing was made: no task.
            raise _unavailable(
                f"{self.name} did not take the task ({exc})", exc.status, task=TaskMade.NONE
            ) from exc
        except AmbiguousRequest as exc:
            unsure = _unavailable(
                f"{self.name} may or may not have started the task ({exc}); it is not submitted again, "
                "so it is never paid for twice",
                exc.status,
            )
            raise UnsureSubmit(unsure.error, exc.headers) from exc
        if reply.status == 429:
            raise CapacityRefused(
                f"{self.name} refused the task for now (429): {message_of(reply.body)}",
                parse_retry_after(reply.headers.get("Retry-After")),
            )
        if not reply.ok:
            raise ProviderError(self.refusal(reply), task=TaskMade.NONE)  # refused: no task was made
        return reply

    async def send_read(self, method: str, path: str, **kwargs: Any) -> Reply:
        """An idempotent call (status, result, cancel): every transient failure is retried; when the tries
        are spent it raises a transient ``ProviderError``."""
        try:
            return await self.http.request(method, path, **kwargs)
        except TransientFailure as exc:
            raise _unavailable(f"{self.name} did not answer ({exc})", exc.status, transient=True) from exc

    def refusal(self, reply: Reply) -> GenerationError:
        """A final error answer (4xx other than 429, or a 5xx the call does not retry)."""
        message = message_of(reply.body)
        code = f"http_{reply.status}"
        if reply.status in (401, 403):
            return GenerationError(
                ErrorCode.PROVIDER_UNAVAILABLE, f"{self.name} refused our credentials: {message}", code
            )
        if reply.status == 402:
            return GenerationError(
                ErrorCode.PROVIDER_UNAVAILABLE, f"{self.name} refused the task for billing: {message}", code
            )
        if reply.status == 404:
            return GenerationError(ErrorCode.PROVIDER_ERROR, f"{self.name} no longer knows the task", code)
        if 400 <= reply.status < 500:
            if looks_like_moderation(message):
                return GenerationError(ErrorCode.CONTENT_POLICY, f"{self.name}: {message}", code)
            return GenerationError(
                ErrorCode.PROVIDER_REJECTED, f"{self.name} refused the request: {message}", code
            )
        return GenerationError(
            ErrorCode.PROVIDER_ERROR, f"{self.name} failed: {message}", code, retriable=True
        )


class ModelResolutionAdapter(RemoteAdapter):
    """An adapter asking its provider for a model's video at the aspect ratio and resolution the request asks
    for (else 16:9, and the deployment's resolution), in one of the fixed durations the provider makes, all
    as its ``capabilities`` declare them."""

    def __init__(
        self, http: ProviderHTTP, *, model: str, resolution: str, poll_interval_seconds: float | None = None
    ) -> None:
        super().__init__(http, poll_interval_seconds=poll_interval_seconds)
        self.model = model
        self.resolution = resolution

    def plan(self, job: Job) -> dict[str, Any]:
        return planned(
            job,
            job.durations or self.capabilities.durations,
            model=job.model or self.model,
            resolution=job.resolution or self.resolution,
            aspect_ratio=self.capabilities.native_ratio(job.aspect_ratio or DEFAULT_ASPECT_RATIO),
        )


def _unavailable(
    message: str, status: int | None, *, transient: bool = False, task: TaskMade = TaskMade.UNKNOWN
) -> ProviderError:
    """The provider could not be reached (or kept answering ``status``): worth trying again later."""
    provider_code = f"http_{status}" if status is not None else None
    error = GenerationError(ErrorCode.PROVIDER_UNAVAILABLE, message, provider_code, retriable=True)
    return ProviderError(error, transient=transient, task=task)


def _percent(value: Any) -> int | None:
    """A provider's progress as 0-100: a fraction from 0 to 1 (Runway's ``progress``); None otherwise."""
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1:
        return round(value * 100)
    return None
