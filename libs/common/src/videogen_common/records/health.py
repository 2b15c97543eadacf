"""A provider key's health as kept in the store (collection ``provider_health``, one document per pool): its
breaker, and its recent outcomes and times to finish, bounded. The orchestrator writes it at the end of each
attempt (``repositories.provider_health``); the api reads it to route and to show ``GET /v1/providers``."""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from videogen_common.records.admission import UNLIMITED_ROOM, ProviderPool
from videogen_common.routing import Breaker, ProviderState

# What GET /v1/providers says of a provider's health (``Health.state``): the one list of them.
OPERATIONAL, DEGRADED, DOWN = "operational", "degraded", "down"
HEALTH_STATES = (OPERATIONAL, DEGRADED, DOWN)
# Below this recent success rate (with enough samples) a provider shows as degraded.
DEGRADED_SUCCESS_RATE = 0.8
MIN_SAMPLES = 5


@dataclass(frozen=True, slots=True)
class PoolHealth:
    """One key's breaker: ``failures`` in a row; open until ``opened_until`` (then half-open: one probe at a
    time, ``probe`` holding it until ``probe_until``); ``outcomes`` (True: success) and ``seconds`` (time to
    finish of the successes) are the most recent few, oldest first."""

    id: str
    provider: str
    failures: int = 0
    opened_until: datetime | None = None
    probe: str | None = None
    probe_until: datetime | None = None
    outcomes: tuple[bool, ...] = ()
    seconds: tuple[float, ...] = ()

    def breaker(self, now: datetime) -> Breaker:
        if self.opened_until is None:
            return Breaker.CLOSED
        return Breaker.OPEN if now < self.opened_until else Breaker.HALF_OPEN

    def probe_free(self, now: datetime) -> bool:
        return self.probe_until is None or self.probe_until <= now

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any]) -> PoolHealth:
        return cls(
            id=doc["_id"],
            provider=doc["provider"],
            failures=doc.get("failures", 0),
            opened_until=doc.get("opened_until"),
            probe=doc.get("probe"),
            probe_until=doc.get("probe_until"),
            outcomes=tuple(bool(o) for o in doc.get("outcomes") or ()),
            seconds=tuple(float(s) for s in doc.get("seconds") or ()),
        )


def provider_breaker(pools: Iterable[PoolHealth], now: datetime) -> tuple[Breaker, bool]:
    """A provider's breaker from its keys': closed if any key is (or it has none on record), else half-open
    if any is (with a probe free if any of those has one), else open."""
    pools = list(pools)
    states = [pool.breaker(now) for pool in pools]
    if not pools or Breaker.CLOSED in states:
        return Breaker.CLOSED, True
    half = [pool for pool, state in zip(pools, states, strict=True) if state is Breaker.HALF_OPEN]
    if half:
        return Breaker.HALF_OPEN, any(pool.probe_free(now) for pool in half)
    return Breaker.OPEN, False


@dataclass(frozen=True, slots=True)
class Health:
    """What ``GET /v1/providers`` says of a provider's health: ``state`` (operational, degraded, down), its
    breaker, the recent success rate and p50 time to finish (None: no samples)."""

    state: str
    breaker: Breaker
    success_rate: float | None
    p50_seconds: float | None
    samples: int

    def public(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "breaker": self.breaker.value,
            "success_rate": self.success_rate,
            "p50_seconds": self.p50_seconds,
            "samples": self.samples,
        }


def health_of(pools: Iterable[PoolHealth], now: datetime) -> Health:
    """A provider's health: ``down`` while its breaker is open (every key's), ``degraded`` while it is
    half-open, some key's is not closed, or its recent success rate is below 80%; else ``operational``."""
    pools = list(pools)
    breaker, _ = provider_breaker(pools, now)
    outcomes = [o for pool in pools for o in pool.outcomes]
    rate = round(sum(outcomes) / len(outcomes), 4) if outcomes else None
    p50 = p50_of(pools)
    if breaker is Breaker.OPEN:
        state = DOWN
    elif (
        breaker is Breaker.HALF_OPEN
        or any(pool.breaker(now) is not Breaker.CLOSED for pool in pools)
        or (rate is not None and len(outcomes) >= MIN_SAMPLES and rate < DEGRADED_SUCCESS_RATE)
    ):
        state = DEGRADED
    else:
        state = OPERATIONAL
    return Health(state, breaker, rate, p50, len(outcomes))


def p50_of(pools: Iterable[PoolHealth]) -> float | None:
    seconds = [s for pool in pools for s in pool.seconds]
    return round(statistics.median(seconds), 3) if seconds else None


def provider_state(
    provider: str,
    pools: Iterable[ProviderPool],
    health: Iterable[PoolHealth],
    now: datetime,
    price: float | None = None,
) -> ProviderState:
    """What routing knows of a provider now, from its keys' pools and health: its breaker, its free capacity
    on the keys whose breaker is not open (None: no pool on record, or no limit of ours), its p50 time to
    finish, and ``price`` for the request at hand."""
    pools, health = list(pools), list(health)
    breaker, probe_free = provider_breaker(health, now)
    open_keys = {h.id for h in health if h.breaker(now) is Breaker.OPEN}
    room: int | None = None
    if pools:
        total = sum(pool.room(now) for pool in pools if pool.id not in open_keys)
        room = None if total >= UNLIMITED_ROOM else total
    return ProviderState(provider, breaker, probe_free, room, price, p50_of(health))
