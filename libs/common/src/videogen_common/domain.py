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


class Priority(StrEnum):
    """How soon a generation starts among its own account's waiting work at one provider (it does not
    reorder other accounts' work: a freed slot goes to the account with the fewest running first)."""

    HIGH = "high"
    NORMAL = "normal"
    LOW = "low"

    @property
    def rank(self) -> int:
        """0 for ``high``: ranks sort the way the work is started."""
        return _PRIORITY_RANK[self]


_PRIORITY_RANK = {Priority.HIGH: 0, Priority.NORMAL: 1, Priority.LOW: 2}


MIN_DURATION_S = 3
MAX_DURATION_S = 10
