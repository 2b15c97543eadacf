"""A fake of Luma's Dream Machine API (base URL ``{origin}/dream-machine/v1``): ``POST /generations/video``
(the path of the lumaai SDK's video create calls) answers 201 with the Generation (``id``, ``state``);
``GET /generations/{id}`` answers it with ``state`` queued / dreaming / completed / failed, ``assets.video``
(and ``assets.image`` when ``serve_thumbnail``) on success and ``failure_reason`` on failure;
``DELETE /generations/{id}`` deletes it (204). Requests need ``Authorization: Bearer <key>``; errors are
``{"detail": ...}``. Every answer is one the lumaai SDK's ``Generation`` model accepts
(``tests/contract``). A create naming a ``callback_url`` is called back there, as Luma does: the Generation
posted on each change of its state (3 tries, 100 ms apart, unsigned)."""

from __future__ import annotations

from typing import Any

import orjson
from aiohttp import web

from tests.support.fake_providers.common import FakeProviderAPI, FakeTask, Phase

PREFIX = "/dream-machine/v1"
MODELS = {"ray-2", "ray-flash-2"}
DURATIONS = {"5s", "9s"}
RESOLUTIONS = {"540p", "720p", "1080p", "4k"}
ASPECT_RATIOS = {"1:1", "16:9", "9:16", "4:3", "3:4", "21:9", "9:21"}
# failure_reason texts as Luma words them.
MODERATION_FAILURE = "400: prompt not allowed because advanced moderation failed"
INTERNAL_FAILURE = "The generation failed due to an internal error"


class FakeLuma(FakeProviderAPI):
    """``failure`` is the ``failure_reason`` new generations end with (e.g. ``MODERATION_FAILURE``)."""

    provider = "luma"
    error_key = "detail"
    invalid_key = "Invalid API key provided"
    not_found = "Generation not found"

    @property
    def base_url(self) -> str:
        return self.origin + PREFIX

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post(f"{PREFIX}/generations/video", self.create)
        app.router.add_get(f"{PREFIX}/generations/{{task_id}}", self.read)
        app.router.add_delete(f"{PREFIX}/generations/{{task_id}}", self.delete)

    def cancel_request(self, task_id: str) -> tuple[str, str]:
        return "DELETE", f"{PREFIX}/generations/{task_id}"

    def validate(self, body: dict[str, Any] | None) -> str | None:
        return _validate(body)

    def callback_url_of(self, request: web.Request, body: dict[str, Any]) -> str | None:
        url = body.get("callback_url")
        return url if isinstance(url, str) else None

    def callback_for(self, task: FakeTask, phase: Phase) -> tuple[bytes, dict[str, str]] | None:
        """Luma posts the Generation on each change of its state, unsigned (a deleted one: nothing)."""
        if phase == "canceled":
            return None
        return orjson.dumps(self.view(task)), {}

    def created(self, task: FakeTask) -> web.Response:
        return web.json_response(self.view(task), status=201)

    def view(self, task: FakeTask) -> dict[str, Any]:
        phase = task.phase(self.now())
        state = {"queued": "queued", "running": "dreaming", "succeeded": "completed"}.get(phase, "failed")
        assets: dict[str, Any] | None = None
        if state == "completed":
            assets = {"video": self.video_url(task)}
            if self.serve_thumbnail:
                assets["image"] = self.thumbnail_url(task)
        return {
            "id": task.id,
            "generation_type": "video",
            "state": state,
            "failure_reason": (task.failure or INTERNAL_FAILURE) if state == "failed" else None,
            "created_at": task.created_wall.isoformat().replace("+00:00", "Z"),
            "assets": assets,
            "model": task.body.get("model"),
            "request": task.body,
        }


def _validate(body: dict[str, Any] | None) -> str | None:
    if body is None:
        return "The request body must be a JSON object"
    if body.get("model") not in MODELS:
        return f"Invalid model: {body.get('model')!r}"
    if not isinstance(body.get("prompt"), str) or not body["prompt"]:
        return "prompt is required"
    if body.get("duration", "5s") not in DURATIONS:
        return f"Invalid duration: {body.get('duration')!r}"
    if body.get("resolution", "720p") not in RESOLUTIONS:
        return f"Invalid resolution: {body.get('resolution')!r}"
    if body.get("aspect_ratio", "16:9") not in ASPECT_RATIOS:
        return f"Invalid aspect_ratio: {body.get('aspect_ratio')!r}"
    keyframes = body.get("keyframes", {})
    frame = keyframes.get("frame0") if isinstance(keyframes, dict) else None
    if keyframes and not (
        isinstance(frame, dict) and frame.get("type") == "image" and isinstance(frame.get("url"), str)
    ):
        return "Invalid keyframes: frame0 must be {type: image, url}"
    return None
