"""Generations, providers and the rules for moving between states (the event types are
``videogen_common.event_types``)."""

from __future__ import annotations

from enum import StrEnum


class Status(StrEnum):
    QUEUED = "queued"
    PROCESSING = "processing"
    COMPLETED = "completed"
    FAILED = "failed"

    @property
    def terminal(self) -> bool:
        return self in TERMINAL


TERMINAL: frozenset[Status] = frozenset({Status.COMPLETED, Status.FAILED})

# queued ⇄ processing → completed | failed, and queued → failed. Terminal states are final.
TRANSITIONS: dict[Status, frozenset[Status]] = {
    Status.QUEUED: frozenset({Status.PROCESSING, Status.FAILED}),
    Status.PROCESSING: frozenset({Status.QUEUED, Status.COMPLETED, Status.FAILED}),
    Status.COMPLETED: frozenset(),
    Status.FAILED: frozenset(),
}


def can_transition(current: Status, target: Status) -> bool:
    return target in TRANSITIONS[current]


def sources_of(target: Status) -> frozenset[Status]:
    """States from which ``target`` may be entered."""
    return frozenset(s for s, targets in TRANSITIONS.items() if target in targets)


class Provider(StrEnum):
    MOCK = "mock"
    RUNWAY = "runway"
    LUMA = "luma"
    PIKA = "pika"


MIN_DURATION_S = 3
MAX_DURATION_S = 10
