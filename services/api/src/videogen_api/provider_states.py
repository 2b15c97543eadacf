"""What the api reads of the providers for routing at creation and for ``GET /v1/providers``: each key's pool
(its capacity, and the model and resolution the orchestrator uses it for) and its health (breaker, recent
outcomes), from the store, cached per replica for ``provider_state_cache_seconds`` (one read at a time: the
requests arriving meanwhile share it)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from videogen_common.capabilities import CAPABILITIES
from videogen_common.clock import Clock
from videogen_common.domain import Provider
from videogen_common.pricing import DEFAULT_MODELS, PriceTable
from videogen_common.records.admission import ProviderPool
from videogen_common.records.health import Health, PoolHealth, health_of, provider_state
from videogen_common.repositories.provider_health import ProviderHealthRepository
from videogen_common.repositories.provider_pools import ProviderPoolRepository
from videogen_common.routing import ProviderState
from videogen_common.store import Store


@dataclass(frozen=True)
class Snapshot:
    """The providers' pools and health as read at ``at``."""

    at: datetime
    pools: dict[str, list[ProviderPool]]
    health: dict[str, list[PoolHealth]]
    # Each provider's default model in the deployment's catalogue (until an orchestrator says otherwise).
    defaults: Mapping[str, str] = field(default_factory=dict)

    def model_of(self, provider: str) -> str:
        """The model the deployment uses the provider for when a request names none: what its orchestrators
        say (their *_MODEL setting), else the catalogue's default."""
        models = [pool.model for pool in self.pools.get(provider, ()) if pool.model]
        if models:
            return models[0]
        return self.defaults.get(provider) or DEFAULT_MODELS[Provider(provider)]

    def resolution_of(self, provider: str) -> str:
        """The resolution the provider makes when a request does not say."""
        given = [pool.resolution for pool in self.pools.get(provider, ()) if pool.resolution]
        return given[0] if given else CAPABILITIES[Provider(provider)].default_resolution

    def estimate(
        self,
        prices: PriceTable,
        provider: str,
        resolution: str | None,
        duration: int,
        model: str | None = None,
    ) -> float | None:
        """What the provider charges for a request of ``duration`` s of ``model`` (None: the default one) at
        ``resolution`` (None: its default)."""
        return prices.estimate(
            provider, model or self.model_of(provider), resolution or self.resolution_of(provider), duration
        )

    def state(self, provider: str, price: float | None) -> ProviderState:
        """What routing knows of the provider now, with ``price`` for the request at hand."""
        return provider_state(
            provider, self.pools.get(provider, []), self.health.get(provider, []), self.at, price
        )

    def health_of(self, provider: str) -> Health:
        return health_of(self.health.get(provider, []), self.at)


class ProviderStates:
    def __init__(
        self,
        store: Store,
        clock: Clock,
        ttl_seconds: float,
        monotonic: Callable[[], float] = time.monotonic,
        defaults: Mapping[str, str] | None = None,
    ) -> None:
        self._defaults = dict(defaults or {})
        self._pools = ProviderPoolRepository(store)
        self._health = ProviderHealthRepository(store)
        self._clock = clock
        self._ttl = ttl_seconds
        self._monotonic = monotonic
        self._cached: tuple[Snapshot, float] | None = None
        self._reading: asyncio.Future[Snapshot] | None = None

    async def snapshot(self) -> Snapshot:
        cached = self._cached
        if cached is not None and cached[1] > self._monotonic():
            return cached[0]
        if self._reading is None:
            reading = asyncio.ensure_future(self._read())
            reading.add_done_callback(self._read_done)
            self._reading = reading
        return await asyncio.shield(self._reading)

    def _read_done(self, reading: asyncio.Future[Snapshot]) -> None:
        """A read that ended, even one every caller stopped waiting for, is not handed to the next caller;
        its failure was each waiter's, and is not left for the loop to log as never retrieved."""
        if self._reading is reading:
            self._reading = None
        if not reading.cancelled():
            reading.exception()

    async def _read(self) -> Snapshot:
        pools: dict[str, list[ProviderPool]] = {}
        for pool in await self._pools.everything(running=False):  # routing needs room, not who runs
            pools.setdefault(pool.provider, []).append(pool)
        health: dict[str, list[PoolHealth]] = {}
        for key in await self._health.everything():
            health.setdefault(key.provider, []).append(key)
        snapshot = Snapshot(self._clock.now(), pools, health, self._defaults)
        self._cached = (snapshot, self._monotonic() + self._ttl)
        return snapshot
