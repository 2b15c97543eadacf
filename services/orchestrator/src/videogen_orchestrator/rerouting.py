"""Moving a generation to a later candidate of its route (``videogen_common.routing``), always as a new
attempt and before anything is submitted there: never at two providers at once, never twice at one.

- ``recheck``, at admission, for a routed generation not yet at a provider: off a candidate whose breaker is
  open (or half-open with its probe out), or without room while a later usable candidate has some; a
  half-open candidate it stays at takes the generation as its probe. It answers the keys of its provider the
  generation may use (``None``: any).
- ``may_move_on`` decides, when an attempt failed at a provider, whether the generation moves on (the
  actor answers ``Failover``, writing nothing) rather than end; ``fall_back`` then moves it to the next
  usable candidate, and ``move`` (after a capacity refusal, when a later candidate has room) to that
  candidate, the try that ended kept on the generation either way.

Each move is a compare-and-set under the generation's lease that forgets the old provider's key, place in
line, submit mark, plan and task id (``WaitingRepository.move_provider``)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from videogen_common.clock import Clock
from videogen_common.failures import GenerationError
from videogen_common.records.admission import ProviderPool
from videogen_common.records.generation import GenerationRecord
from videogen_common.records.health import PoolHealth, provider_state
from videogen_common.repositories.provider_pools import ProviderPoolRepository
from videogen_common.repositories.waiting import WaitingRepository
from videogen_common.routing import (
    Breaker,
    ProviderState,
    TaskMade,
    later,
    may_fall_back,
    next_candidate,
    recheck,
)
from videogen_common.store import Store
from videogen_orchestrator.health import Breakers

log = logging.getLogger(__name__)

Doc = dict[str, Any]

# Told of each move: (from provider, to provider, why: breaker, capacity, failed, refused).
MoveObserver = Callable[[str, str, str], None]


@dataclass(frozen=True, slots=True)
class Placement:
    """Where a claimed generation is to be admitted: ``record`` (moved on, maybe), the keys of its provider it
    must not take a slot on (their breaker is not closed), and the half-open key whose probe it holds, if it
    does (then that key only)."""

    record: GenerationRecord
    excluded: frozenset[str] = frozenset()
    probe: str | None = None

    def usable(self, pool: str) -> bool:
        return pool == self.probe if self.probe is not None else pool not in self.excluded


def candidates_of(record: GenerationRecord) -> list[str]:
    return [c["provider"] for c in (record.route or {}).get("candidates") or ()]


def routed(record: GenerationRecord) -> bool:
    """Whether the generation has somewhere else to go: a route with more than one candidate."""
    return len(candidates_of(record)) > 1


def may_move_on(record: GenerationRecord, error: GenerationError, at_provider: TaskMade | None) -> bool:
    """Whether an attempt that failed with ``error`` moves the generation on to its next candidate rather
    than end it: the provider failed it (``at_provider``: what was left there; None for the orchestrator's
    own reasons, which never move it), its route allows falling back from such a failure
    (``routing.may_fall_back``), and a later candidate remains."""
    if at_provider is None:
        return False
    route = record.route or {}
    allowed = may_fall_back(
        error, at_provider, fallback_on_failure=bool(route.get("fallback_on_failure", False))
    )
    return allowed and bool(later(candidates_of(record), record.provider))


class Rerouting:
    def __init__(
        self, store: Store, clock: Clock, health: Breakers, on_move: MoveObserver | None = None
    ) -> None:
        self._waiting = WaitingRepository(store)
        self._pools = ProviderPoolRepository(store)
        self._clock = clock
        self._health = health
        self._on_move = on_move

    async def _read(
        self, providers: list[str]
    ) -> tuple[dict[str, list[ProviderPool]], dict[str, list[PoolHealth]]]:
        pools: dict[str, list[ProviderPool]] = {p: [] for p in providers}
        for pool in await self._pools.of_providers(providers):
            pools.setdefault(pool.provider, []).append(pool)
        return pools, await self._health.of(providers)

    async def states(self, providers: list[str]) -> dict[str, ProviderState]:
        """What routing needs of these providers now: each one's breaker and free capacity (on the keys that
        are not open)."""
        pools, health = await self._read(providers)
        return {p: self._state(p, pools[p], health.get(p, []))[0] for p in providers}

    def _state(
        self, provider: str, pools: list[ProviderPool], health: list[PoolHealth]
    ) -> tuple[ProviderState, dict[str, Breaker]]:
        """The provider's state for routing, and each of its keys' breakers."""
        now = self._clock.now()
        return provider_state(provider, pools, health, now), {h.id: h.breaker(now) for h in health}

    async def recheck(self, record: GenerationRecord) -> Placement | None:
        """Where the generation is to be admitted, moved on if its route calls for it; None if it moved
        meanwhile (canceled)."""
        if not routed(record) or record.provider_task_id is not None or record.charged:
            return Placement(record)
        candidates = candidates_of(record)
        for _ in range(len(candidates)):
            providers = [record.provider, *later(candidates, record.provider)]
            pools, health = await self._read(providers)
            states, breakers = {}, {}
            for provider in providers:
                states[provider], breakers[provider] = self._state(
                    provider, pools[provider], health[provider]
                )
            here, keys = states[record.provider], breakers[record.provider]
            excluded: frozenset[str] = frozenset()
            if here.breaker is Breaker.HALF_OPEN and here.probe_free:
                probe = await self._probe(record, keys)
                if probe is not None:
                    return Placement(record, probe=probe)
                states[record.provider] = replace(here, probe_free=False)
            elif here.breaker is Breaker.CLOSED:
                # Any of its keys but those whose breaker is not closed.
                excluded = frozenset(p for p, state in keys.items() if state is not Breaker.CLOSED)
            move = recheck(candidates, record.provider, states)
            if move is None:
                return Placement(record, excluded)
            why = "breaker" if not states[record.provider].usable else "capacity"
            reason = f"moved to {move.to} before submitting: {move.why}"
            moved = await self.move(record, move.to, reason=reason, why=why)
            if moved is None:
                return None
            record = moved
        return Placement(record)

    async def _probe(self, record: GenerationRecord, breakers: dict[str, Breaker]) -> str | None:
        """The probe of one of the provider's half-open keys for the generation: that key, if it got one."""
        for pool, state in sorted(breakers.items()):
            if state is Breaker.HALF_OPEN and await self._health.take_probe(pool, record.provider, record.id):
                log.info(
                    "the generation probes a half-open key", extra={"generation_id": record.id, "pool": pool}
                )
                return pool
        return None

    async def room_elsewhere(self, record: GenerationRecord) -> str | None:
        """A later usable candidate with room now, if the generation has one (after a capacity refusal)."""
        if not routed(record):
            return None
        after = later(candidates_of(record), record.provider)
        if not after:
            return None
        states = await self.states(after)
        return next((p for p in after if states[p].usable and states[p].has_room), None)

    async def fall_back(
        self, record: GenerationRecord, error: GenerationError, attempt: Doc | None
    ) -> GenerationRecord | None:
        """Move a generation whose attempt failed (``Failover``) on to its next usable candidate."""
        after = later(candidates_of(record), record.provider)
        to = next_candidate(candidates_of(record), record.provider, await self.states(after))
        if to is None:  # pragma: no cover - may_move_on checked that there is a later candidate
            return None
        reason = f"moved on to {to} after {record.provider} failed ({error.code})"
        return await self.move(record, to, reason=reason, why="failed", attempt=attempt)

    async def move(
        self, record: GenerationRecord, to: str, *, reason: str, why: str, attempt: Doc | None = None
    ) -> GenerationRecord | None:
        """Move the generation to the candidate ``to`` (a compare-and-set under its lease)."""
        moved = await self._waiting.move_provider(
            record, to, reason=reason, now=self._clock.now(), attempt=attempt
        )
        if moved is None:
            return None
        log.info(
            "the generation moves to another provider",
            extra={"generation_id": record.id, "from": record.provider, "to": to, "reason": reason},
        )
        if self._on_move is not None:
            self._on_move(record.provider, to, why)
        return moved
