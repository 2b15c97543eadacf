"""A provider double that holds each task until the test lets it finish, so "at once" is exact rather than
timed: the mock provider, with every submission recorded and the most tasks it ever had at once; and
orchestrator instances around it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tests.support.orchestration import Orchestration
from videogen_common.store import Store
from videogen_orchestrator.providers.base import AdapterDefaults, Job, TaskState
from videogen_orchestrator.providers.mock import MockProvider


class HeldProvider(AdapterDefaults):
    """The mock provider, except that each task stays at the provider until the test calls ``finish``. Records
    every submission and the most tasks it ever had at once (submitted, not yet reported finished)."""

    name = "mock"

    def __init__(self) -> None:
        self._inner = MockProvider()
        self.submitted: list[str] = []
        self.at_provider: set[str] = set()
        self.peak = 0
        self._gates: dict[str, asyncio.Event] = {}
        self._changed = asyncio.Condition()

    def _gate(self, generation_id: str) -> asyncio.Event:
        return self._gates.setdefault(generation_id, asyncio.Event())

    async def submit(self, job: Job) -> str:
        async with self._changed:
            self.submitted.append(job.generation_id)
            self.at_provider.add(job.generation_id)
            self.peak = max(self.peak, len(self.at_provider))
            self._changed.notify_all()
        return await self._inner.submit(job)

    async def poll(self, task_id: str, job: Job) -> TaskState:
        await self._gate(job.generation_id).wait()
        state = await self._inner.poll(task_id, job)
        self.at_provider.discard(job.generation_id)
        return state

    def finish(self, generation_id: str) -> None:
        self._gate(generation_id).set()

    async def until_submitted(self, count: int, timeout: float = 10.0) -> list[str]:
        async with asyncio.timeout(timeout), self._changed:
            await self._changed.wait_for(lambda: len(self.submitted) >= count)
        return list(self.submitted)


class HeldOrchestration(Orchestration):
    """Orchestrator instances (``Orchestration``) on one store whose mock provider is a ``HeldProvider``, each
    runner with room for 64 generations; ``settings`` add to that (the account cap, the provider's limit)."""

    def __init__(
        self, store: Store, base_env: dict[str, str], media_root: Path, settings: dict[str, Any]
    ) -> None:
        self.provider = HeldProvider()
        super().__init__(
            store,
            base_env,
            media_root,
            providers={"mock": self.provider},
            settings={"max_in_flight": 64, **settings},
        )

    async def idle(self) -> None:
        for runner in self.runners:
            await runner.wait_idle()

    async def stop(self) -> None:
        """Lets every held task finish, then stops the instances."""
        for gid in list(self.provider.at_provider):
            self.provider.finish(gid)
        await super().stop()
