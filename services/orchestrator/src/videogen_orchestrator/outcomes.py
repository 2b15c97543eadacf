"""What an actor's work comes to. Inside the actor, each ending is an ``Outcome``: ``Completed`` (the video's
bytes, to store) or ``Failed`` (the error to record); ``GenerationActor.run`` answers with a ``RunResult``:
``Finished`` (the actor wrote the terminal state), ``Lost`` (someone else moved the generation first),
``Refused`` (the provider refused the submit for capacity: no task was made, and the generation waits
again) or ``Failover`` (the attempt failed in a way that lets the generation move on to its next candidate:
the runner moves it, as a new attempt)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from videogen_common.failures import ErrorCode, GenerationError
from videogen_common.records.generation import GenerationRecord
from videogen_common.routing import TaskMade

Doc = dict[str, Any]
log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Completed:
    """The provider made the video: its bytes (and the thumbnail's, if the provider gave one)."""

    video: bytes
    thumbnail: bytes | None = None


@dataclass(frozen=True, slots=True)
class Failed:
    """The generation fails with ``error`` (the provider's, or the orchestrator's own reason).
    ``at_provider``: when the provider failed it (its submit, or its task), what was left there
    (``TaskMade``); None for the orchestrator's own reasons (a deadline, an unusable first frame), which never
    move it elsewhere."""

    error: GenerationError
    at_provider: TaskMade | None = None


# How a generation ends, as the actor decides it.
Outcome = Completed | Failed


@dataclass(frozen=True, slots=True)
class Finished:
    """This actor moved the generation to its terminal state: ``record`` as written."""

    record: GenerationRecord


@dataclass(frozen=True, slots=True)
class Lost:
    """Someone else moved the generation (its client canceled it, or another instance took it over): this
    actor wrote no terminal state."""


@dataclass(frozen=True, slots=True)
class Refused:
    """The provider refused to start the task for capacity (429 at submit), so no task was made: the
    generation, as it stands (``record``, still leased), goes back in line. ``retry_after``: the provider's
    Retry-After in seconds, if it gave one."""

    record: GenerationRecord
    retry_after: float | None = None
    # The try that was refused, as it ended (``videogen_common.attempts``), if the generation moves on.
    attempt: Doc | None = None


@dataclass(frozen=True, slots=True)
class Failover:
    """The attempt failed and the generation may move on to its next candidate (``routing.may_fall_back``):
    no terminal state was written, and no task of it is left at the provider (none was made, or the provider
    failed it). ``record``: the generation, still leased; ``attempt``: the try as it ended."""

    record: GenerationRecord
    error: GenerationError
    attempt: Doc | None


# What ``GenerationActor.run`` answers.
RunResult = Finished | Lost | Refused | Failover


@dataclass(frozen=True, slots=True)
class PollAgain:
    """(Inside the actor.) Not finished yet: poll again, holding ``record``; ``pause`` first unless the poll
    was cut short by the client's deadline (then the deadline is looked at at once). ``unanswered``: the read
    failed for now, so the next comes at the polling cadence even where callbacks would otherwise wake it (a
    wake-up already spent on the failed read will not come again)."""

    record: GenerationRecord
    pause: bool = True
    unanswered: bool = False


class LeaseLost(Exception):
    """Another instance owns this generation now; this actor must stop touching it."""


# The orchestrator's own reasons for a failure at a provider.
NO_REASON = GenerationError(ErrorCode.PROVIDER_ERROR, "the provider reported failure without a reason")


def interrupted_submit(provider: str) -> GenerationError:
    """An earlier attempt's submit was interrupted: whether it made a task is unknown."""
    return GenerationError(
        ErrorCode.PROVIDER_UNAVAILABLE,
        f"an earlier attempt stopped while submitting to {provider}; whether a task was started is unknown, "
        "so it is not submitted again (never paid for twice)",
        retriable=True,
    )


def not_configured(provider: str) -> GenerationError:
    """The generation's provider has no adapter here."""
    return GenerationError(ErrorCode.PROVIDER_UNAVAILABLE, f"provider {provider!r} is not configured")


# How the actor tells its peers of a generation's news.
# Told of every generation this actor finishes (the metrics count them).
FinishedObserver = Callable[[GenerationRecord], None]


class TaskEvent(StrEnum):
    """What the actor tells admission about a generation's task at the provider."""

    # It is about to be submitted (marked so where a submit is paid for): the provider is one task fuller.
    SUBMITTING = "submitting"
    # The provider accepted it (a lowered limit may climb back).
    ACCEPTED = "accepted"
    # It ended at the provider (its slot there is free, before the media is copied).
    ENDED = "ended"


TaskObserver = Callable[[GenerationRecord, TaskEvent], Awaitable[None]]
# Told what a provider's answer says of its health: the generation's task succeeded there (error None,
# ``seconds`` after it was accepted), or the provider failed it (its submit or its task) by its own fault.
HealthObserver = Callable[[GenerationRecord, GenerationError | None, float | None], Awaitable[None]]


async def told(news: Awaitable[None], what: str, record: GenerationRecord) -> None:
    """Tell a peer the generation's news: its failure to take it in is logged, and the run goes on."""
    try:
        await news
    except Exception:
        log.exception(f"could not note {what}", extra={"generation_id": record.id})
