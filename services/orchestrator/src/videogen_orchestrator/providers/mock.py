"""The mock provider: renders a real video locally. ``#fail`` in a prompt makes it fail; so does a draw under
``failure_rate``; every poll first waits ``latency_ms``. Renders are cached (see ``RenderCache``)."""

from __future__ import annotations

import asyncio
import random
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

from videogen_common.capabilities import CAPABILITIES, DEFAULT_ASPECT_RATIO, frame_size
from videogen_common.domain import Provider
from videogen_common.failures import ErrorCode, GenerationError
from videogen_orchestrator.providers.base import AdapterDefaults, Job, Output, TaskState, TaskStatus
from videogen_orchestrator.render import Rendered, Scene, render

FAIL_MARKER = "#fail"
PROGRESS_STEPS = 10


class RenderCache:
    """The last ``entries`` renders, by scene: what the renderer draws depends on nothing else, so a load
    test repeating prompts is not bound by video encoding. Concurrent requests for the same video share one
    render. ``entries=0`` renders every time."""

    def __init__(self, entries: int, renderer: Callable[[Scene], Rendered] | None = None) -> None:
        self._entries = entries
        self._renderer = renderer
        self._done: OrderedDict[Scene, Rendered] = OrderedDict()
        self._pending: dict[Scene, asyncio.Future[Rendered]] = {}
        self.hits = 0
        self.renders = 0

    def __len__(self) -> int:
        return len(self._done)

    async def get(self, key: Scene) -> Rendered:
        cached = self._done.get(key)
        if cached is not None:
            self._done.move_to_end(key)
            self.hits += 1
            return cached
        pending = self._pending.get(key)
        if pending is None:
            self.renders += 1
            # CPU-bound: in a thread, so the event loop keeps serving the other generations.
            renderer = self._renderer or render  # looked up now, so the module's renderer can be swapped
            pending = asyncio.ensure_future(asyncio.to_thread(renderer, key))
            if self._entries > 0:
                self._pending[key] = pending
                pending.add_done_callback(lambda done: self._finished(key, done))
        else:
            self.hits += 1
        # Shielded: one waiter giving up (its generation canceled) does not cancel the others' render.
        return await asyncio.shield(pending)

    def _finished(self, key: Scene, done: asyncio.Future[Rendered]) -> None:
        self._pending.pop(key, None)
        if done.cancelled() or done.exception() is not None:
            return
        self._done[key] = done.result()
        self._done.move_to_end(key)
        while len(self._done) > self._entries:
            self._done.popitem(last=False)


class MockProvider(AdapterDefaults):
    name = "mock"
    capabilities = CAPABILITIES[Provider.MOCK]
    # Its cancel records the task id (what tests see).
    can_cancel = True
    # Free and local: a submit whose id was lost in a crash may simply be made again.
    pays_per_submit = False

    def __init__(
        self,
        *,
        latency_ms: int = 0,
        failure_rate: float = 0.0,
        rng: Callable[[], float] = random.random,
        cache_entries: int = 64,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    ) -> None:
        self._latency = latency_ms / 1000
        self._failure_rate = failure_rate
        self._rng = rng
        self._sleep = sleep
        self.cache = RenderCache(cache_entries)
        self.submitted: list[str] = []
        self.canceled: list[str] = []

    @property
    def latency_seconds(self) -> float:
        return self._latency

    @property
    def failure_rate(self) -> float:
        return self._failure_rate

    def scene(self, job: Job) -> Scene:
        width, height = frame_size(
            job.aspect_ratio or DEFAULT_ASPECT_RATIO, job.resolution or self.capabilities.default_resolution
        )
        return Scene(job.prompt, job.duration, width, height, job.seed, job.negative_prompt, job.image)

    def plan(self, job: Job) -> dict[str, Any]:
        scene = self.scene(job)
        return {
            "duration_s": job.duration,
            "requested_duration_s": job.duration,
            "width": scene.width,
            "height": scene.height,
        }

    async def submit(self, job: Job) -> str:
        self.submitted.append(job.generation_id)
        return f"mock_{job.generation_id}"

    async def cancel(self, task_id: str) -> None:
        """Nothing runs between polls here: the cancel is recorded (what tests see)."""
        self.canceled.append(task_id)

    async def poll(self, task_id: str, job: Job) -> TaskState:
        if self._latency:
            # The latency stands for the provider's render: progress is reported as it passes.
            for step in range(1, PROGRESS_STEPS + 1):
                await self._sleep(self._latency / PROGRESS_STEPS)
                job.report(step * 100 // (PROGRESS_STEPS + 1))
        if FAIL_MARKER in job.prompt or (self._failure_rate and self._rng() < self._failure_rate):
            return TaskState(
                TaskStatus.FAILED,
                error=GenerationError(
                    code=ErrorCode.MOCK_FAILURE,
                    message="the mock provider failed this generation as asked",
                    provider_code="mock.failure",
                ),
            )
        rendered = await self.cache.get(self.scene(job))
        return TaskState(TaskStatus.SUCCEEDED, output=Output(rendered.video, rendered.thumbnail))
