"""Each provider key's health, for routing: its breaker and recent outcomes in the store
(``repositories.provider_health``, shared by every replica). The actor reports what a provider's answers say
(``record``: a task that succeeded, or a failure through the provider's own fault);
``provider_breaker_failures`` such failures in a row open the key's breaker for
``provider_breaker_cooldown_seconds``, after which it is half-open: one routed generation at a time may go
there as its probe (``take_probe``, a leased slot), and the key closes when a task succeeds on it (a probe's,
or any other's). A provider's breaker is its keys' together (``records.health.provider_breaker``)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta

from videogen_common.clock import Clock
from videogen_common.failures import GenerationError
from videogen_common.records.generation import GenerationRecord
from videogen_common.records.health import PoolHealth
from videogen_common.repositories.provider_health import ProviderHealthRepository
from videogen_common.routing import Breaker
from videogen_common.store import Store

log = logging.getLogger(__name__)

# Told of each breaker transition this instance made: (provider, pool, the state it moved to).
TransitionObserver = Callable[[str, str, Breaker], None]


class Breakers:
    """The provider keys' breakers and recent outcomes, as this instance reports and reads them."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        *,
        failures: int = 5,
        cooldown_seconds: float = 30.0,
        probe_seconds: float = 300.0,
        window: int = 50,
        on_transition: TransitionObserver | None = None,
    ) -> None:
        self._repository = ProviderHealthRepository(store)
        self._clock = clock
        self._failures = failures
        self._cooldown = timedelta(seconds=cooldown_seconds)
        self._probe = timedelta(seconds=probe_seconds)
        self._window = window
        self._on_transition = on_transition

    async def record(
        self, record: GenerationRecord, error: GenerationError | None, seconds: float | None = None
    ) -> None:
        """The generation's task succeeded at its provider's key (``error`` None), or the provider failed
        it there through its own fault."""
        pool = record.provider_pool or record.provider
        now = self._clock.now()
        if error is None:
            before = await self._repository.succeeded(
                pool, record.provider, seconds, now, window=self._window
            )
            if before is not Breaker.CLOSED:
                self._moved(record.provider, pool, Breaker.CLOSED)
            return
        before, after = await self._repository.failed(
            pool, record.provider, now, threshold=self._failures, cooldown=self._cooldown, window=self._window
        )
        if after is Breaker.OPEN and before is not Breaker.OPEN:
            self._moved(record.provider, pool, Breaker.OPEN)

    async def of(self, providers: list[str]) -> dict[str, list[PoolHealth]]:
        """The keys' health of each of these providers (those on record)."""
        by_provider: dict[str, list[PoolHealth]] = {p: [] for p in providers}
        for pool in await self._repository.of_providers(providers):
            by_provider.setdefault(pool.provider, []).append(pool)
        return by_provider

    async def take_probe(self, pool: str, provider: str, generation_id: str) -> bool:
        """The probe of the half-open key ``pool`` for the generation; True if it holds it now."""
        taken = await self._repository.take_probe(pool, generation_id, self._clock.now(), self._probe)
        if taken:
            self._moved(provider, pool, Breaker.HALF_OPEN)
        return taken

    async def release_probe(self, pool: str | None, generation_id: str) -> None:
        """A probe that ended without an answer from the provider (its generation moved on, was lost, or was
        refused for capacity) frees its slot for the next."""
        if pool is not None:
            await self._repository.release_probe(pool, generation_id)

    def _moved(self, provider: str, pool: str, to: Breaker) -> None:
        log.warning(
            "a provider key's breaker changed",
            extra={"provider": provider, "pool": pool, "breaker": to.value},
        )
        if self._on_transition is not None:
            self._on_transition(provider, pool, to)
