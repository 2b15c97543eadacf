"""What an actor's work comes to. Inside the actor, each ending is an ``Outcome``: ``Completed`` (the video's
bytes, to store) or ``Failed`` (the error to record); ``GenerationActor.run`` answers with a ``RunResult``:
``Finished`` (the actor wrote the terminal state) or ``Lost`` (someone else moved the generation first)."""

from __future__ import annotations

from dataclasses import dataclass

from videogen_common.failures import GenerationError
from videogen_common.records.generation import GenerationRecord


@dataclass(frozen=True, slots=True)
class Completed:
    """The provider made the video: its bytes (and the thumbnail's, if the provider gave one)."""

    video: bytes
    thumbnail: bytes | None = None


@dataclass(frozen=True, slots=True)
class Failed:
    """The generation fails with ``error`` (the provider's, or the orchestrator's own reason)."""

    error: GenerationError


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


# What ``GenerationActor.run`` answers.
RunResult = Finished | Lost
