"""A fake of Runway's API (task API, version 2024-11-06): ``POST /v1/text_to_video`` answers ``{"id"}``;
``GET /v1/tasks/{id}`` answers the task with status PENDING / THROTTLED / RUNNING / SUCCEEDED / FAILED,
``output`` (URLs) on success and ``failure`` + ``failureCode`` on failure; ``DELETE /v1/tasks/{id}`` cancels
a running task or deletes a finished one (either way it is gone: later reads answer 404). Requests need
``Authorization: Bearer <key>`` and ``X-Runway-Version: 2024-11-06``."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from tests.support.fake_providers.common import FakeProviderAPI, FakeTask

API_VERSION = "2024-11-06"
RATIOS = {"1280:720", "720:1280", "1080:1920", "1920:1080"}
# Durations each text-to-video model accepts, as Runway documents them.
MODEL_DURATIONS: dict[str, set[int]] = {
    "gen4.5": set(range(2, 11)),
    "veo3.1": {4, 6, 8},
    "veo3.1_fast": {4, 6, 8},
    "veo3": {8},
}
FAILURE_MESSAGES = {
    "SAFETY.INPUT.TEXT": "The prompt text did not pass content moderation.",
    "SAFETY.OUTPUT.VIDEO": "The output did not pass content moderation.",
    "INPUT_PREPROCESSING.SAFETY.TEXT": "The prompt text was rejected by content moderation.",
    "INTERNAL.BAD_OUTPUT.CODE01": "The generation was rejected for quality reasons.",
    "INTERNAL": "An internal error occurred.",
    "ASSET.INVALID": "An input asset was invalid.",
}


class FakeRunway(FakeProviderAPI):
    """``async with FakeRunway(task_seconds=...) as fake:`` then point the adapter at ``fake.base_url`` with
    ``fake.api_key``. ``throttled = True`` shows queued tasks as THROTTLED instead of PENDING."""

    provider = "runway"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.throttled = False

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/text_to_video", self.create)
        app.router.add_post("/v1/image_to_video", self.create)
        app.router.add_get("/v1/tasks/{task_id}", self.read)
        app.router.add_delete("/v1/tasks/{task_id}", self.delete)

    def cancel_request(self, task_id: str) -> tuple[str, str]:
        return "DELETE", f"/v1/tasks/{task_id}"

    def prompt_of(self, body: dict[str, Any]) -> str | None:
        value = body.get("promptText")
        return value if isinstance(value, str) else None

    def refuse(self, request: web.Request) -> web.Response | None:
        refused = super().refuse(request)
        if refused is None and request.headers.get("X-Runway-Version") != API_VERSION:
            return self.problem("The X-Runway-Version header is missing or names an unknown version.", 400)
        return refused

    def validate(self, body: dict[str, Any] | None) -> str | None:
        return _validate(body)

    def invalid(self, problem: str) -> web.Response:
        return web.json_response({"error": problem, "issues": [{"message": problem}]}, status=400)

    def created(self, task: FakeTask) -> web.Response:
        return web.json_response({"id": task.id})

    def view(self, task: FakeTask) -> dict[str, Any]:
        now = self.now()
        phase = task.phase(now)
        view: dict[str, Any] = {
            "id": task.id,
            "createdAt": task.created_wall.isoformat().replace("+00:00", "Z"),
        }
        if phase == "queued":
            view["status"] = "THROTTLED" if self.throttled else "PENDING"
        elif phase == "running":
            view |= {"status": "RUNNING", "progress": round(task.progress(now), 3)}
        elif phase == "succeeded":
            view |= {"status": "SUCCEEDED", "output": [self.video_url(task)]}
        else:
            code = task.failure or "INTERNAL"
            view |= {
                "status": "FAILED",
                "failure": FAILURE_MESSAGES.get(code, "The task failed."),
                "failureCode": code,
            }
        return view


def _validate(body: dict[str, Any] | None) -> str | None:
    if body is None:
        return "The request body must be a JSON object."
    model = body.get("model")
    if model not in MODEL_DURATIONS:
        return f"Invalid model: {model!r}."
    prompt = body.get("promptText")
    if not isinstance(prompt, str) or not prompt or len(prompt) > 1000:
        return "promptText must be a non-empty string of at most 1000 characters."
    if body.get("ratio") not in RATIOS:
        return f"Invalid ratio: {body.get('ratio')!r}."
    duration = body.get("duration")
    if not isinstance(duration, int) or duration not in MODEL_DURATIONS[model]:
        return f"Invalid duration for {model}: {duration!r}."
    image = body.get("promptImage")
    if image is not None and not (isinstance(image, str) and image.startswith(("https://", "data:image/"))):
        return "promptImage must be an HTTPS URL or a data URI of an image."
    seed = body.get("seed", 0)
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed <= 4_294_967_295:
        return f"Invalid seed: {seed!r}."
    return None
