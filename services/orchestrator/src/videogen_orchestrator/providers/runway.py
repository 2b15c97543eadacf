"""Runway's task API (``X-Runway-Version: 2024-11-06``): ``POST /v1/text_to_video`` (or, from a first frame,
``POST /v1/image_to_video`` with ``promptImage``) starts a task,
``GET /v1/tasks/{id}`` reads it (PENDING / THROTTLED / RUNNING / SUCCEEDED / FAILED / CANCELLED, ``output``
URLs on success, ``failure`` + ``failureCode`` on failure), ``DELETE /v1/tasks/{id}`` cancels it.

A first frame goes inline as a data URI when that URI is within Runway's 5 MB; a larger one is uploaded first,
as the runwayml SDK's ``uploads.create_ephemeral`` does: ``POST /v1/uploads`` (``{"filename", "type":
"ephemeral"}``) answers ``runwayUri``, ``uploadUrl`` and ``fields``; the file goes to ``uploadUrl`` as a form
(those fields, then ``file``), and ``promptImage`` is the ``runwayUri``.

Runway asks that a task be read no more than once every five seconds (``poll_interval_seconds``)."""

from __future__ import annotations

from typing import Any

from videogen_common.capabilities import CAPABILITIES, DEFAULT_ASPECT_RATIO
from videogen_common.domain import Provider
from videogen_common.failures import ErrorCode, GenerationError
from videogen_common.images import EXTENSIONS
from videogen_common.routing import TaskMade
from videogen_orchestrator.providers.base import Job, Output, ProviderError, TaskState, TaskStatus, data_uri
from videogen_orchestrator.providers.http import ProviderHTTP, TransientFailure
from videogen_orchestrator.providers.remote import RemoteAdapter, TaskStatuses, failed, message_of, planned

API_VERSION = "2024-11-06"
DEFAULT_MODEL = "gen4.5"
# The durations each text-to-video model makes (the runwayml SDK's text_to_video params, one per model).
TEXT_MODELS: dict[str, tuple[int, ...]] = {
    "gen4.5": tuple(range(2, 11)),
    "veo3.1": (4, 6, 8),
    "veo3.1_fast": (4, 6, 8),
}
# ... and each image-to-video model: those, and Gen-4 Turbo, which starts only from an image.
IMAGE_MODELS: dict[str, tuple[int, ...]] = {**TEXT_MODELS, "gen4_turbo": (5, 10)}
# Runway names a video's size by its pixels: 1080p is asked for as these (Veo's), 720p as the ratios'
# ``native_ratios`` in ``videogen_common.capabilities``.
FULL_HD = {"1280:720": "1920:1080", "720:1280": "1080:1920"}
# The longest ``data:`` URI Runway takes as an input (5 MB); a larger first frame is uploaded first.
MAX_DATA_URI_CHARS = 5_000_000
# The least time between two reads of one task: Runway asks for five seconds (its SDK waits 6 ± 1.5 s).
POLL_INTERVAL_SECONDS = 5.0


def failure(code: str | None, message: str | None) -> GenerationError:
    """A FAILED task's ``failureCode`` (dot-separated, most generic first) in our taxonomy."""
    text = message or "Runway failed the task"
    code = code or None
    if code is None:
        return GenerationError(ErrorCode.PROVIDER_ERROR, text, None, retriable=True)
    if code.startswith(("SAFETY.", "INPUT_PREPROCESSING.SAFETY")):
        # Moderation refused the prompt or the output; Runway says not to retry these.
        return GenerationError(ErrorCode.CONTENT_POLICY, text, code, retriable=False)
    if code.startswith("ASSET."):
        return GenerationError(ErrorCode.PROVIDER_REJECTED, text, code, retriable=False)
    if code.startswith(("INTERNAL", "INPUT_PREPROCESSING.INTERNAL")):
        # Quality rejections and system errors: Runway allows a retry.
        return GenerationError(ErrorCode.PROVIDER_ERROR, text, code, retriable=True)
    return GenerationError(ErrorCode.PROVIDER_ERROR, text, code, retriable=False)


class RunwayAdapter(RemoteAdapter):
    name = "runway"
    # Runway documents 429 and 502/503/504 (load shedding) as safe to retry.
    submit_safe_statuses = (429, 502, 503, 504)
    statuses = TaskStatuses(queued=("PENDING", "THROTTLED"), running=("RUNNING",), details=("progress",))
    capabilities = CAPABILITIES[Provider.RUNWAY]
    can_cancel = True
    poll_interval_seconds = POLL_INTERVAL_SECONDS

    def __init__(
        self,
        http: ProviderHTTP,
        *,
        model: str = DEFAULT_MODEL,
        image_model: str | None = None,
        poll_interval_seconds: float | None = None,
    ) -> None:
        """``model`` makes videos from text, and from a first frame unless ``image_model`` says otherwise."""
        if model not in TEXT_MODELS:
            raise ValueError(f"unknown Runway text-to-video model {model!r} (known: {sorted(TEXT_MODELS)})")
        image_model = image_model or model
        if image_model not in IMAGE_MODELS:
            raise ValueError(
                f"unknown Runway image-to-video model {image_model!r} (known: {sorted(IMAGE_MODELS)})"
            )
        super().__init__(http, poll_interval_seconds=poll_interval_seconds)
        self.model = model
        self.image_model = image_model

    @classmethod
    def headers(cls, api_key: str, version: str = API_VERSION) -> dict[str, str]:
        return {**super().headers(api_key), "X-Runway-Version": version}

    def plan(self, job: Job) -> dict[str, Any]:
        ratio = self.capabilities.native_ratio(job.aspect_ratio or DEFAULT_ASPECT_RATIO)
        if job.resolution == "1080p":  # the api lets it through only to a model that makes it (Veo)
            ratio = FULL_HD[ratio]
        # The generation's model (the deployment's default one takes its image model from a first frame).
        model = job.model or self.model
        fallback = job.durations or self.capabilities.durations
        if job.image is not None:
            model = self.image_model if model == self.model else model
            asked = {"model": model, "ratio": ratio, "from_image": True}
            return planned(job, IMAGE_MODELS.get(model, fallback), **asked)
        return planned(job, TEXT_MODELS.get(model, fallback), model=model, ratio=ratio)

    async def submit(self, job: Job) -> str:
        plan = self.plan(job)
        body: dict[str, Any] = {
            "model": plan["model"],
            "promptText": job.prompt,
            "ratio": plan["ratio"],
            "duration": plan["duration_s"],
        }
        if job.seed is not None:
            body["seed"] = job.seed
        if job.negative_prompt is not None:  # the api lets one through only to a model that takes it (Veo)
            body["negativePrompt"] = job.negative_prompt
        path = "/v1/text_to_video"
        if (image := data_uri(job)) is not None:
            # The same task, started from the client's image: inline while Runway takes it as a data URI.
            if len(image) > MAX_DATA_URI_CHARS:
                image = await self.upload(job)
            path, body["promptImage"] = "/v1/image_to_video", image
        return await self.submit_task(
            path, body, id_field="id", missing="Runway accepted the task without giving its id"
        )

    async def upload(self, job: Job) -> str:
        """The first frame uploaded as an ephemeral Runway upload: its ``runway://`` URI. No task is made
        yet, so any failure here is one with no task (and may be tried again)."""
        assert job.image is not None and job.image_type is not None
        filename = "first-frame" + EXTENSIONS.get(job.image_type, "")
        try:
            reply = await self.http.request(
                "POST", "/v1/uploads", json={"filename": filename, "type": "ephemeral"}
            )
            started = reply.body if isinstance(reply.body, dict) else {}
            uri, url, fields = started.get("runwayUri"), started.get("uploadUrl"), started.get("fields")
            if not reply.ok:
                raise ProviderError(self.refusal(reply), task=TaskMade.NONE)
            if not (isinstance(uri, str) and isinstance(url, str) and isinstance(fields, dict)):
                raise ProviderError(
                    GenerationError(ErrorCode.PROVIDER_ERROR, "Runway answered an upload without its URLs"),
                    task=TaskMade.NONE,
                )
            sent = await self.http.post_form(
                url,
                {str(k): str(v) for k, v in fields.items()},
                filename=filename,
                content=job.image,
                content_type=job.image_type,
            )
        except TransientFailure as exc:
            error = GenerationError(
                ErrorCode.PROVIDER_UNAVAILABLE,
                f"runway did not take the first frame's upload ({exc})",
                f"http_{exc.status}" if exc.status else None,
                retriable=True,
            )
            raise ProviderError(error, task=TaskMade.NONE) from exc
        if not sent.ok:
            error = GenerationError(
                ErrorCode.PROVIDER_ERROR,
                f"runway's upload refused the first frame: {message_of(sent.body)}",
                f"http_{sent.status}",
                retriable=True,
            )
            raise ProviderError(error, task=TaskMade.NONE)
        return uri

    def status_path(self, task_id: str) -> str:
        return f"/v1/tasks/{task_id}"

    async def final_state(
        self, task_id: str, status: Any, task: dict[str, Any], details: dict[str, Any]
    ) -> TaskState:
        if status == "SUCCEEDED":
            outputs = task.get("output")
            if isinstance(outputs, list) and outputs and isinstance(outputs[0], str):
                return TaskState(TaskStatus.SUCCEEDED, output=Output(video_url=outputs[0]), details=details)
            return failed(details, "Runway reported success without an output")
        if status == "FAILED":
            return TaskState(
                TaskStatus.FAILED,
                error=failure(task.get("failureCode"), task.get("failure")),
                details=details,
            )
        if status == "CANCELLED":
            return failed(details, "the task was canceled at Runway", ErrorCode.CANCELED, "CANCELLED")
        return failed(details, f"Runway answered an unknown task status {status!r}")

    async def cancel(self, task_id: str) -> None:
        """DELETE cancels a task still pending or running (and deletes a finished one)."""
        await self.send_cancel("DELETE", f"/v1/tasks/{task_id}")
