"""Leases on generations (in the ``generations`` collection): an orchestrator instance claims a generation's
lease before running it, renews the leases of everything it runs, lets go of one that joins a line and hands
its leases back when it stops; the reconciler finds the generations whose lease ran out, or that nobody ever
leased. What a generation is, and its compare-and-set transitions, are ``repositories.generations``.

**Fencing.** A lease is an owner and a number, ``lease_fence``, that each claim increments. Every write the
holder makes on the generation (its task id, the submit mark, the first frame, progress, the provider's
states, the terminal write through ``videogen_common.endings``) is conditioned on both
(``GenerationRepository``'s owned writes take them from the record the claim answered), so a holder whose
lease ran out while it was cut off from the store, and which another instance (or one of the same name) then
claimed, matches nothing once healed: its writes change nothing, and its actor stops.

On the embedded store ``findAndModify`` is answered with a collection scan, so a claim there is a conditional
update stamping a unique token, then a read by id (``claim_lease``, chosen by ``Store.engine()``); and an
``$or`` is a scan too, so the scan for lost leases is one range query per unfinished status
(``expired_leases``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

from pymongo import ASCENDING, IndexModel, ReturnDocument
from pymongo.asynchronous.collection import AsyncCollection

from videogen_common.domain import Status
from videogen_common.records.generation import GenerationRecord
from videogen_common.repositories.generations import ACTIVE
from videogen_common.store import Engine, Store

Doc = dict[str, Any]

# The smallest datetime: a field at or after it is any such field (an indexed range, unlike $exists).
_EVER = datetime.min.replace(tzinfo=UTC)

INDEXES: list[IndexModel] = [
    # The reconciler: unfinished generations whose lease expired (a range of the first two fields), or was
    # never taken (a null lease, then a range of creation times: ``never_leased``). It replaces ``by_lease``
    # (the first two alone), over which the embedded store read every unleased generation of the status.
    IndexModel(
        [("status", ASCENDING), ("lease_expires_at", ASCENDING), ("created_at", ASCENDING)],
        name="by_lease_created",
    ),
]


class LeaseRepository:
    def __init__(self, store: Store) -> None:
        self._store = store
        self._generations: AsyncCollection[Doc] = store.generations

    async def claim_lease(
        self,
        generation_id: str,
        owner: str,
        now: datetime,
        until: datetime,
        token: str,
        *,
        waiting: bool = False,
        admitted: bool = False,
    ) -> GenerationRecord | None:
        """Take the lease of an unfinished generation if it is free or expired ("not at or after now": none,
        or one that ended before now, without an ``$or``); returns the generation so leased, or None. A
        generation waiting to be admitted is claimed only with ``waiting`` (admission starting it, or the
        reconciler resuming one whose joining was cut short): it then leaves its lane. ``admitted``: admission
        chose it from its line, so ``admitted_at`` says since when it is out of our queue. On MongoDB one
        findAndModify; on the embedded store, which answers findAndModify with a collection scan, a
        conditional update stamping the unique ``token``, then a read by id
        (``_claim_lease_in_two_steps``)."""
        condition: Doc = {
            "_id": generation_id,
            "status": {"$in": ACTIVE},
            "lease_expires_at": {"$not": {"$gte": now}},
        }
        update: Doc = {
            "$set": {"lease_owner": owner, "lease_expires_at": until, "lease_token": token},
            # The fencing token: every write the new holder makes is conditioned on it (and on ``owner``), so
            # a holder that lost the lease (cut off, then healed) writes nothing over this one's work.
            "$inc": {"attempts": 1, "lease_fence": 1},
        }
        if waiting or admitted:
            update["$unset"] = {"slot_wait": "", "wait_deadline": ""}
            if admitted:
                update["$set"]["admitted_at"] = now
        else:
            condition["slot_wait"] = None
        if await self._store.engine() is Engine.SECANTUSDB:
            return await self._claim_lease_in_two_steps(condition, update, token)
        doc = await self._generations.find_one_and_update(
            condition, update, return_document=ReturnDocument.AFTER
        )
        return None if doc is None else GenerationRecord.from_doc(doc)

    async def _claim_lease_in_two_steps(
        self, condition: Doc, update: Doc, token: str
    ) -> GenerationRecord | None:
        claimed = await self._generations.update_one(condition, update)
        if claimed.modified_count != 1:
            return None
        doc = await self._generations.find_one({"_id": condition["_id"]})
        if doc is None or doc.get("lease_token") != token:
            return None
        return GenerationRecord.from_doc(doc)

    async def leave_lease(self, record: GenerationRecord) -> bool:
        """Let go of the lease of a generation that now waits in its lane (``join_lane``), so admission can
        start it; False if it moved meanwhile."""
        left = await self._generations.update_one(
            {"_id": record.id, "lease_token": record.lease_token, "slot_wait": record.slot_wait},
            {"$set": {"lease_owner": None, "lease_expires_at": None}},
        )
        return left.modified_count == 1

    async def renew_leases(self, generation_ids: list[str], owner: str, until: datetime) -> None:
        await self._generations.update_many(
            {"_id": {"$in": generation_ids}, "lease_owner": owner}, {"$set": {"lease_expires_at": until}}
        )

    async def hand_back_leases(self, owner: str, expires_at: datetime) -> int:
        """Release every unfinished generation ``owner`` leases, its lease expiring at ``expires_at``; returns
        how many."""
        released = await self._generations.update_many(
            {"lease_owner": owner, "status": {"$in": ACTIVE}},
            {"$set": {"lease_owner": None, "lease_expires_at": expires_at}},
        )
        return released.modified_count

    # -- the reconciler's scans ---------------------------------------------------------------------------

    async def expired_leases(self, now: datetime, limit: int) -> AsyncIterator[str]:
        """Ids of unfinished generations whose lease ran out (their owner died) or was handed back (expired at
        the epoch), oldest first, up to ``limit`` per status. One range of ``by_lease_created``'s first two
        fields per status: one ``$or`` over them would make the embedded store scan the whole collection."""
        for status in ACTIVE:
            # Bounded below too: without it the embedded store reads every unleased generation of the status
            # (those waiting in line: their lease is null, which sorts first) before the range.
            found = (
                self._generations.find(
                    {"status": status, "lease_expires_at": {"$gte": _EVER, "$lt": now}}, projection={"_id": 1}
                )
                .sort("lease_expires_at", 1)
                .limit(limit)
            )
            async for doc in found:
                yield doc["_id"]

    async def never_leased(self, created_before: datetime, limit: int) -> AsyncIterator[str]:
        """Ids of ``processing`` generations nobody ever leased, created before ``created_before``, oldest
        first (one that waits for an account slot is ``queued`` with no lease, and is not among them). Its
        two equalities then its range are ``by_lease_created``'s fields, in order."""
        found = (
            self._generations.find(
                {
                    "status": Status.PROCESSING.value,
                    "lease_expires_at": None,
                    "created_at": {"$lt": created_before},
                },
                projection={"_id": 1},
            )
            .sort("created_at", 1)
            .limit(limit)
        )
        async for doc in found:
            yield doc["_id"]
