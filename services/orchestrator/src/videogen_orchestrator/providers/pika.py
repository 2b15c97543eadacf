"""Pika through fal.ai's queue API: ``POST {model_id}`` submits (answers ``request_id``),
``GET {app_id}/requests/{id}/status`` reads the queue status (IN_QUEUE / IN_PROGRESS / COMPLETED),
``GET {app_id}/requests/{id}`` the result (``{"video": {"url": ...}}``, or the model's error), and
``PUT {app_id}/requests/{id}/cancel`` cancels. ``app_id`` is the model id's owner and name (after its
namespace, ``workflows/`` or ``comfy/``, kept in front), as fal-client's ``AppId`` reads it: status, result
and cancel do not take the endpoint's sub-path. Auth is ``Authorization: Key <key>``.

A submit is sent again only when its answer shows that fal never accepted it, as fal-client decides: a 502,
503 or 504 from fal's front proxy (no ``x-fal-request-id`` header, nginx's page), never a 504 that carries
``X-Fal-Request-Timeout-Type``. An error answer that does carry ``x-fal-request-id`` names a request fal
made: that request is looked up (polled) rather than submitted again; any other failure is never repeated.

fal gives no progress figure: the status is read with ``logs=1`` and the newest log line that shows a
progress bar (``45%|████▌ | 9/20``, or ``step 9/20``) gives the estimate; none, and progress stays unknown.

With provider callbacks on, a submit names its ``webhook_url`` as fal's ``fal_webhook`` query parameter:
fal posts the result there when the request ends, signed with ED25519 (the api checks it)."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

from videogen_common.capabilities import CAPABILITIES
from videogen_common.domain import Provider
from videogen_common.failures import ErrorCode, GenerationError
from videogen_orchestrator.providers.base import Job, Output, TaskState, TaskStatus, data_uri
from videogen_orchestrator.providers.http import ProviderHTTP, Reply
from videogen_orchestrator.providers.remote import (
    ModelResolutionAdapter,
    TaskStatuses,
    UnsureSubmit,
    failed,
    looks_like_moderation,
    message_of,
)

log = logging.getLogger(__name__)

DEFAULT_MODEL = "fal-ai/pika/v2.2/text-to-video"
# fal's infrastructure error types (``error_type``) that mean the request ran out of time.
_TIMEOUTS = {"request_timeout", "startup_timeout"}


# A tqdm bar's percentage ("45%|"), or its "done/total" count.
_PERCENT = re.compile(r"(?<![\d.])(\d{1,3})%\|")
_STEPS = re.compile(r"(?<![\d.])(\d{1,6})/(\d{1,6})(?![\d.])")


def progress_from_logs(logs: Any) -> int | None:
    """The best estimate of a running request's progress from fal's status ``logs``
    (``[{"message", "level", "timestamp"}]``): the newest line with a progress bar or a step count, capped at
    99 (100 is the finished video). None when no line says."""
    if not isinstance(logs, list):
        return None
    for entry in reversed(logs):
        message = entry.get("message") if isinstance(entry, dict) else None
        if not isinstance(message, str):
            continue
        if (bar := _PERCENT.search(message)) is not None and int(bar.group(1)) <= 100:
            return min(int(bar.group(1)), 99)
        if (steps := _STEPS.search(message)) is not None:
            done, total = int(steps.group(1)), int(steps.group(2))
            if total > 0 and done <= total:
                return min(done * 100 // total, 99)
    return None


def image_model(model_id: str) -> str:
    """The image-to-video endpoint beside a text-to-video one (``…/text-to-video`` → ``…/image-to-video``);
    the same app, so status, result and cancel are read alike."""
    head, _, tail = model_id.rpartition("/")
    return f"{head}/image-to-video" if tail == "text-to-video" else model_id


# Namespaces a fal app id may start with (fal-client's ``APP_NAMESPACES``): the owner and name follow.
NAMESPACES = ("workflows", "comfy")
# The header fal's own servers put on every answer, naming the request; its front proxy's answers lack it.
REQUEST_ID_HEADER = "x-fal-request-id"
# On a 504: the request ran out of the time the caller gave it at fal (fal made it; it is not resent).
TIMEOUT_TYPE_HEADER = "X-Fal-Request-Timeout-Type"
INGRESS_STATUSES = (502, 503, 504)


def app_id(model_id: str) -> str:
    """The app a model id (endpoint) belongs to: ``[namespace/]owner/name``, without the endpoint's path."""
    parts = model_id.strip("/").split("/")
    size = 3 if parts[0] in NAMESPACES else 2
    if len(parts) < size or not all(parts[:size]):
        raise ValueError(f"a fal model id is [workflows/|comfy/]owner/name[/path], got {model_id!r}")
    return "/".join(parts[:size])


def never_accepted(status: int, headers: Mapping[str, str], raw: bytes | None) -> bool:
    """Whether an error answer to a submit shows fal never accepted the request, so it may be sent again:
    fal-client's test (``_should_retry_response`` for 5xx): a 502/503/504 that fal's front proxy (nginx)
    wrote, with no ``x-fal-request-id``; never a 504 that carries ``X-Fal-Request-Timeout-Type``."""
    if status == 504 and headers.get(TIMEOUT_TYPE_HEADER):
        return False
    if status not in INGRESS_STATUSES or REQUEST_ID_HEADER in headers:
        return False
    return raw is not None and b"nginx" in raw


def failure(body: Any, status: int | None = None) -> GenerationError:
    """A failed request's error in our taxonomy. Model errors are ``{"detail": [{"type", "msg", ...}]}``
    (``content_policy_violation`` for moderation); infrastructure errors ``{"detail", "error_type"}``."""
    message = message_of(body)
    detail = body.get("detail") if isinstance(body, dict) else None
    if isinstance(detail, list):
        types = [item.get("type") for item in detail if isinstance(item, dict)]
        if "content_policy_violation" in types:
            return GenerationError(ErrorCode.CONTENT_POLICY, message, "content_policy_violation")
        first = next((t for t in types if isinstance(t, str)), None)
        return GenerationError(ErrorCode.PROVIDER_REJECTED, message, first)
    error_type = body.get("error_type") if isinstance(body, dict) else None
    if isinstance(error_type, str):
        if error_type in _TIMEOUTS:
            return GenerationError(ErrorCode.PROVIDER_TIMEOUT, message, error_type, retriable=True)
        if error_type == "content_policy_violation":
            return GenerationError(ErrorCode.CONTENT_POLICY, message, error_type)
        if error_type == "client_cancelled":
            return GenerationError(ErrorCode.CANCELED, message, error_type)
        if error_type == "bad_request":
            return GenerationError(ErrorCode.PROVIDER_REJECTED, message, error_type)
        return GenerationError(ErrorCode.PROVIDER_ERROR, message, error_type, retriable=True)
    if looks_like_moderation(message):
        return GenerationError(ErrorCode.CONTENT_POLICY, message, f"http_{status}" if status else None)
    code = f"http_{status}" if status else None
    if status is not None and 400 <= status < 500:
        return GenerationError(ErrorCode.PROVIDER_REJECTED, message, code)
    return GenerationError(ErrorCode.PROVIDER_ERROR, message, code, retriable=True)


class PikaAdapter(ModelResolutionAdapter):
    name = "pika"
    auth_scheme = "Key"
    statuses = TaskStatuses(queued=("IN_QUEUE",), running=("IN_PROGRESS",), details=("queue_position",))
    capabilities = CAPABILITIES[Provider.PIKA]
    can_cancel = True
    calls_back = True

    def __init__(
        self,
        http: ProviderHTTP,
        *,
        model: str = DEFAULT_MODEL,
        resolution: str = "720p",
        poll_interval_seconds: float | None = None,
    ) -> None:
        super().__init__(
            http, model=model.strip("/"), resolution=resolution, poll_interval_seconds=poll_interval_seconds
        )
        self.app = app_id(self.model)

    def submit_never_made(self, status: int, headers: Mapping[str, str], raw: bytes | None) -> bool:
        return never_accepted(status, headers, raw)

    async def submit(self, job: Job) -> str:
        plan = self.plan(job)
        body: dict[str, Any] = {
            "prompt": job.prompt,
            "duration": plan["duration_s"],
            "resolution": plan["resolution"],
        }
        model = plan["model"]
        if (image := data_uri(job)) is not None:
            # The image-to-video model: its frame follows the image, so it takes no aspect ratio.
            body["image_url"] = image
        else:
            body["aspect_ratio"] = plan["aspect_ratio"]
        if job.seed is not None:
            body["seed"] = job.seed
        if job.negative_prompt is not None:
            body["negative_prompt"] = job.negative_prompt
        path = f"/{model}"
        if job.callback_url is not None:
            # fal posts the result there, signed (fal-client's ``submit(..., webhook_url=...)`` sends it so).
            path += "?" + urlencode({"fal_webhook": job.callback_url})
        try:
            return await self.submit_task(
                path,
                body,
                id_field="request_id",
                missing="fal queued the request without giving its id",
            )
        except UnsureSubmit as exc:
            # fal answered with an error but named the request it made: follow that request (its status
            # says whether it runs, or how it failed) instead of giving up on it or sending it again.
            request_id = exc.headers.get(REQUEST_ID_HEADER)
            if not request_id:
                raise
            log.warning(
                "fal answered the submit with an error but named its request; looking it up",
                extra={"provider": self.name, "request_id": request_id, "error": str(exc)},
            )
            return request_id

    def plan(self, job: Job) -> dict[str, Any]:
        plan = super().plan(job)
        if job.image is not None:
            plan["model"] = image_model(plan["model"])
            plan["aspect_ratio"] = None  # the image's
        return plan

    def status_path(self, task_id: str) -> str:
        return f"/{self.app}/requests/{task_id}/status?logs=1"

    def running_progress(self, task: dict[str, Any]) -> int | None:
        return progress_from_logs(task.get("logs"))

    async def final_state(
        self, task_id: str, status: Any, task: dict[str, Any], details: dict[str, Any]
    ) -> TaskState:
        if status in ("CANCELED", "CANCELLED"):
            return failed(details, "the request was canceled at fal", ErrorCode.CANCELED, str(status))
        if status == "FAILED" or (status == "COMPLETED" and task.get("error")):
            return TaskState(TaskStatus.FAILED, error=failure(task), details=details)
        if status == "COMPLETED":
            return self._result(await self._fetch_result(task_id), details)
        return failed(details, f"fal answered an unknown status {status!r}")

    async def _fetch_result(self, task_id: str) -> Reply:
        # The stored result keeps the model's own status code (a 5xx may be the final answer), so only what
        # is certainly transient is retried here.
        return await self.send_read("GET", f"/{self.app}/requests/{task_id}", retry_statuses=(429, 502, 503))

    def _result(self, reply: Reply, details: dict[str, Any]) -> TaskState:
        if not reply.ok:
            if reply.status in (401, 403, 404):
                return TaskState(TaskStatus.FAILED, error=self.refusal(reply), details=details)
            return TaskState(TaskStatus.FAILED, error=failure(reply.body, reply.status), details=details)
        video = reply.body.get("video") if isinstance(reply.body, dict) else None
        url = video.get("url") if isinstance(video, dict) else None
        if not isinstance(url, str) or not url:
            return failed(details, "fal completed the request without a video")
        return TaskState(TaskStatus.SUCCEEDED, output=Output(video_url=url), details=details)

    async def cancel(self, task_id: str) -> None:
        """fal removes a queued request and signals a running one; a finished one answers 400."""
        await self.send_cancel("PUT", f"/{self.app}/requests/{task_id}/cancel", finished=(400, 404))
