"""Routing, as pure functions: which providers a generation may go to and in what order (``order``), whether
one not yet at its provider should move to a later candidate before it is submitted (``recheck``), and
whether a failed attempt may move on to the next candidate (``may_fall_back``). What they decide from is
given to them (``ProviderState``: a provider's breaker, free capacity, price for this request and measured
time to finish); the api and the orchestrator read those from the store. Table tests:
tests/unit/test_routing.py.

The order (docs/providers.md, "Routing"):

- ``"auto"`` ranks by health (a closed breaker, or a half-open one whose probe is free: the next generation
  there is its probe; then half-open with a probe out; then open), then free capacity (some before none),
  then the price of this request, then the p50 time to finish (unknown after known), then the name.
  ``sort: price`` puts price before capacity; ``sort: speed`` puts the p50 time before price.
- An explicit provider and its fallbacks keep their order, but an open breaker moves a candidate last.

A generation moves to a later candidate only: it is never at a provider twice, nor at two at once."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from videogen_common.failures import ErrorCode, GenerationError

AUTO = "auto"


class Breaker(StrEnum):
    """A provider's (or key's) breaker: ``closed`` takes work; ``open`` takes none until its cool-down ends;
    ``half_open`` takes one probe at a time, and closes on its success."""

    CLOSED = "closed"
    HALF_OPEN = "half_open"
    OPEN = "open"


class Sort(StrEnum):
    PRICE = "price"
    SPEED = "speed"


class TaskMade(StrEnum):
    """What a failed attempt left at its provider: no task (proven: never connected, or a refusal the
    provider answered), a task it accepted, or unknown (the submit may or may not have made one)."""

    NONE = "none"
    MADE = "made"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class ProviderState:
    """What routing knows of a provider now. ``room``: generations it may start now (None: no limit of ours);
    ``price``: USD for this request (None: unknown); ``p50``: median seconds to finish (None: not measured);
    ``probe_free``: while half-open, whether no probe is out."""

    provider: str
    breaker: Breaker = Breaker.CLOSED
    probe_free: bool = True
    room: int | None = None
    price: float | None = None
    p50: float | None = None

    @property
    def usable(self) -> bool:
        """Whether a generation may go there now: closed, or half-open with its probe free."""
        return self.breaker is Breaker.CLOSED or (self.breaker is Breaker.HALF_OPEN and self.probe_free)

    @property
    def has_room(self) -> bool:
        return self.room is None or self.room > 0

    def health_rank(self) -> int:
        if self.usable:
            return 0
        return 1 if self.breaker is Breaker.HALF_OPEN else 2

    def health(self) -> str:
        if self.breaker is Breaker.CLOSED:
            return "healthy"
        if self.breaker is Breaker.OPEN:
            return "breaker open"
        return "half-open, probe free" if self.probe_free else "half-open, probe out"

    def describe(self) -> str:
        room = (
            "no limit" if self.room is None else f"{self.room} free" if self.room > 0 else "no free capacity"
        )
        price = "price unknown" if self.price is None else f"${self.price:.4f}"
        p50 = "p50 not measured" if self.p50 is None else f"p50 {self.p50:.0f} s"
        return f"{self.health()}, {room}, {price}, {p50}"


@dataclass(frozen=True, slots=True)
class Candidate:
    provider: str
    reason: str
    # The model asked of it (``videogen_common.catalogue``); None: its provider's default.
    model: str | None = None

    def to_doc(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"provider": self.provider, "reason": self.reason}
        if self.model is not None:
            doc["model"] = self.model
        return doc


def _state(states: Mapping[str, ProviderState], provider: str) -> ProviderState:
    return states.get(provider) or ProviderState(provider)


def _unknown_last(value: float | None) -> float:
    return math.inf if value is None else value


def order(
    providers: Sequence[str],
    states: Mapping[str, ProviderState],
    *,
    auto: bool,
    sort: Sort | None = None,
) -> list[Candidate]:
    """The candidates in the order they are tried, each with why it is where it is. ``providers``: the ones
    that can make the request and are enabled, in the request's order (its provider, then its fallbacks)."""
    if not auto:
        kept = [p for p in providers if _state(states, p).breaker is not Breaker.OPEN]
        moved = [p for p in providers if _state(states, p).breaker is Breaker.OPEN]
        candidates = []
        for provider in [*kept, *moved]:
            place = "as requested" if provider == providers[0] else f"fallback {providers.index(provider)}"
            why = "breaker open: tried last" if provider in moved else place
            candidates.append(Candidate(provider, f"{why} ({_state(states, provider).describe()})"))
        return candidates

    def key(provider: str) -> tuple[Any, ...]:
        s = _state(states, provider)
        health, room = s.health_rank(), 0 if s.has_room else 1
        price, p50 = _unknown_last(s.price), _unknown_last(s.p50)
        if sort is Sort.PRICE:
            return health, price, room, p50, provider
        if sort is Sort.SPEED:
            return health, room, p50, price, provider
        return health, room, price, p50, provider

    ranked = sorted(providers, key=key)
    by = {Sort.PRICE: "price", Sort.SPEED: "speed"}.get(sort, "default") if sort else "default"
    return [
        Candidate(p, f"auto, {by} order, #{rank}: {_state(states, p).describe()}")
        for rank, p in enumerate(ranked, start=1)
    ]


@dataclass(frozen=True, slots=True)
class Move:
    """Move the generation to ``to``, because ``why``."""

    to: str
    why: str


def later(candidates: Sequence[str], current: str) -> list[str]:
    """The candidates after ``current`` (all of them if it is not one)."""
    return list(candidates[candidates.index(current) + 1 :]) if current in candidates else list(candidates)


def recheck(candidates: Sequence[str], current: str, states: Mapping[str, ProviderState]) -> Move | None:
    """At admission, for a generation not yet at a provider: move on if its current candidate's breaker is
    open (to the first later usable one with room, else the first later usable one), or if it has no room
    while a later usable candidate has some. Otherwise it stays (and waits in its current one's line if it
    must): so also when no later candidate is usable."""
    here = _state(states, current)
    usable = [p for p in later(candidates, current) if _state(states, p).usable]
    with_room = [p for p in usable if _state(states, p).has_room]
    if not here.usable:
        targets = with_room or usable
        return Move(targets[0], f"{current}: {here.health()}") if targets else None
    if not here.has_room and with_room:
        return Move(with_room[0], f"{current}: no free capacity; {with_room[0]} has some")
    return None


def next_candidate(
    candidates: Sequence[str], current: str, states: Mapping[str, ProviderState]
) -> str | None:
    """Where a failed attempt goes next: the first later candidate that is usable, else the next one."""
    after = later(candidates, current)
    usable = [p for p in after if _state(states, p).usable]
    choices = usable or after
    return choices[0] if choices else None


# Failures of a provider's own: what its breaker counts (a refused prompt or a client's deadline are not).
PROVIDER_FAILURES = frozenset(
    {ErrorCode.PROVIDER_UNAVAILABLE, ErrorCode.PROVIDER_ERROR, ErrorCode.PROVIDER_TIMEOUT}
)


def is_provider_failure(error: GenerationError) -> bool:
    """Whether a failed attempt counts against the provider's health."""
    if error.code not in PROVIDER_FAILURES:
        return False
    return error.code != ErrorCode.PROVIDER_ERROR or error.retriable


def may_fall_back(error: GenerationError, task: TaskMade, *, fallback_on_failure: bool) -> bool:
    """Whether a failed attempt may move on to the next candidate without paying twice:

    - no task was made (proven) and the provider could not take it (unreachable, 5xx, credentials): yes;
    - the provider accepted a task and failed it with a retriable error of its own: only if the client
      allowed it (``fallback_on_failure``);
    - whether a task was made is unknown: never (it may be running, and paid for)."""
    if task is TaskMade.UNKNOWN:
        return False
    if task is TaskMade.NONE:
        return error.code == ErrorCode.PROVIDER_UNAVAILABLE
    return fallback_on_failure and error.retriable and is_provider_failure(error)
