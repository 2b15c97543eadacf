"""A fake of fal.ai's queue API serving Pika (``fal-ai/pika/v2.2/text-to-video``): ``POST /{model_id}``
answers ``request_id`` and the status / response / cancel URLs; ``GET /{app_id}/requests/{id}/status``
answers IN_QUEUE / IN_PROGRESS / COMPLETED (with ``?logs=1``, a running request's log lines, the model's
progress bar among them, as fal's diffusion models print it); ``GET /{app_id}/requests/{id}`` the result
(``{"video": {"url", ...}}``, or the model's error with its status: 422 ``{"detail": [{"type": ...}]}``, or
``{"detail", "error_type"}`` for infrastructure errors); ``PUT /{app_id}/requests/{id}/cancel`` answers 202
CANCELLATION_REQUESTED, or 400 ALREADY_COMPLETED. ``app_id`` is the model id without its sub-path, its
namespace (``workflows/``, ``comfy/``) kept, as fal-client's ``AppId`` reads it; another model id may be
served (``model_id``). Requests need ``Authorization: Key <key>``. Every answer of fal's own servers carries
``x-fal-request-id``; ``proxy_fail_next`` scripts answers of fal's front proxy instead (nginx's page, no
request id), and ``make_then_fail_next_submits`` a submit that made its request but answered an error naming
it. Every answer is one fal-client reads (``tests/contract``). A submit naming a webhook (``?fal_webhook=``)
is called back there when its request ends, as fal does: the result posted, signed with ED25519 by
``signing_key`` (``X-Fal-Webhook-*`` headers), whose public half a ``FakeJWKS`` serves."""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
import uuid
from collections import deque
from typing import Any, Self

import orjson
from aiohttp import web
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from fal_client.client import AppId

from tests.support.fake_providers.common import FakeProviderAPI, FakeTask, Phase

MODEL_ID = "fal-ai/pika/v2.2/text-to-video"
IMAGE_MODEL_ID = "fal-ai/pika/v2.2/image-to-video"
APP_ID = "fal-ai/pika"
# What nginx, fal's front proxy, answers when it cannot reach fal's servers.
PROXY_PAGE = (
    "<html><head><title>{status}</title></head><body><center><h1>{status}</h1></center>"
    "<hr><center>nginx</center></body></html>"
)
DURATIONS = {5, 10}
RESOLUTIONS = {"720p", "1080p"}
ASPECT_RATIOS = {"16:9", "9:16", "1:1", "4:5", "5:4", "3:2", "2:3"}
STEPS = 20  # the model's denoising steps, shown in its progress bar

# ``failure`` values and the answer the result endpoint gives for each.
CONTENT_POLICY = "content_policy_violation"
REQUEST_TIMEOUT = "request_timeout"
RUNNER_ERROR = "runner_server_error"
_FAILURES: dict[str, tuple[int, Any]] = {
    CONTENT_POLICY: (
        422,
        {
            "detail": [
                {
                    "loc": ["body", "prompt"],
                    "msg": "The content could not be processed because it contained material flagged by a "
                    "content checker.",
                    "type": "content_policy_violation",
                    "ctx": {},
                }
            ]
        },
    ),
    REQUEST_TIMEOUT: (504, {"detail": "Request timed out", "error_type": "request_timeout"}),
    RUNNER_ERROR: (500, {"detail": "Internal server error", "error_type": "runner_server_error"}),
}


class FakeFal(FakeProviderAPI):
    """``failure`` is one of CONTENT_POLICY / REQUEST_TIMEOUT / RUNNER_ERROR."""

    provider = "fal"
    auth_scheme = "Key"
    error_key = "detail"
    invalid_key = "Invalid API key"
    not_found = "Request not found"
    canceled_gone = False

    def __init__(self, *, model_id: str = MODEL_ID, **knobs: Any) -> None:
        self.model_id = model_id
        app = AppId.from_endpoint_id(model_id)
        self.app_id = "/".join(part for part in (app.namespace, app.owner, app.alias) if part)
        head, _, tail = model_id.rpartition("/")
        self.image_model_id = f"{head}/image-to-video" if tail == "text-to-video" else model_id
        super().__init__(**knobs)
        self.log_requests: list[str | None] = []  # each status read's ``logs`` query value
        # A failed request's COMPLETED status carries its ``error`` and ``error_type`` (as fal's may).
        self.error_in_status = False
        self._proxy_faults: deque[tuple[int, dict[str, str]]] = deque()
        self.make_then_fail_next_submits = 0
        # The key fal signs its webhook calls with (a test may swap it for one no JWKS serves).
        self.signing_key = Ed25519PrivateKey.generate()
        self.user_id = "fake-fal-user"

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post(f"/{self.model_id}", self.create)
        if self.image_model_id != self.model_id:
            app.router.add_post(f"/{self.image_model_id}", self.create)
        app.router.add_get(f"/{self.app_id}/requests/{{task_id}}/status", self.read)
        app.router.add_get(f"/{self.app_id}/requests/{{task_id}}", self._result)
        app.router.add_put(f"/{self.app_id}/requests/{{task_id}}/cancel", self._cancel)

    def proxy_fail_next(
        self, times: int = 1, *, status: int = 502, headers: dict[str, str] | None = None
    ) -> None:
        """The next ``times`` submits are answered by fal's front proxy (``status``, nginx's page, no
        ``x-fal-request-id``; ``headers`` beside)."""
        self._proxy_faults.extend([(status, headers or {})] * times)

    def screen(self, request: web.Request, kind: Any) -> web.Response | None:
        if kind == "submit" and self._proxy_faults:
            status, headers = self._proxy_faults.popleft()
            return web.Response(
                status=status,
                text=PROXY_PAGE.format(status=status),
                content_type="text/html",
                headers=headers,
            )
        answer = super().screen(request, kind)
        if answer is not None:
            answer.headers["x-fal-request-id"] = secrets.token_hex(8)  # fal's servers wrote it
        return answer

    def cancel_request(self, task_id: str) -> tuple[str, str]:
        return "PUT", f"/{self.app_id}/requests/{task_id}/cancel"

    def callback_url_of(self, request: web.Request, body: dict[str, Any]) -> str | None:
        return request.query.get("fal_webhook")

    def callback_for(self, task: FakeTask, phase: Phase) -> tuple[bytes, dict[str, str]] | None:
        """fal posts once the request has ended: its result (``status`` OK) or its error (ERROR), signed."""
        if phase not in ("succeeded", "failed"):
            return None
        payload: dict[str, Any] = {"request_id": task.id, "gateway_request_id": task.id}
        if phase == "succeeded":
            video = {"url": self.video_url(task), "content_type": "video/mp4", "file_name": "output.mp4"}
            payload.update(status="OK", payload={"video": video})
        else:
            _, body = _FAILURES.get(task.failure or RUNNER_ERROR, _FAILURES[RUNNER_ERROR])
            payload.update(status="ERROR", error="Invalid status code: 422", payload=body)
        raw = orjson.dumps(payload)
        return raw, self.signed_headers(raw)

    def signed_headers(self, body: bytes, *, timestamp: int | None = None) -> dict[str, str]:
        """The headers fal's webhook call carries, its signature made with ``signing_key``."""
        request_id, stamp = str(uuid.uuid4()), str(int(time.time()) if timestamp is None else timestamp)
        message = "\n".join([request_id, self.user_id, stamp, hashlib.sha256(body).hexdigest()]).encode()
        return {
            "X-Fal-Webhook-Request-Id": request_id,
            "X-Fal-Webhook-User-Id": self.user_id,
            "X-Fal-Webhook-Timestamp": stamp,
            "X-Fal-Webhook-Signature": self.signing_key.sign(message).hex(),
        }

    def _urls(self, task: FakeTask) -> dict[str, str]:
        base = f"{self.origin}/{self.app_id}/requests/{task.id}"
        return {"response_url": base, "status_url": f"{base}/status", "cancel_url": f"{base}/cancel"}

    def validate(self, body: dict[str, Any] | None) -> str | None:
        return _validate(body)

    def invalid(self, problem: str) -> web.Response:
        return web.json_response(
            {"detail": [{"loc": ["body"], "msg": problem, "type": "value_error"}]}, status=422
        )

    def created(self, task: FakeTask) -> web.Response:
        headers = {"x-fal-request-id": task.id}
        if self.make_then_fail_next_submits > 0:
            self.make_then_fail_next_submits -= 1
            failure = {"detail": "Internal server error", "error_type": "internal_server_error"}
            return web.json_response(failure, status=500, headers=headers)
        body: dict[str, Any] = {"request_id": task.id, **self._urls(task), "queue_position": 0}
        return web.json_response(body, headers=headers)

    async def read(self, request: web.Request) -> web.Response:
        task = self.task_or_answer(request, "poll")
        if isinstance(task, web.Response):
            return task
        view = self.view(task)
        logs = request.query.get("logs")
        self.log_requests.append(logs)
        if logs in ("1", "true") and view["status"] == "IN_PROGRESS":
            view["logs"] = self._logs(task)
        return web.json_response(view, headers={"x-fal-request-id": task.id})

    def _logs(self, task: FakeTask) -> list[dict[str, str]]:
        done = int(task.progress(self.now()) * STEPS)
        bar = "█" * (done * 10 // STEPS)
        line = (
            f"Generating video: {done * 100 // STEPS:3d}%|{bar:<10}| {done}/{STEPS} [00:0{done // 4}<00:09]"
        )
        stamp = task.created_wall.isoformat()
        return [
            {"message": "Loading the model", "level": "INFO", "source": "USER", "timestamp": stamp},
            {"message": line, "level": "INFO", "source": "USER", "timestamp": stamp},
        ]

    def view(self, task: FakeTask) -> dict[str, Any]:
        phase = task.phase(self.now())
        if phase == "queued":
            return {"status": "IN_QUEUE", "queue_position": 0, **self._urls(task)}
        if phase == "running":
            return {"status": "IN_PROGRESS", "logs": None, **self._urls(task)}
        view: dict[str, Any] = {"status": "COMPLETED", "logs": None, "metrics": {}, **self._urls(task)}
        if phase == "failed" and self.error_in_status:
            _, body = _FAILURES.get(task.failure or RUNNER_ERROR, _FAILURES[RUNNER_ERROR])
            detail = body.get("detail")
            view["error"] = detail if isinstance(detail, str) else "The request failed."
            view["error_type"] = body.get("error_type", task.failure)
        return view

    async def _result(self, request: web.Request) -> web.Response:
        task = self.task_or_answer(request, "result")
        if isinstance(task, web.Response):
            return task
        phase = task.phase(self.now())
        if phase in ("queued", "running"):
            return web.json_response({"detail": "Request is still in progress"}, status=400)
        if phase == "canceled":
            return web.json_response(
                {"detail": "Request was cancelled", "error_type": "client_cancelled"}, status=499
            )
        if phase == "failed":
            status, body = _FAILURES.get(task.failure or RUNNER_ERROR, _FAILURES[RUNNER_ERROR])
            return web.json_response(
                body, status=status, headers={"X-Fal-Error-Type": str(body.get("error_type", ""))}
            )
        return web.json_response(
            {
                "video": {
                    "url": self.video_url(task),
                    "content_type": "video/mp4",
                    "file_name": "output.mp4",
                    "file_size": len(self.video),
                }
            }
        )

    async def _cancel(self, request: web.Request) -> web.Response:
        task = self.task_or_answer(request, "cancel", missing={"status": "NOT_FOUND"})
        if isinstance(task, web.Response):
            return task
        if task.phase(self.now()) in ("succeeded", "failed", "canceled"):
            return web.json_response({"status": "ALREADY_COMPLETED"}, status=400)
        self.cancel_task(task)
        return web.json_response({"status": "CANCELLATION_REQUESTED"}, status=202)


def _validate(body: dict[str, Any] | None) -> str | None:
    if body is None:
        return "The request body must be a JSON object"
    if not isinstance(body.get("prompt"), str) or not body["prompt"]:
        return "prompt is required"
    if body.get("duration", 5) not in DURATIONS:
        return f"duration must be one of {sorted(DURATIONS)}"
    if body.get("resolution", "720p") not in RESOLUTIONS:
        return f"resolution must be one of {sorted(RESOLUTIONS)}"
    if body.get("aspect_ratio", "16:9") not in ASPECT_RATIOS:
        return f"aspect_ratio must be one of {sorted(ASPECT_RATIOS)}"
    if not isinstance(body.get("seed", 0), int) or isinstance(body.get("seed"), bool):
        return "seed must be an integer"
    if not isinstance(body.get("negative_prompt", ""), str):
        return "negative_prompt must be a string"
    image = body.get("image_url")
    if image is not None and not (isinstance(image, str) and image.startswith(("https://", "data:image/"))):
        return "image_url must be a URL or a data URI"
    return None


def jwk(key: Ed25519PrivateKey) -> dict[str, str]:
    """The public half of ``key`` as a JWK, as fal publishes its keys."""
    raw = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    x = base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
    return {"kty": "OKP", "crv": "Ed25519", "x": x, "kid": hashlib.sha256(raw).hexdigest()[:16], "use": "sig"}


class FakeJWKS:
    """fal's published webhook keys, served at ``url`` on 127.0.0.1: ``keys`` (a test may add or swap them);
    ``fetches`` counts the reads."""

    def __init__(self, *keys: Ed25519PrivateKey) -> None:
        self.keys = list(keys)
        self.fetches = 0
        app = web.Application()
        app.router.add_get("/.well-known/jwks.json", self._jwks)
        self._runner = web.AppRunner(app, access_log=None)
        self._port: int | None = None

    async def __aenter__(self) -> Self:
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self._port = int(self._runner.addresses[0][1])
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._runner.cleanup()

    @property
    def url(self) -> str:
        assert self._port is not None, "not started"
        return f"http://127.0.0.1:{self._port}/.well-known/jwks.json"

    async def _jwks(self, request: web.Request) -> web.Response:
        self.fetches += 1
        return web.json_response({"keys": [jwk(key) for key in self.keys]})
