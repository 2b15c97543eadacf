"""The mock provider: renders a real video locally. ``#fail`` in a prompt makes it fail."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable

from videogen_orchestrator.providers.base import GenerationError, Job, Output, TaskState, TaskStatus
from videogen_orchestrator.render import render

FAIL_MARKER = "#fail"


class MockProvider:
    name = "mock"

    def __init__(
        self, *, latency_ms: int = 0, failure_rate: float = 0.0, rng: Callable[[], float] = random.random
    ) -> None:
        self._latency = latency_ms / 1000
        self._failure_rate = failure_rate
        self._rng = rng
        self.submitted: list[str] = []

    async def submit(self, job: Job) -> str:
        self.submitted.append(job.generation_id)
        return f"mock_{job.generation_id}"

    async def poll(self, task_id: str, job: Job) -> TaskState:
        if self._latency:
            await asyncio.sleep(self._latency)
        if FAIL_MARKER in job.prompt or (self._failure_rate and self._rng() < self._failure_rate):
            return TaskState(
                TaskStatus.FAILED,
                error=GenerationError(
                    code="mock_failure",
                    message="the mock provider failed this generation as asked",
                    provider_code="mock.failure",
                ),
            )
        rendered = await asyncio.to_thread(render, job.prompt, job.duration)
        return TaskState(TaskStatus.SUCCEEDED, output=Output(rendered.video, rendered.thumbnail))
