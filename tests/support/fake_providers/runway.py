"""A fake of Runway's API (task API, version 2024-11-06): ``POST /v1/text_to_video`` and
``POST /v1/image_to_video`` answer ``{"id", "estimatedCost"}``; ``GET /v1/tasks/{id}`` answers the task
with status PENDING / THROTTLED / RUNNING / SUCCEEDED / FAILED (with ``createdAt``, ``estimatedCost`` while
it waits or runs, ``cost`` once it ended), ``output`` (URLs) on success and ``failure`` + ``failureCode`` on
failure; ``DELETE /v1/tasks/{id}`` cancels a running task or deletes a finished one (either way it is gone:
later reads answer 404). ``POST /v1/uploads`` (``{"filename", "type": "ephemeral"}``) answers
``runwayUri``, ``uploadUrl`` and ``fields``; the file goes to ``uploadUrl`` (a stand-in for the storage
host: no API headers) as a form, and ``promptImage`` may then be the ``runwayUri``. A ``data:`` URI input is
refused over 5 MB. Requests to the API need ``Authorization: Bearer <key>`` and ``X-Runway-Version:
2024-11-06``. Every answer is one the runwayml SDK's response models accept (``tests/contract``)."""

from __future__ import annotations

import secrets
from typing import Any

from aiohttp import web

from tests.support.fake_providers.common import FakeProviderAPI, FakeTask

API_VERSION = "2024-11-06"
# Durations each text-to-video model accepts, and its ratios, as the runwayml SDK's params type them.
TEXT_MODELS: dict[str, tuple[set[int], set[str]]] = {
    "gen4.5": (set(range(2, 11)), {"1280:720", "720:1280"}),
    "veo3.1": ({4, 6, 8}, {"1280:720", "720:1280", "1080:1920", "1920:1080"}),
    "veo3.1_fast": ({4, 6, 8}, {"1280:720", "720:1280", "1080:1920", "1920:1080"}),
}
_IMAGE_RATIOS = {"1280:720", "720:1280", "1104:832", "960:960", "832:1104", "1584:672"}
# ... and each image-to-video model.
IMAGE_MODELS: dict[str, tuple[set[int], set[str]]] = {
    **TEXT_MODELS,
    "gen4.5": (set(range(2, 11)), _IMAGE_RATIOS),
    "gen4_turbo": ({5, 10}, _IMAGE_RATIOS),
}
MAX_DATA_URI_CHARS = 5_000_000
# Credits a second of video costs (what ``estimatedCost`` and ``cost`` say).
CREDITS_PER_SECOND = {"gen4.5": 12, "gen4_turbo": 5, "veo3.1": 40, "veo3.1_fast": 15}
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
        # Ephemeral uploads: the form fields each upload URL expects, and the files received, by upload id.
        self.upload_fields: dict[str, dict[str, str]] = {}
        self.uploaded: dict[str, bytes] = {}
        self.refuse_uploads = False  # the storage host refuses every upload (403)

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/text_to_video", self.create)
        app.router.add_post("/v1/image_to_video", self.create)
        app.router.add_get("/v1/tasks/{task_id}", self.read)
        app.router.add_delete("/v1/tasks/{task_id}", self.delete)
        app.router.add_post("/v1/uploads", self._start_upload)
        app.router.add_post("/upload-bucket/{upload_id}", self._receive_upload)

    def runway_uri(self, upload_id: str) -> str:
        return f"runway://fake-uploads/{upload_id}"

    async def _start_upload(self, request: web.Request) -> web.Response:
        screened = self.refuse(request)
        if screened is not None:
            return screened
        body = await self.json_body(request)
        if (
            body is None
            or body.get("type") != "ephemeral"
            or not isinstance(body.get("filename"), str)
            or not body["filename"]
        ):
            return self.invalid("An upload needs a filename and type 'ephemeral'.")
        upload_id = secrets.token_hex(8)
        fields = {"key": f"uploads/{upload_id}/{body['filename']}", "policy": secrets.token_hex(8)}
        self.upload_fields[upload_id] = fields
        return web.json_response(
            {
                "runwayUri": self.runway_uri(upload_id),
                "uploadUrl": f"{self.origin}/upload-bucket/{upload_id}",
                "fields": fields,
            }
        )

    async def _receive_upload(self, request: web.Request) -> web.Response:
        """The storage host: the form must carry the fields it was given and the file, and no API key."""
        upload_id = request.match_info["upload_id"]
        expected = self.upload_fields.get(upload_id)
        if expected is None or "Authorization" in request.headers or self.refuse_uploads:
            return web.Response(status=403, text="<Error><Code>AccessDenied</Code></Error>")
        form = await request.post()
        fields = {name: value for name, value in form.items() if isinstance(value, str)}
        upload = form.get("file")
        if fields != expected or not isinstance(upload, web.FileField):
            return web.Response(status=400, text="<Error><Code>InvalidPolicyDocument</Code></Error>")
        self.uploaded[upload_id] = upload.file.read()
        return web.Response(status=204)

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
        return self._validate(body, image=False)

    def validate_for(self, request: web.Request, body: dict[str, Any] | None) -> str | None:
        return self._validate(body, image=request.path == "/v1/image_to_video")

    def _validate(self, body: dict[str, Any] | None, *, image: bool) -> str | None:
        problem = _validate(body, IMAGE_MODELS if image else TEXT_MODELS)
        if problem is not None or body is None:
            return problem
        prompt_image = body.get("promptImage")
        if not image:
            return "promptImage is not a text_to_video field." if prompt_image is not None else None
        if not isinstance(prompt_image, str):
            return "promptImage must be an HTTPS URL, a Runway upload URI or a data URI."
        if prompt_image.startswith("data:image/"):
            return "The data URI is over 5MB." if len(prompt_image) > MAX_DATA_URI_CHARS else None
        if prompt_image.startswith("runway://"):
            known = prompt_image.rsplit("/", 1)[-1] in self.uploaded
            return None if known else "The Runway upload URI names no upload."
        return None if prompt_image.startswith("https://") else "promptImage is not a URL Runway takes."

    def invalid(self, problem: str) -> web.Response:
        return web.json_response({"error": problem, "issues": [{"message": problem}]}, status=400)

    def created(self, task: FakeTask) -> web.Response:
        return web.json_response({"id": task.id, "estimatedCost": {"credits": self.credits(task)}})

    def credits(self, task: FakeTask) -> int:
        """What the task costs (``estimatedCost``, then ``cost``)."""
        return CREDITS_PER_SECOND.get(str(task.body.get("model")), 10) * int(task.body.get("duration", 5))

    def view(self, task: FakeTask) -> dict[str, Any]:
        now = self.now()
        phase = task.phase(now)
        credits = self.credits(task)
        view: dict[str, Any] = {
            "id": task.id,
            "createdAt": task.created_wall.isoformat().replace("+00:00", "Z"),
        }
        if phase == "queued":
            view |= {
                "status": "THROTTLED" if self.throttled else "PENDING",
                "estimatedCost": {"credits": credits},
            }
        elif phase == "running":
            view |= {
                "status": "RUNNING",
                "progress": round(task.progress(now), 3),
                "estimatedCost": {"credits": credits},
            }
        elif phase == "succeeded":
            view |= {"status": "SUCCEEDED", "output": [self.video_url(task)], "cost": {"credits": credits}}
        else:
            code = task.failure or "INTERNAL"
            view |= {
                "status": "FAILED",
                "failure": FAILURE_MESSAGES.get(code, "The task failed."),
                "failureCode": code,
                "cost": {"credits": 0},  # refunded
            }
        return view


def _validate(body: dict[str, Any] | None, models: dict[str, tuple[set[int], set[str]]]) -> str | None:
    if body is None:
        return "The request body must be a JSON object."
    model = body.get("model")
    if model not in models:
        return f"Invalid model: {model!r}."
    durations, ratios = models[model]
    prompt = body.get("promptText")
    if not isinstance(prompt, str) or not prompt or len(prompt) > 1000:
        return "promptText must be a non-empty string of at most 1000 characters."
    if body.get("ratio") not in ratios:
        return f"Invalid ratio for {model}: {body.get('ratio')!r}."
    duration = body.get("duration")
    if not isinstance(duration, int) or duration not in durations:
        return f"Invalid duration for {model}: {duration!r}."
    seed = body.get("seed", 0)
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed <= 4_294_967_295:
        return f"Invalid seed: {seed!r}."
    return None
