"""What the provider fakes share: a real aiohttp server on 127.0.0.1 (port 0), tasks whose state follows the
event loop's clock, scripted faults (429 + Retry-After, 5xx bursts, a lost response), and a small real MP4
served as the output file. Each fake (runway, luma, fal) adds the routes and JSON shapes of its provider."""

from __future__ import annotations

import asyncio
import functools
import math
import secrets
import uuid
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, Self

import aiohttp
from aiohttp import web
from multidict import CIMultiDict

from videogen_orchestrator.render import Scene, render

Kind = Literal["submit", "poll", "result", "cancel"]
Phase = Literal["queued", "running", "succeeded", "failed", "canceled"]
ENDED: tuple[Phase, ...] = ("succeeded", "failed", "canceled")


@functools.cache
def sample_media() -> tuple[bytes, bytes]:
    """A one-second real MP4 and its JPEG thumbnail, rendered once per process (CPU-bound: call it in a
    thread)."""
    rendered = render(Scene("fake provider output", 1))
    return rendered.video, rendered.thumbnail


@dataclass
class Fault:
    """One scripted answer instead of the real one, for the next request of ``kind`` (any kind if None)."""

    status: int
    kind: Kind | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    body: Any = None


@dataclass(frozen=True)
class Callback:
    """One call back the fake made: where, about which task in which phase, and the answer's status (None:
    no answer, the connection failed)."""

    url: str
    task_id: str
    phase: Phase
    status: int | None


@dataclass(frozen=True)
class Exchange:
    """One request as the fake received it (for the contract tests): its method, path, query, headers and
    raw body."""

    method: str
    path: str
    query: Mapping[str, str]
    headers: Mapping[str, str]
    body: bytes


@dataclass
class FakeTask:
    id: str
    body: dict[str, Any]
    created_at: float
    queue_seconds: float
    run_seconds: float
    failure: str | None = None
    canceled: bool = False
    created_wall: datetime = field(default_factory=lambda: datetime.now(UTC))
    # The API key that made it: only that key sees it.
    key: str | None = None
    # Where the provider calls back about it (the create named it), if anywhere.
    callback_url: str | None = None

    def ends_at(self) -> float:
        """When (loop time) it ends, or ended, unless canceled."""
        return self.created_at + self.queue_seconds + self.run_seconds

    def ended_wall(self) -> datetime:
        """When (wall time) it ends, or ended: for the time from the provider's end to ours."""
        return self.created_wall + timedelta(seconds=self.queue_seconds + self.run_seconds)

    def phase(self, now: float) -> Phase:
        if self.canceled:
            return "canceled"
        elapsed = now - self.created_at
        if elapsed < self.queue_seconds:
            return "queued"
        if elapsed < self.queue_seconds + self.run_seconds:
            return "running"
        return "failed" if self.failure else "succeeded"

    def progress(self, now: float) -> float:
        if math.isinf(self.run_seconds) or self.run_seconds <= 0:
            return 0.0
        return max(0.0, min(1.0, (now - self.created_at - self.queue_seconds) / self.run_seconds))


class FakeProviderAPI:
    """Base of the fakes. Knobs a test may set at any time:

    - ``task_seconds``: how long a new task runs before it ends (``math.inf``: it never ends);
    - ``queue_seconds``: how long a new task waits in the provider's queue first;
    - ``failure``: a provider failure code new tasks end with instead of succeeding;
    - ``fail_next(...)`` / ``throttle_next(...)``: scripted HTTP errors for the next requests;
    - ``lose_next_submit_responses``: create the task, then drop the connection without answering;
    - ``submit_seconds``: how long a task-creation request takes to answer after it made the task;
    - ``serve_thumbnail``: whether the provider reports a thumbnail URL (where its API has one).

    - ``max_running``: the provider's own concurrency, per key: a task creation while this many of the key's
      tasks are queued or running is refused with 429 (``Retry-After: capacity_retry_after`` when set), as
      Luma and Runway do;
    - ``add_key()``: another API key the provider accepts (a task is seen only by the key that made it);
    - ``go_down()`` / ``come_back()``: stop listening (connections refused) and listen again on the same port;
    - callbacks, for a fake whose provider calls back (``callback_url_of``, ``callback_for``): a task whose
      create named a callback URL is called back about as its provider does (each try ``callback_tries``
      times, ``callback_spacing`` apart, until one is answered 2xx); ``callbacks_lost``: none is sent;
      ``before_create_answer``: awaited after a task is made and before its create is answered (a test
      forces an interleaving with it: a callback that comes before the create's answer).

    Records: ``callbacks`` (each call back made), ``submissions`` (JSON bodies of the task-creation requests
    that created a task), ``requests`` (method and path of every request; ``exchanges``: each whole, headers
    and body too), ``canceled`` (task ids the client canceled or deleted),
    ``capacity_refusals`` (429s for ``max_running``) and ``peak_running`` (the most tasks of one key queued
    or running at once; by key in ``peak_by_key``).

    A fake is this skeleton (auth, scripted faults, the task lookup, the task-creation handler) plus its
    provider's routes, wording and JSON shapes: ``add_routes``, ``validate``, ``invalid``, ``created``."""

    provider = "fake"
    # ``Authorization: <auth_scheme> <key>``; errors are ``{<error_key>: message}``.
    auth_scheme = "Bearer"
    error_key = "error"
    invalid_key = "Invalid API key."
    not_found = "Task not found."
    # Whether a canceled task is gone (later requests naming it answer 404), as a deleted one is.
    canceled_gone = True

    def __init__(
        self,
        *,
        task_seconds: float = 0.0,
        queue_seconds: float = 0.0,
        failure: str | None = None,
        api_key: str | None = None,
    ) -> None:
        self.api_key = api_key or f"{self.provider}-test-{secrets.token_hex(8)}"
        self.api_keys = [self.api_key]
        self.task_seconds = task_seconds
        self.queue_seconds = queue_seconds
        self.failure = failure
        self.serve_thumbnail = False
        self.lose_next_submit_responses = 0
        self.submit_seconds = 0.0
        self.submissions: list[dict[str, Any]] = []
        self.requests: list[tuple[str, str]] = []
        self.exchanges: list[Exchange] = []
        self.canceled: list[str] = []
        self.tasks: dict[str, FakeTask] = {}
        self.max_running: int | None = None
        self.capacity_retry_after: str | None = None
        self.capacity_refusals = 0
        self.peak_running = 0
        self.peak_by_key: dict[str, int] = {}
        self.video = b""
        self.thumbnail = b""
        self.downloads = 0
        self._faults: deque[Fault] = deque()
        self.callbacks_lost = False
        self.callback_tries = 3
        self.callback_spacing = 0.1
        self.before_create_answer: Callable[[FakeTask], Awaitable[None]] | None = None
        self.callbacks: list[Callback] = []
        self._following: set[asyncio.Task[None]] = set()
        self._session: aiohttp.ClientSession | None = None
        self._port: int | None = None
        self._site: web.TCPSite | None = None
        # Large enough for a first frame sent inline past a provider's limit (which the fake then refuses).
        app = web.Application(middlewares=[self._record], client_max_size=64 * 1024 * 1024)
        app.router.add_get("/files/{task_id}/video.mp4", self._video)
        app.router.add_get("/files/{task_id}/thumbnail.jpg", self._thumbnail)
        self.add_routes(app)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=2.0)

    # -- lifecycle --------------------------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        self.video, self.thumbnail = await asyncio.to_thread(sample_media)
        await self._runner.setup()
        self._site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await self._site.start()
        self._port = int(self._runner.addresses[0][1])
        return self

    async def go_down(self) -> None:
        """Stop listening: connections to the provider are refused (its tasks are kept)."""
        assert self._site is not None
        await self._site.stop()
        self._site = None

    async def come_back(self) -> None:
        """Listen again, on the same port."""
        assert self._site is None and self._port is not None
        self._site = web.TCPSite(self._runner, "127.0.0.1", self._port, reuse_address=True)
        await self._site.start()

    async def __aexit__(self, *exc: object) -> None:
        for following in list(self._following):
            following.cancel()
        await asyncio.gather(*self._following, return_exceptions=True)
        if self._session is not None:
            await self._session.close()
        await self._runner.cleanup()

    @property
    def origin(self) -> str:
        assert self._port is not None, "fake not started"
        return f"http://127.0.0.1:{self._port}"

    @property
    def base_url(self) -> str:
        """What the adapter's base-URL setting should be."""
        return self.origin

    # -- knobs ------------------------------------------------------------------------------------------

    def fail_next(
        self,
        times: int = 1,
        *,
        status: int = 503,
        kind: Kind | None = None,
        retry_after: str | None = None,
        body: Any = None,
    ) -> None:
        headers = {"Retry-After": retry_after} if retry_after is not None else {}
        for _ in range(times):
            self._faults.append(Fault(status, kind, headers, body))

    def throttle_next(self, times: int = 1, *, retry_after: str = "1", kind: Kind | None = None) -> None:
        self.fail_next(times, status=429, kind=kind, retry_after=retry_after)

    def add_key(self) -> str:
        key = f"{self.provider}-test-{secrets.token_hex(8)}"
        self.api_keys.append(key)
        return key

    def running_now(self, key: str | None = None) -> int:
        """Tasks queued or running at the provider now (of ``key`` only, if given)."""
        now = self.now()
        return sum(
            1
            for task in self.tasks.values()
            if task.phase(now) in ("queued", "running") and (key is None or task.key == key)
        )

    def key_of(self, request: web.Request) -> str | None:
        """The API key a request presents, if the provider accepts it."""
        header = request.headers.get("Authorization", "")
        scheme, _, key = header.partition(" ")
        return key if scheme == self.auth_scheme and key in self.api_keys else None

    def count(self, method: str, prefix: str = "") -> int:
        return sum(1 for m, p in self.requests if m == method and p.startswith(prefix))

    def submissions_for(self, prompt: str) -> int:
        return sum(1 for body in self.submissions if self.prompt_of(body) == prompt)

    # -- for subclasses ---------------------------------------------------------------------------------

    def add_routes(self, app: web.Application) -> None:
        raise NotImplementedError

    def validate(self, body: dict[str, Any] | None) -> str | None:
        """What is wrong with a task-creation body, in the provider's words; None if nothing."""
        raise NotImplementedError

    def validate_for(self, request: web.Request, body: dict[str, Any] | None) -> str | None:
        """``validate``, for a fake whose endpoints take different bodies (by ``request.path``)."""
        return self.validate(body)

    def invalid(self, problem: str) -> web.Response:
        """The answer to a task-creation body ``validate`` found wrong."""
        return self.problem(problem, 400)

    def created(self, task: FakeTask) -> web.Response:
        """The answer to a task creation that made ``task``."""
        raise NotImplementedError

    def view(self, task: FakeTask) -> dict[str, Any]:
        """The task as the provider's status read answers it."""
        raise NotImplementedError

    def cancel_request(self, task_id: str) -> tuple[str, str]:
        """The method and path of the request that cancels (or deletes) the task."""
        raise NotImplementedError

    def callback_url_of(self, request: web.Request, body: dict[str, Any]) -> str | None:
        """Where the create asked to be called back (None: nowhere, or the provider never calls back)."""
        return None

    def callback_for(self, task: FakeTask, phase: Phase) -> tuple[bytes, dict[str, str]] | None:
        """The body and headers of the call back about ``task`` now in ``phase``; None: none for it."""
        return None

    def prompt_of(self, body: dict[str, Any]) -> str | None:
        value = body.get("prompt")
        return value if isinstance(value, str) else None

    def now(self) -> float:
        return asyncio.get_running_loop().time()

    def new_task(self, body: dict[str, Any]) -> FakeTask:
        task = FakeTask(
            id=str(uuid.uuid4()),
            body=body,
            created_at=self.now(),
            queue_seconds=self.queue_seconds,
            run_seconds=self.task_seconds,
            failure=self.failure,
            key=self.api_key,
        )
        self.tasks[task.id] = task
        self.submissions.append(body)
        return task

    def video_url(self, task: FakeTask) -> str:
        return f"{self.origin}/files/{task.id}/video.mp4"

    def thumbnail_url(self, task: FakeTask) -> str:
        return f"{self.origin}/files/{task.id}/thumbnail.jpg"

    def fault(self, kind: Kind) -> web.Response | None:
        """The scripted answer for this request, if one is waiting for its kind."""
        for index, fault in enumerate(self._faults):
            if fault.kind is None or fault.kind == kind:
                del self._faults[index]
                body = fault.body if fault.body is not None else self.error_body(fault.status)
                return web.json_response(body, status=fault.status, headers=dict(fault.headers))
        return None

    def error_body(self, status: int) -> Any:
        return {self.error_key: f"fake {self.provider} error {status}"}

    def problem(self, message: str, status: int) -> web.Response:
        return web.json_response({self.error_key: message}, status=status)

    def refuse(self, request: web.Request) -> web.Response | None:
        """The provider's refusal of the request's credentials, if it would refuse them."""
        if self.key_of(request) is None:
            return self.problem(self.invalid_key, 401)
        return None

    def screen(self, request: web.Request, kind: Kind) -> web.Response | None:
        """The answer instead of the real one: a refusal of the credentials, or a scripted fault."""
        return self.refuse(request) or self.fault(kind)

    def task_or_answer(
        self, request: web.Request, kind: Kind, *, missing: Any = None
    ) -> FakeTask | web.Response:
        """The task the request's path names, or the answer instead: ``screen``'s, or 404 (``missing`` as
        its body) if there is no such task (or it was canceled and ``canceled_gone``)."""
        screened = self.screen(request, kind)
        if screened is not None:
            return screened
        task = self.tasks.get(request.match_info["task_id"])
        if task is not None and task.key != self.key_of(request):
            task = None  # another key's task: unknown to this one
        if task is None or (self.canceled_gone and task.canceled):
            body = missing if missing is not None else {self.error_key: self.not_found}
            return web.json_response(body, status=404)
        return task

    def cancel_task(self, task: FakeTask) -> None:
        task.canceled = True
        self.canceled.append(task.id)

    async def answer_submit(self, request: web.Request, answer: web.Response) -> web.StreamResponse:
        """The answer to a task creation that made its task: after ``submit_seconds``, or never (knobs)."""
        if self.submit_seconds:
            await asyncio.sleep(self.submit_seconds)
        if self.lose_next_submit_responses > 0:
            return await self.lose_response(request)
        return answer

    async def lose_response(self, request: web.Request) -> web.StreamResponse:
        """Close the connection without answering: the client cannot tell whether the task was made."""
        self.lose_next_submit_responses -= 1
        assert request.transport is not None
        request.transport.close()
        raise asyncio.CancelledError  # aiohttp drops the handler; nothing is written

    @staticmethod
    async def json_body(request: web.Request) -> dict[str, Any] | None:
        try:
            body = await request.json()
        except ValueError:
            return None
        return body if isinstance(body, dict) else None

    # -- shared handlers --------------------------------------------------------------------------------

    async def create(self, request: web.Request) -> web.StreamResponse:
        """Task creation: refused, faulted, invalid, or a new task answered (or not) per the knobs."""
        screened = self.screen(request, "submit")
        if screened is not None:
            return screened
        body = await self.json_body(request)
        problem = self.validate_for(request, body)
        if problem is not None:
            return self.invalid(problem)
        assert body is not None
        key = self.key_of(request)
        if self.max_running is not None and self.running_now(key) >= self.max_running:
            self.capacity_refusals += 1
            headers = {"Retry-After": self.capacity_retry_after} if self.capacity_retry_after else {}
            return web.json_response(self.error_body(429), status=429, headers=headers)
        task = self.new_task(body)
        task.key = key
        assert key is not None
        self.peak_by_key[key] = max(self.peak_by_key.get(key, 0), self.running_now(key))
        self.peak_running = max(self.peak_running, self.peak_by_key[key])
        task.callback_url = self.callback_url_of(request, body)
        if task.callback_url is not None:
            following = asyncio.create_task(self._call_back_on_changes(task), name="fake-callbacks")
            self._following.add(following)
            following.add_done_callback(self._following.discard)
        if self.before_create_answer is not None:
            await self.before_create_answer(task)
        return await self.answer_submit(request, self.created(task))

    # -- callbacks --------------------------------------------------------------------------------------

    async def _call_back_on_changes(self, task: FakeTask) -> None:
        """Call back about the task on each change of its phase after its creation, until it ends."""
        last = task.phase(self.now())
        while last not in ENDED:
            phase = task.phase(self.now())
            if phase == last:
                # Until its next change as the knobs stand (a test may move them: looked at again soon).
                boundary = task.created_at + task.queue_seconds if phase == "queued" else task.ends_at()
                await asyncio.sleep(min(max(boundary - self.now(), 0.001), 0.05))
                continue
            last = phase
            call = None if self.callbacks_lost else self.callback_for(task, phase)
            if call is not None and task.callback_url is not None:
                await self._call_back(task.callback_url, task.id, phase, *call)

    async def _call_back(
        self, url: str, task_id: str, phase: Phase, body: bytes, headers: dict[str, str]
    ) -> None:
        if self._session is None:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10))
        for attempt in range(self.callback_tries):
            if attempt:
                await asyncio.sleep(self.callback_spacing)
            status: int | None = None
            try:
                sending = {**headers, "Content-Type": "application/json"}
                async with self._session.post(url, data=body, headers=sending) as answer:
                    status = answer.status
            except aiohttp.ClientError:
                pass
            self.callbacks.append(Callback(url, task_id, phase, status))
            if status is not None and 200 <= status < 300:
                return

    async def read(self, request: web.Request) -> web.Response:
        """The status read of a task: its ``view``."""
        task = self.task_or_answer(request, "poll")
        if isinstance(task, web.Response):
            return task
        return web.json_response(self.view(task))

    async def delete(self, request: web.Request) -> web.Response:
        """DELETE of a task (Runway, Luma): it is gone, whatever its phase (204)."""
        task = self.task_or_answer(request, "cancel")
        if isinstance(task, web.Response):
            return task
        self.cancel_task(task)
        return web.Response(status=204)

    @web.middleware
    async def _record(self, request: web.Request, handler: Any) -> web.StreamResponse:
        self.requests.append((request.method, request.path))
        # A form's body is left to its handler to stream (read here, it could not be parsed there).
        readable = request.can_read_body and not request.content_type.startswith("multipart/")
        raw = await request.read() if readable else b""
        self.exchanges.append(
            Exchange(request.method, request.path, dict(request.query), CIMultiDict(request.headers), raw)
        )
        response: web.StreamResponse = await handler(request)
        return response

    async def _video(self, request: web.Request) -> web.Response:
        if request.match_info["task_id"] not in self.tasks:
            return web.Response(status=404)
        self.downloads += 1
        return web.Response(body=self.video, content_type="video/mp4")

    async def _thumbnail(self, request: web.Request) -> web.Response:
        if request.match_info["task_id"] not in self.tasks:
            return web.Response(status=404)
        return web.Response(body=self.thumbnail, content_type="image/jpeg")
