"""The actor's operational choices come from what its adapter declares, and its pauses between polls are taken
through the injected clock."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.actors import run_generation
from tests.support.env import settings_for
from tests.support.fakes import ManualClock
from videogen_common.media import LocalMediaStore
from videogen_common.store import Store
from videogen_orchestrator.providers.base import AdapterDefaults, Job, Output, TaskState, TaskStatus
from videogen_orchestrator.settings import OrchestratorSettings


class SlowProvider(AdapterDefaults):
    """Running for ``polls - 1`` polls, then finished."""

    name = "mock"

    def __init__(self, polls: int) -> None:
        self.left = polls

    async def submit(self, job: Job) -> str:
        return f"task_{job.generation_id}"

    async def poll(self, task_id: str, job: Job) -> TaskState:
        self.left -= 1
        if self.left > 0:
            return TaskState(TaskStatus.RUNNING)
        return TaskState(TaskStatus.SUCCEEDED, output=Output(video=b"mp4", thumbnail=b"\xff\xd8jpg"))


@pytest.fixture
def settings(base_env: dict[str, str]) -> OrchestratorSettings:
    return settings_for(
        OrchestratorSettings, base_env, orchestrator_instance="orch-a", poll_interval_seconds=0.01
    )


async def test_every_pause_between_polls_is_taken_through_the_clock(
    store: Store, settings: OrchestratorSettings, tmp_path: Path
) -> None:
    clock = ManualClock()
    final = await run_generation(
        store=store,
        settings=settings,
        media=LocalMediaStore(tmp_path / "media"),
        provider=SlowProvider(polls=3),
        clock=clock,
    )
    assert final["status"] == "completed"
    assert clock.slept == [0.01, 0.01]  # one pause after each poll that found the task running


async def test_an_adapter_that_declares_no_payment_is_not_marked_before_its_submit(
    store: Store, settings: OrchestratorSettings, tmp_path: Path
) -> None:
    class FreeProvider(SlowProvider):
        pays_per_submit = False

    paid = await run_generation(
        store=store,
        settings=settings,
        media=LocalMediaStore(tmp_path / "media"),
        provider=SlowProvider(polls=1),
        clock=ManualClock(),
    )
    free = await run_generation(
        store=store,
        settings=settings,
        media=LocalMediaStore(tmp_path / "media"),
        provider=FreeProvider(polls=1),
        clock=ManualClock(),
    )
    assert paid["status"] == free["status"] == "completed"
    assert paid.get("submit_started_at") is not None
    assert free.get("submit_started_at") is None
