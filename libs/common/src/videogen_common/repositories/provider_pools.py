"""The ``provider_pools`` collection: one document per provider key, ``ProviderPool``, holding the generations
that use its slots. Every orchestrator instance takes and gives back slots here, so a provider's limit is the
deployment's, not each instance's.

A slot belongs to its generation, not to the instance running it (like an account slot): an instance that
dies leaves its slots with the generations another instance resumes, and a slot whose generation finished
without giving it back is reclaimed by the reconciler. Taking a slot is one conditional update that matches
only while the pool holds fewer generations than its effective limit, so two instances never both take the
last one.

A key without a limit (``effective`` None) keeps no slots here: nothing is counted against it, and what it
runs is told by its generations' account slots (``repositories.slots``: the account's slot names the key).
``everything`` fills its holders from there (what ``GET /v1/providers`` and the metrics show). When such a
key gets a limit (configured, or learned from a refusal), the generations it runs become its holders
(``_adopt``), so the new limit counts them; their slots are given back by the reconciler once they finish
(their instances admitted them without one)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from pymongo import ASCENDING, IndexModel
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.errors import DuplicateKeyError

from videogen_common.records.admission import Holder, ProviderPool
from videogen_common.repositories.slots import SlotRepository
from videogen_common.store import Store

Doc = dict[str, Any]

INDEXES: list[IndexModel] = [
    IndexModel([("provider", ASCENDING)], name="by_provider"),
]

# A burst of refusals halves the limit once: the next halving waits at least this long.
MIN_HOLD = timedelta(seconds=5)
# Without a Retry-After, the pause after consecutive refusals doubles from 1 s up to this.
MAX_BACKOFF_SECONDS = 60.0


def _not_after(now: datetime) -> Doc:
    """A datetime field that is absent, null, or not after ``now`` (without an ``$or``)."""
    return {"$not": {"$gt": now}}


class ProviderPoolRepository:
    def __init__(self, store: Store) -> None:
        self._pools: AsyncCollection[Doc] = store.provider_pools
        self._accounts = SlotRepository(store)

    async def register(self, pool: ProviderPool) -> ProviderPool:
        """Make the pool's document if there is none; if its configured limit changed, start from the new
        one; keep its model and resolution as configured. Returns the pool as stored."""
        for _ in range(3):
            doc = await self._pools.find_one({"_id": pool.id})
            if doc is None:
                try:
                    await self._pools.insert_one(pool.to_doc())
                    return pool
                except DuplicateKeyError:
                    continue  # another instance made it first
            stored = ProviderPool.from_doc(doc)
            if (stored.model, stored.resolution) != (pool.model, pool.resolution):
                used = {"model": pool.model, "resolution": pool.resolution}
                await self._pools.update_one({"_id": pool.id}, {"$set": used})
                stored = replace(stored, model=pool.model, resolution=pool.resolution)
            if stored.limit == pool.limit:
                return stored
            reset: Doc = {"limit": pool.limit, "effective": pool.limit, "successes": 0, "hold_until": None}
            changed = await self._pools.update_one({"_id": pool.id, "limit": stored.limit}, {"$set": reset})
            if changed.modified_count == 1 and stored.effective is None and pool.limit is not None:
                await self._adopt(pool.id)
        found = await self._pools.find_one({"_id": pool.id})
        return ProviderPool.from_doc(found) if found else pool

    async def of_provider(self, provider: str) -> list[ProviderPool]:
        return [ProviderPool.from_doc(doc) async for doc in self._pools.find({"provider": provider})]

    async def of_providers(self, providers: list[str]) -> list[ProviderPool]:
        return [
            ProviderPool.from_doc(doc) async for doc in self._pools.find({"provider": {"$in": providers}})
        ]

    async def everything(self, *, running: bool = True) -> list[ProviderPool]:
        """Every pool; with ``running``, those without a limit with the generations running on them as their
        holders (a read of the account slots: for what shows the load, not for routing)."""
        pools = [ProviderPool.from_doc(doc) async for doc in self._pools.find({})]
        unlimited = [pool.id for pool in pools if pool.effective is None]
        if not running or not unlimited:
            return pools
        keyed = await self._accounts.keyed(unlimited)
        return [
            replace(pool, holders=tuple(Holder(g, a) for g, a in keyed[pool.id]))
            if pool.id in keyed
            else pool
            for pool in pools
        ]

    async def _running(self, pool_id: str) -> int:
        """How many generations run on a key without a limit."""
        return len((await self._accounts.keyed([pool_id]))[pool_id])

    async def _adopt(self, pool_id: str) -> None:
        """The generations running on a key that had no limit become its holders (it has one now)."""
        running = (await self._accounts.keyed([pool_id]))[pool_id]
        if running:
            holders = [{"g": g, "a": a} for g, a in running]
            await self._pools.update_one({"_id": pool_id}, {"$addToSet": {"holders": {"$each": holders}}})

    async def take(self, pool: ProviderPool, generation_id: str, account_id: str, now: datetime) -> bool:
        """A slot of ``pool`` for the generation if the pool, as stored now, has room and is not paused. One
        conditional update: the room is checked against the stored holders and effective limit."""
        condition: Doc = {
            "_id": pool.id,
            "holders.g": {"$ne": generation_id},
            "paused_until": _not_after(now),
        }
        if pool.effective is None:
            condition["effective"] = None
        else:
            condition["$expr"] = {"$lt": [{"$size": "$holders"}, "$effective"]}
        taken = await self._pools.update_one(
            condition, {"$push": {"holders": {"g": generation_id, "a": account_id}}}
        )
        return taken.modified_count == 1

    async def hand_over(
        self, pool: ProviderPool, ended: str, successor: str, account_id: str, now: datetime
    ) -> bool:
        """Give the slot ``ended`` holds on ``pool`` straight to ``successor`` (of ``account_id``): one
        conditional update that swaps the holder in place, matching only while the pool, as stored now, is
        not paused and holds no more than its effective limit (a limit lowered meanwhile takes the slot
        back instead). False if it did not happen (``ended`` holds no slot there any more, or the pool has
        no room for a successor): the caller gives the slot back the usual way."""
        if pool.effective is None:
            return False
        condition: Doc = {
            "_id": pool.id,
            "holders.g": ended,
            "paused_until": _not_after(now),
            "$expr": {"$lte": [{"$size": "$holders"}, "$effective"]},
        }
        swapped = await self._pools.update_one(
            condition, {"$set": {"holders.$": {"g": successor, "a": account_id}}}
        )
        return swapped.modified_count == 1

    async def keep(self, pool_id: str, generation_id: str, account_id: str) -> None:
        """Record a slot for a generation already at the provider, whatever the count: it is in flight."""
        await self._pools.update_one(
            {"_id": pool_id, "holders.g": {"$ne": generation_id}},
            {"$push": {"holders": {"g": generation_id, "a": account_id}}},
        )

    async def release(self, provider: str, generation_id: str) -> bool:
        """Give back the generation's slot at ``provider`` (whichever key's); False if it held none."""
        released = await self._pools.update_many(
            {"provider": provider, "holders.g": generation_id},
            {"$pull": {"holders": {"g": generation_id}}},
        )
        return released.modified_count > 0

    async def joined_line(self, provider: str) -> None:
        """A generation joined a line at ``provider`` (its lane is pending now): its pools are marked so."""
        await self._pools.update_many({"provider": provider}, {"$inc": {"joins": 1}})

    async def lines_empty(self, pools: list[ProviderPool]) -> None:
        """The provider's lines were found empty after ``pools`` were read: their marks are cleared, each only
        if nobody joined a line since it was read (``joins`` unchanged)."""
        for pool in pools:
            if pool.lines_marked:
                seen = pool.joins or 0
                await self._pools.update_one(
                    {"_id": pool.id, "joins": pool.joins}, {"$set": {"joins": seen, "cleared": seen}}
                )

    async def refused(self, pool_id: str, now: datetime, retry_after: float | None) -> ProviderPool | None:
        """The provider refused a task on this pool for capacity: pause it (``retry_after``, else a backoff
        doubling with each refusal in a row) and halve its effective limit, unless a halving is still being
        held (a burst of refusals halves once). An unlimited pool learns a limit: half of what it runs.
        Returns the pool as it now is."""
        for _ in range(5):
            doc = await self._pools.find_one({"_id": pool_id})
            if doc is None:
                return None
            pool = ProviderPool.from_doc(doc)
            in_row = pool.refusals_in_row + 1
            pause = retry_after if retry_after is not None else min(MAX_BACKOFF_SECONDS, 2.0 ** (in_row - 1))
            update: Doc = {
                "paused_until": max(now + timedelta(seconds=pause), pool.paused_until or now),
                "refusals_in_row": in_row,
                "successes": 0,
            }
            if pool.hold_until is None or pool.hold_until <= now:
                current = (
                    pool.effective if pool.effective is not None else max(1, await self._running(pool_id))
                )
                update["effective"] = max(1, current // 2)
                update["ceiling"] = current  # refused at this level: climbing back is quick below it
                update["hold_until"] = now + max(MIN_HOLD, timedelta(seconds=pause))
            changed = await self._pools.update_one(
                {"_id": pool_id, "effective": pool.effective, "refusals_in_row": pool.refusals_in_row},
                {"$set": update},
            )
            if changed.modified_count == 1:
                if pool.effective is None and "effective" in update:  # it has a limit now
                    await self._adopt(pool_id)
                    found = await self._pools.find_one({"_id": pool_id})
                    if found is not None:
                        return ProviderPool.from_doc(found)
                return ProviderPool.from_doc({**pool.to_doc(), **update})
        return None

    async def accepted(self, pool: ProviderPool) -> None:
        """The provider accepted a task on ``pool`` (as last read): refusals in a row end, and a lowered limit
        climbs back by one: at once while it is below the level it was last refused at less one, after as
        many acceptances in a row as it is high above that (so it finds the provider's limit again quickly and
        probes past it slowly). Nothing to write for a pool at its limit with no refusal behind it."""
        lowered = pool.effective is not None and (pool.limit is None or pool.effective < pool.limit)
        if not lowered and pool.refusals_in_row == 0:
            return
        if lowered:
            assert pool.effective is not None
            below_ceiling = pool.ceiling is not None and pool.effective < pool.ceiling - 1
            needed = 0 if below_ceiling else pool.effective - 1
            raised = await self._pools.update_one(
                {"_id": pool.id, "effective": pool.effective, "successes": {"$gte": needed}},
                {"$inc": {"effective": 1}, "$set": {"successes": 0, "refusals_in_row": 0}},
            )
            if raised.modified_count == 1:
                return
        await self._pools.update_one(
            {"_id": pool.id}, {"$inc": {"successes": 1 if lowered else 0}, "$set": {"refusals_in_row": 0}}
        )

    async def all_holders(self) -> AsyncIterator[tuple[str, str]]:
        """(provider, generation id) of every slot held, pool by pool."""
        held = self._pools.find({"holders.0": {"$exists": True}}, projection={"holders": 1, "provider": 1})
        async for doc in held:
            for holder in doc["holders"]:
                yield doc["provider"], holder["g"]
