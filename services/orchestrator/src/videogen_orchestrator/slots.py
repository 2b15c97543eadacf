"""The per-account cap on generations in flight, counted in MongoDB so that every orchestrator instance sees
one count.

Each account has one document, ``{_id: account_id, holders: [generation ids]}``. A generation takes a slot
before its provider task is submitted and gives it back once it is terminal; the slot belongs to the
generation, not to the instance running it, so an instance that dies leaves its slots with generations another
instance resumes. Taking a slot is one conditional ``update_one`` that matches only while the list is shorter
than the cap, so two instances can never both take the last slot: the cap is exact, not approximate.

A slot whose generation ended without giving it back (its instance died between the terminal write and the
release, or the api canceled it while nobody ran it) is reclaimed by the reconciler (``release_finished``).

A generation that found no free slot waits in its account's queue: its ``slot_wait`` field holds
``"{account_id}\n{generation id}"`` while it waits, so the queue is an ordered range of a sparse index and its
oldest member is one index seek (generation ids start with their creation time)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

from pymongo.asynchronous.collection import AsyncCollection
from pymongo.errors import DuplicateKeyError

from videogen_common.domain import TERMINAL

log = logging.getLogger(__name__)

Doc = dict[str, Any]

FINISHED = [s.value for s in TERMINAL]
# Separates the account from the generation id in ``slot_wait``; account ids never contain it.
_SEP = "\n"


def waiting_key(account_id: str, generation_id: str) -> str:
    """The ``slot_wait`` value of a generation waiting in its account's queue."""
    return f"{account_id}{_SEP}{generation_id}"


def _queue_range(account_id: str) -> Doc:
    return {"$gt": f"{account_id}{_SEP}", "$lt": f"{account_id}{chr(ord(_SEP) + 1)}"}


class AccountSlots:
    def __init__(self, slots: AsyncCollection[Doc], generations: AsyncCollection[Doc], *, cap: int) -> None:
        if cap < 1:
            raise ValueError(f"the per-account cap must be at least 1, got {cap}")
        self._slots = slots
        self._generations = generations
        self.cap = cap

    async def acquire(self, account_id: str, generation_id: str) -> bool:
        """Take a slot for the generation; True if it holds one now (also if it already did)."""
        for _ in range(3):
            taken = await self._slots.update_one(
                # `holders.{cap-1}` missing means fewer than `cap` holders.
                {
                    "_id": account_id,
                    f"holders.{self.cap - 1}": {"$exists": False},
                    "holders": {"$ne": generation_id},
                },
                {"$push": {"holders": generation_id}},
            )
            if taken.modified_count == 1:
                return True
            doc = await self._slots.find_one({"_id": account_id})
            if doc is not None:
                return generation_id in doc["holders"]
            try:
                await self._slots.insert_one({"_id": account_id, "holders": [generation_id]})
                return True
            except DuplicateKeyError:
                continue  # another instance created the account's document first: update it instead
        return False

    async def keep(self, account_id: str, generation_id: str) -> None:
        """Record a slot for a generation already at its provider, whatever the count: it is in flight."""
        await self._slots.update_one(
            {"_id": account_id}, {"$addToSet": {"holders": generation_id}}, upsert=True
        )

    async def release(self, account_id: str, generation_id: str) -> bool:
        """Give the generation's slot back; False if it held none."""
        released = await self._slots.update_one(
            {"_id": account_id, "holders": generation_id}, {"$pull": {"holders": generation_id}}
        )
        return released.modified_count == 1

    async def free(self, account_id: str) -> int:
        doc = await self._slots.find_one({"_id": account_id})
        return self.cap - (len(doc["holders"]) if doc else 0)

    async def holders(self, account_id: str) -> list[str]:
        doc = await self._slots.find_one({"_id": account_id})
        return list(doc["holders"]) if doc else []

    async def oldest_waiting(self, account_id: str) -> Doc | None:
        """The account's longest-waiting generation (``_id`` and ``status``), or None if none waits."""
        return await self._generations.find_one(
            {"slot_wait": _queue_range(account_id)}, projection={"status": 1}, sort=[("slot_wait", 1)]
        )

    async def leave_queue(self, generation_id: str) -> None:
        """Take a finished generation (canceled while it waited) out of its account's queue."""
        await self._generations.update_one(
            {"_id": generation_id, "status": {"$in": FINISHED}}, {"$unset": {"slot_wait": ""}}
        )

    async def waiting_accounts(self) -> AsyncIterator[str]:
        """Each account with a generation waiting for a slot: one index seek per account, skipping from one
        account's queue to the next."""
        after = ""
        while True:
            doc = await self._generations.find_one(
                {"slot_wait": {"$gt": after}}, projection={"slot_wait": 1}, sort=[("slot_wait", 1)]
            )
            if doc is None:
                return
            account_id = doc["slot_wait"].split(_SEP, 1)[0]
            yield account_id
            after = f"{account_id}{chr(ord(_SEP) + 1)}"

    async def release_finished(self, batch: int = 500) -> list[str]:
        """Give back every slot whose generation is terminal (or gone); returns the accounts that got one."""
        freed: list[str] = []
        async for chunk in self._holder_chunks(batch):
            ids = [gid for _, gid in chunk]
            alive = {
                doc["_id"]
                async for doc in self._generations.find(
                    {"_id": {"$in": ids}, "status": {"$nin": FINISHED}}, projection={"_id": 1}
                )
            }
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
        async for doc in self._slots.find({"holders.0": {"$exists": True}}):
            chunk.extend((doc["_id"], gid) for gid in doc["holders"])
            if len(chunk) >= batch:
                yield chunk
                chunk = []
        if chunk:
            yield chunk
