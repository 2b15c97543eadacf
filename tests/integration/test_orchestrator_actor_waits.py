"""The actor's operational choices come from what its adapter declares, and its pauses between polls are taken
through the injected clock."""

from __future__ import annotations

from pathlib import Path

from tests.support.fakes import ManualClock
from tests.support.orchestration import Orchestration
from videogen_common.store import Store
from videogen_orchestrator.providers.base import AdapterDefaults, Job, Output, TaskState, TaskStatus


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


async def test_every_pause_between_polls_is_taken_through_the_clock(
    store: Store, base_env: dict[str, str], tmp_path: Path
) -> None:
    clock = ManualClock()
    orchestration = Orchestration(store, base_env, tmp_path / "media", clock=clock)  # polls 10 ms apart
    final = await orchestration.run_actor(SlowProvider(polls=3))
    assert final["status"] == "completed"
    assert clock.slept == [0.01, 0.01]  # one pause after each poll that found the task running


async def test_an_adapter_that_declares_no_payment_is_not_marked_before_its_submit(
    store: Store, base_env: dict[str, str], tmp_path: Path
) -> None:
    class FreeProvider(SlowProvider):
        pays_per_submit = False

    paid = await Orchestration(store, base_env, tmp_path / "media").run_actor(SlowProvider(polls=1))
    free = await Orchestration(store, base_env, tmp_path / "media").run_actor(FreeProvider(polls=1))
    assert paid["status"] == free["status"] == "completed"
    assert paid.get("submit_started_at") is not None
    assert free.get("submit_started_at") is None
