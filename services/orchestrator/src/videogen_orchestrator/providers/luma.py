"""Luma's Dream Machine API: ``POST /generations/video`` starts a video generation (the path both of the
lumaai SDK's video create calls use), ``GET /generations/{id}``
reads it (``state`` queued / dreaming / completed / failed, ``assets.video`` on success, ``failure_reason``
on failure), ``DELETE /generations/{id}`` drops it. The base URL includes ``/dream-machine/v1``. With
provider callbacks on, a create names a ``callback_url``, where Luma posts the Generation on each state
change."""

from __future__ import annotations

from typing import Any

from videogen_common.capabilities import CAPABILITIES
from videogen_common.domain import Provider
from videogen_common.failures import ErrorCode, GenerationError
from videogen_orchestrator.providers.base import Job, Output, TaskState, TaskStatus
from videogen_orchestrator.providers.http import ProviderHTTP
from videogen_orchestrator.providers.remote import (
    ModelResolutionAdapter,
    TaskStatuses,
    failed,
    looks_like_moderation,
)


def failure(reason: str | None) -> GenerationError:
    """``failure_reason`` is free text: moderation refusals say so; anything else is a provider failure."""
    text = reason or "Luma failed the generation"
    if looks_like_moderation(text):
        return GenerationError(ErrorCode.CONTENT_POLICY, text, "moderation", retriable=False)
    return GenerationError(ErrorCode.PROVIDER_ERROR, text, "failed", retriable=True)


class LumaAdapter(ModelResolutionAdapter):
    name = "luma"
    submit_safe_statuses = (429, 502, 503)
    statuses = TaskStatuses(queued=("queued",), running=("dreaming",), field="state")
    capabilities = CAPABILITIES[Provider.LUMA]
    can_cancel = True
    calls_back = True

    def __init__(
        self,
        http: ProviderHTTP,
        *,
        model: str = "ray-2",
        resolution: str = "720p",
        poll_interval_seconds: float | None = None,
    ) -> None:
        super().__init__(
            http, model=model, resolution=resolution, poll_interval_seconds=poll_interval_seconds
        )

    async def submit(self, job: Job) -> str:
        plan = self.plan(job)
        body: dict[str, Any] = {
            "generation_type": "video",
            "prompt": job.prompt,
            "model": plan["model"],
            "resolution": plan["resolution"],
            "aspect_ratio": plan["aspect_ratio"],
            "duration": f"{plan['duration_s']}s",  # Ray makes "5s" or "9s"
        }
        if job.image_url is not None:
            # The first keyframe: Luma fetches it from our signed link.
            body["keyframes"] = {"frame0": {"type": "image", "url": job.image_url}}
        if job.callback_url is not None:
            # Luma posts the Generation there on each state change (unsigned: the URL's token is the guard).
            body["callback_url"] = job.callback_url
        return await self.submit_task(
            "/generations/video",
            body,
            id_field="id",
            missing="Luma accepted the generation without giving its id",
        )

    def status_path(self, task_id: str) -> str:
        return f"/generations/{task_id}"

    async def final_state(
        self, task_id: str, state: Any, task: dict[str, Any], details: dict[str, Any]
    ) -> TaskState:
        if state == "completed":
            assets = task.get("assets") if isinstance(task.get("assets"), dict) else {}
            video = assets.get("video") if assets else None
            if not isinstance(video, str) or not video:
                return failed(details, "Luma completed without a video")
            image = assets.get("image") if assets else None
            thumbnail = image if isinstance(image, str) and image else None
            return TaskState(
                TaskStatus.SUCCEEDED, output=Output(video_url=video, thumbnail_url=thumbnail), details=details
            )
        if state == "failed":
            return TaskState(TaskStatus.FAILED, error=failure(task.get("failure_reason")), details=details)
        return failed(details, f"Luma answered an unknown state {state!r}")

    async def cancel(self, task_id: str) -> None:
        """Luma has no cancel: deleting the generation is the closest it offers."""
        await self.send_cancel("DELETE", f"/generations/{task_id}")
