"""Runway's task API (``X-Runway-Version: 2024-11-06``): ``POST /v1/text_to_video`` (or, from a first frame,
``POST /v1/image_to_video`` with ``promptImage``) starts a task,
``GET /v1/tasks/{id}`` reads it (PENDING / THROTTLED / RUNNING / SUCCEEDED / FAILED / CANCELLED, ``output``
URLs on success, ``failure`` + ``failureCode`` on failure), ``DELETE /v1/tasks/{id}`` cancels it."""

from __future__ import annotations

from typing import Any

from videogen_common.capabilities import CAPABILITIES, DEFAULT_ASPECT_RATIO
from videogen_common.domain import Provider
from videogen_common.failures import ErrorCode, GenerationError
from videogen_orchestrator.providers.base import Job, Output, TaskState, TaskStatus, data_uri
from videogen_orchestrator.providers.http import ProviderHTTP
from videogen_orchestrator.providers.remote import RemoteAdapter, failed, planned

API_VERSION = "2024-11-06"
# The durations each text-to-video model makes, as Runway documents them.
MODEL_DURATIONS: dict[str, tuple[int, ...]] = {
    "gen4.5": tuple(range(2, 11)),
    "veo3.1": (4, 6, 8),
    "veo3.1_fast": (4, 6, 8),
    "veo3": (8,),
}


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
    queued_statuses = ("PENDING", "THROTTLED")
    running_statuses = ("RUNNING",)
    detail_fields = ("progress",)
    capabilities = CAPABILITIES[Provider.RUNWAY]
    can_cancel = True

    def __init__(self, http: ProviderHTTP, *, model: str = "gen4.5") -> None:
        if model not in MODEL_DURATIONS:
            raise ValueError(
                f"unknown Runway text-to-video model {model!r} (known: {sorted(MODEL_DURATIONS)})"
            )
        super().__init__(http)
        self.model = model

    @classmethod
    def headers(cls, api_key: str, version: str = API_VERSION) -> dict[str, str]:
        return {**super().headers(api_key), "X-Runway-Version": version}

    def plan(self, job: Job) -> dict[str, Any]:
        ratio = self.capabilities.native_ratio(job.aspect_ratio or DEFAULT_ASPECT_RATIO)
        asked: dict[str, Any] = {"model": self.model, "ratio": ratio}
        if job.image is not None:
            asked["from_image"] = True
        return planned(job, MODEL_DURATIONS[self.model], **asked)

    async def submit(self, job: Job) -> str:
        plan = self.plan(job)
        body: dict[str, Any] = {
            "model": self.model,
            "promptText": job.prompt,
            "ratio": plan["ratio"],
            "duration": plan["duration_s"],
        }
        if job.seed is not None:
            body["seed"] = job.seed
        path = "/v1/text_to_video"
        if (image := data_uri(job)) is not None:
            # The same task, started from the client's image (sent inline: Runway takes data URIs).
            path, body["promptImage"] = "/v1/image_to_video", image
        return await self.submit_task(
            path, body, id_field="id", missing="Runway accepted the task without giving its id"
        )

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
