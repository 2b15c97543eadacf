"""The per-account cap on generations in flight, counted in MongoDB so that every orchestrator instance sees
one count (one of the limits ``admission`` applies).

Each account has one document listing the generations holding its slots (``repositories.slots``). A
generation takes a slot before its provider task is submitted and gives it back once it is terminal; the slot
belongs to the generation, not to the instance running it, so an instance that dies leaves its slots with
generations another instance resumes. Taking a slot is one conditional write that matches only while the list
is shorter than the cap, so two instances can never both take the last slot: the cap is exact, not
approximate.

A slot whose generation ended without giving it back (its instance died between the terminal write and the
release, or the api canceled it while nobody ran it) is reclaimed by the reconciler (``release_finished``).
A generation that found no free slot waits in line at its provider (``admission``)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

from videogen_common.repositories.generations import GenerationRepository
from videogen_common.repositories.slots import SlotRepository
from videogen_common.store import Store

log = logging.getLogger(__name__)


class AccountSlots:
    def __init__(self, store: Store, *, cap: int) -> None:
        if cap < 1:
            raise ValueError(f"the per-account cap must be at least 1, got {cap}")
        self._slots = SlotRepository(store)
        self._generations = GenerationRepository(store)
        self.cap = cap

    async def acquire(self, account_id: str, generation_id: str, key: str | None = None) -> bool:
        """Take a slot for the generation; True if it holds one now (also if it already did). ``key``: the
        provider key without a limit it is to run on (its slot there is this one)."""
        return await self._slots.take(account_id, generation_id, self.cap, key)

    async def keep(self, account_id: str, generation_id: str, key: str | None = None) -> None:
        """Record a slot for a generation already at its provider, whatever the count: it is in flight."""
        await self._slots.keep(account_id, generation_id, key)

    async def release(self, account_id: str, generation_id: str) -> bool:
        """Give the generation's slot back; False if it held none."""
        return await self._slots.release(account_id, generation_id)

    async def give_back(self, account_id: str, generation_id: str) -> bool:
        """Give the generation's slot back; True if the account was at its cap, so work of its may wait for
        this slot (False if it held none, or was below the cap: nothing of the account waits for its own
        cap then: a generation waits for it only after finding the account full, and the release that took
        the account below its cap looked for it). Below the cap, one conditional write."""
        if await self._slots.release_below(account_id, generation_id, self.cap):
            return False
        return await self._slots.release(account_id, generation_id)

    async def free(self, account_id: str) -> int:
        return self.cap - len(await self._slots.holders(account_id))

    async def holders(self, account_id: str) -> list[str]:
        return await self._slots.holders(account_id)

    async def held_by(self, account_ids: list[str]) -> dict[str, int]:
        """How many slots each of these accounts holds."""
        return await self._slots.held_by(account_ids)

    async def release_finished(self, batch: int = 500) -> list[str]:
        """Give back every slot whose generation is terminal (or gone); returns the accounts that got one."""
        freed: list[str] = []
        async for chunk in self._holder_chunks(batch):
            alive = await self._generations.unfinished_among([gid for _, gid in chunk])
            for account_id, generation_id in chunk:
                if generation_id not in alive and await self.release(account_id, generation_id):
                    log.info(
                        "reclaimed the slot of a finished generation",
                        extra={"account_id": account_id, "generation_id": generation_id},
                    )
                    freed.append(account_id)
        return freed

    async def _holder_chunks(self, batch: int) -> AsyncIterator[list[tuple[str, str]]]:
        chunk: list[tuple[str, str]] = []
        async for account_id, holders in self._slots.all_holders():
            chunk.extend((account_id, gid) for gid in holders)
            if len(chunk) >= batch:
                yield chunk
                chunk = []
        if chunk:
            yield chunk
