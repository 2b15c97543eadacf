"""Each provider key's health, for routing: its breaker and recent outcomes in the store
(``repositories.provider_health``, shared by every replica). The actor reports what a provider's answers say
(``record``: a task that succeeded, or a failure through the provider's own fault);
``provider_breaker_failures`` such failures in a row open the key's breaker for
``provider_breaker_cooldown_seconds``, after which it is half-open: one routed generation at a time may go
there as its probe (``take_probe``, a leased slot), and the key closes when a task succeeds on it (a probe's,
or any other's). A provider's breaker is its keys' together (``records.health.provider_breaker``).

Successes are gathered per key and written together at most ``flush_seconds`` after the first of them (one
write per key and interval rather than one per task); a failure is written at once, after the successes
gathered before it, and so is the success of a probe this instance holds (it closes its key at once). A
success written late closes no breaker that a failure seen after it counts toward
(``ProviderHealthRepository.succeeded``). A process killed loses at most ``flush_seconds`` of successes
from the recent outcomes; a graceful stop writes them (``close``)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

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


@dataclass(slots=True)
class _Successes:
    """A key's successes not yet written: how many, the times to finish of those that know theirs, and when
    the last one was seen."""

    provider: str
    last: datetime
    count: int = 0
    seconds: list[float] = field(default_factory=list)


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
        flush_seconds: float = 1.0,
        on_transition: TransitionObserver | None = None,
    ) -> None:
        self._repository = ProviderHealthRepository(store)
        self._clock = clock
        self._failures = failures
        self._cooldown = timedelta(seconds=cooldown_seconds)
        self._probe = timedelta(seconds=probe_seconds)
        self._window = window
        self._flush_seconds = flush_seconds
        self._on_transition = on_transition
        # Successes not yet written, by key; the task that writes them after ``flush_seconds``.
        self._successes: dict[str, _Successes] = {}
        self._flusher: asyncio.Task[None] | None = None
        # The probes this instance took and holds, by key.
        self._probes: dict[str, str] = {}

    async def record(
        self, record: GenerationRecord, error: GenerationError | None, seconds: float | None = None
    ) -> None:
        """The generation's task succeeded at its provider's key (``error`` None), or the provider failed
        it there through its own fault."""
        pool = record.provider_pool or record.provider
        now = self._clock.now()
        if error is None:
            gathered = self._successes.setdefault(pool, _Successes(record.provider, now))
            gathered.count += 1
            gathered.last = now
            if seconds is not None:
                gathered.seconds.append(seconds)
            probe = self._probes.get(pool) == record.id
            if probe:
                del self._probes[pool]
            if probe or self._flush_seconds <= 0:
                await self._write(pool)
            elif self._flusher is None or self._flusher.done():
                self._flusher = asyncio.create_task(self._flush_later(), name="health-flush")
            return
        await self._write(pool)  # the successes seen before this failure come first
        before, after = await self._repository.failed(
            pool, record.provider, now, threshold=self._failures, cooldown=self._cooldown, window=self._window
        )
        if after is Breaker.OPEN and before is not Breaker.OPEN:
            self._moved(record.provider, pool, Breaker.OPEN)

    async def _write(self, pool: str) -> None:
        """Write the key's gathered successes, if any (kept for the next write if the store fails)."""
        gathered = self._successes.pop(pool, None)
        if gathered is None:
            return
        try:
            before = await self._repository.succeeded(
                pool,
                gathered.provider,
                self._clock.now(),
                count=gathered.count,
                seconds=gathered.seconds,
                last=gathered.last,
                window=self._window,
            )
        except BaseException:
            later = self._successes.get(pool)
            if later is not None:  # more came meanwhile: one batch, the newest last
                gathered.count += later.count
                gathered.seconds.extend(later.seconds)
                gathered.last = later.last
            gathered.count = min(gathered.count, self._window)
            gathered.seconds = gathered.seconds[-self._window :]
            self._successes[pool] = gathered
            raise
        if before is not None and before is not Breaker.CLOSED:
            self._moved(gathered.provider, pool, Breaker.CLOSED)

    async def _flush_later(self) -> None:
        await self._clock.sleep(self._flush_seconds)
        try:
            await self.flush()
        except Exception:
            log.exception("could not write the providers' recent successes; trying again")
        if self._successes:  # the write failed, or more came while it was made
            self._flusher = asyncio.create_task(self._flush_later(), name="health-flush")

    async def flush(self) -> None:
        """Write every key's gathered successes now."""
        for pool in list(self._successes):
            await self._write(pool)

    async def close(self) -> None:
        """Stop the timed writes and write what is gathered (a graceful stop loses no success)."""
        if self._flusher is not None:
            self._flusher.cancel()
            with contextlib.suppress(BaseException):
                await self._flusher
            self._flusher = None
        await self.flush()

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
            self._probes[pool] = generation_id
            self._moved(provider, pool, Breaker.HALF_OPEN)
        return taken

    async def release_probe(self, pool: str | None, generation_id: str) -> None:
        """A probe that ended without an answer from the provider (its generation moved on, was lost, or was
        refused for capacity) frees its slot for the next."""
        if pool is not None:
            if self._probes.get(pool) == generation_id:
                del self._probes[pool]
            await self._repository.release_probe(pool, generation_id)

    def _moved(self, provider: str, pool: str, to: Breaker) -> None:
        log.warning(
            "a provider key's breaker changed",
            extra={"provider": provider, "pool": pool, "breaker": to.value},
        )
        if self._on_transition is not None:
            self._on_transition(provider, pool, to)
