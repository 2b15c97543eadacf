"""What every provider adapter offers the actor: submit once, then poll until a terminal state."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class Job:
    generation_id: str
    prompt: str
    duration: int


class TaskStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class GenerationError:
    """The stable error taxonomy clients see in ``generation.error``."""

    code: str
    message: str
    provider_code: str | None = None
    retriable: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "message": self.message,
            "provider_code": self.provider_code,
            "retriable": self.retriable,
        }


@dataclass(frozen=True, slots=True)
class Output:
    video: bytes
    thumbnail: bytes | None


@dataclass(frozen=True, slots=True)
class TaskState:
    status: TaskStatus
    output: Output | None = None
    error: GenerationError | None = None
    details: dict[str, Any] = field(default_factory=dict)


class ProviderAdapter(Protocol):
    name: str

    async def submit(self, job: Job) -> str:
        """Start the provider's task and return its id. Called at most once per generation: the id is saved
        before the first poll, so a restarted orchestrator resumes polling instead of paying twice."""
        ...

    async def poll(self, task_id: str, job: Job) -> TaskState: ...
