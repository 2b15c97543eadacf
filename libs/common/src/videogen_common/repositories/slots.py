"""The ``account_slots`` collection: one document per account, ``{_id: account_id, holders: [generation
ids], keys: [{g: generation id, p: provider key}]}``: the account's generations in flight (the orchestrator's
per-account cap, counted where every instance sees one count), and of those the ones running on a provider
key without a limit, with the key (such a key keeps no slots of its own: what it runs is counted here,
``keyed``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from pymongo.asynchronous.collection import AsyncCollection
from pymongo.errors import DuplicateKeyError

from videogen_common.store import Store

Doc = dict[str, Any]


class SlotRepository:
    def __init__(self, store: Store) -> None:
        self._slots: AsyncCollection[Doc] = store.account_slots

    async def take(self, account_id: str, generation_id: str, cap: int, key: str | None = None) -> bool:
        """Take a slot for the generation if the account holds fewer than ``cap``; True if it holds one now
        (also if it already did). One conditional ``update_one`` that matches only while the list is shorter
        than the cap, so two instances can never both take the last slot. ``key``: the provider key without a
        limit it runs on (counted as running there)."""
        push: Doc = {"holders": generation_id}
        if key is not None:
            push["keys"] = {"g": generation_id, "p": key}
        for _ in range(3):
            taken = await self._slots.update_one(
                # `holders.{cap-1}` missing means fewer than `cap` holders.
                {
                    "_id": account_id,
                    f"holders.{cap - 1}": {"$exists": False},
                    "holders": {"$ne": generation_id},
                },
                {"$push": push},
            )
            if taken.modified_count == 1:
                return True
            doc = await self._slots.find_one({"_id": account_id})
            if doc is not None:
                if generation_id in doc["holders"] or len(doc["holders"]) >= cap:
                    return generation_id in doc["holders"]
                continue  # another instance made the document after the update looked: take it now
            try:
                await self._slots.insert_one({"_id": account_id, **{f: [v] for f, v in push.items()}})
                return True
            except DuplicateKeyError:
                continue  # another instance created the account's document first: update it instead
        return False

    async def keep(self, account_id: str, generation_id: str, key: str | None = None) -> None:
        """Record a slot for the generation whatever the count (``key``: as in ``take``)."""
        added: Doc = {"holders": generation_id}
        if key is not None:
            added["keys"] = {"g": generation_id, "p": key}
        await self._slots.update_one({"_id": account_id}, {"$addToSet": added}, upsert=True)

    async def release(self, account_id: str, generation_id: str) -> bool:
        """Give the generation's slot back; False if it held none."""
        released = await self._slots.update_one(
            {"_id": account_id, "holders": generation_id}, _pulled(generation_id)
        )
        return released.modified_count == 1

    async def release_below(self, account_id: str, generation_id: str, cap: int) -> bool:
        """Give the generation's slot back if the account holds fewer than ``cap`` (this one included): True
        if given back so; False if it holds none, or the account is at (or past) ``cap``. One conditional
        update."""
        released = await self._slots.update_one(
            {"_id": account_id, "holders": generation_id, f"holders.{cap - 1}": {"$exists": False}},
            _pulled(generation_id),
        )
        return released.modified_count == 1

    async def holders(self, account_id: str) -> list[str]:
        doc = await self._slots.find_one({"_id": account_id})
        return list(doc["holders"]) if doc else []

    async def held_by(self, account_ids: list[str]) -> dict[str, int]:
        """How many slots each of these accounts holds (0 for one with no document)."""
        found = self._slots.find({"_id": {"$in": account_ids}}, projection={"holders": 1})
        held = dict.fromkeys(account_ids, 0)
        async for doc in found:
            held[doc["_id"]] = len(doc["holders"])
        return held

    async def keyed(self, keys: list[str]) -> dict[str, list[tuple[str, str]]]:
        """The (generation id, account id) of every generation running on each of these provider keys without
        a limit."""
        found = self._slots.find({"keys.p": {"$in": keys}}, projection={"keys": 1})
        running: dict[str, list[tuple[str, str]]] = {key: [] for key in keys}
        async for doc in found:
            for entry in doc["keys"]:
                if entry["p"] in running:
                    running[entry["p"]].append((entry["g"], doc["_id"]))
        return running

    async def all_holders(self) -> AsyncIterator[tuple[str, list[str]]]:
        """Each account holding a slot, with its holders."""
        async for doc in self._slots.find({"holders.0": {"$exists": True}}):
            yield doc["_id"], list(doc["holders"])


def _pulled(generation_id: str) -> Doc:
    """The update that gives the generation's slot back (and forgets the key it ran on)."""
    return {"$pull": {"holders": generation_id, "keys": {"g": generation_id}}}
