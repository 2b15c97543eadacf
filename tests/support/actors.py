"""One generation driven to its end by the real ``GenerationActor``, over the real store, with the media store
and the provider a test chooses."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from tests.support.fakes import ManualClock, RecordingSink
from tests.support.generations import insert_generation, stored_generation
from videogen_common.media import MediaStore
from videogen_common.records.generation import GenerationRecord
from videogen_common.store import Store
from videogen_orchestrator.actor import GenerationActor
from videogen_orchestrator.providers.base import (
    AdapterDefaults,
    Job,
    Output,
    ProviderAdapter,
    TaskState,
    TaskStatus,
)
from videogen_orchestrator.settings import OrchestratorSettings


class FinishedProvider(AdapterDefaults):
    """Stands in for the ``mock`` provider: every task it is given has already finished with ``output``."""

    name = "mock"

    def __init__(self, output: Output) -> None:
        self.output = output

    async def submit(self, job: Job) -> str:
        return f"task_{job.generation_id}"

    async def poll(self, task_id: str, job: Job) -> TaskState:
        return TaskState(TaskStatus.SUCCEEDED, output=self.output)


async def run_generation(
    *,
    store: Store,
    settings: OrchestratorSettings,
    media: MediaStore,
    provider: ProviderAdapter,
    clock: ManualClock,
    duration: int = 3,
    **fields: Any,
) -> dict[str, Any]:
    """Insert a generation (with ``fields``) already leased to ``settings.orchestrator_instance`` (as the
    runner's claim would leave it), run its actor, and return the final document."""
    now = clock.now()
    doc = await insert_generation(
        store,
        now,
        duration=duration,
        lease_owner=settings.orchestrator_instance,
        lease_expires_at=now + timedelta(minutes=5),
        **fields,
    )
    actor = GenerationActor(
        settings=settings,
        store=store,
        media=media,
        providers={"mock": provider},
        sink=RecordingSink(),
        clock=clock,
    )
    await actor.run(GenerationRecord.from_doc(doc))
    return await stored_generation(store, doc["_id"])
