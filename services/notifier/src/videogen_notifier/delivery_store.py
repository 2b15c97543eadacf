"""The dispatcher's queries on the delivery collection: the three ways an attempt comes to hold a delivery (it
was created claimed, it is claimed when due, or a claim that ran short is renewed), handing claims back, and
recording what an attempt did. A claim is the delivery's ``next_attempt_at`` pushed past the attempt's
deadline, with this instance's token in ``claim``: no other instance takes the delivery until it ends.

Every write is one conditional ``update_one`` by id, never findAndModify, and every read is by id or the due
range of the ``by_due`` index: the embedded store serves anything else with a scan of every delivery."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pymongo.asynchronous.cursor import AsyncCursor

from videogen_common.deliveries import PENDING, RETRY_AT
from videogen_common.store import Store
from videogen_notifier.deliveries import insert_new

Doc = dict[str, Any]


class DeliveryStore:
    def __init__(self, store: Store, owner: str) -> None:
        self._deliveries = store.deliveries
        self._store = store
        # The claim token of this instance: on the deliveries it creates already claimed, and on its claims.
        self.owner = owner

    # Created claimed.

    def mark_claimed(self, doc: Doc, until: datetime) -> None:
        """Make a delivery not yet stored claimed by this instance until ``until`` once it is stored."""
        doc["next_attempt_at"] = until
        doc["claim"] = self.owner

    async def insert_new(self, docs: list[Doc]) -> list[Doc]:
        """Store new deliveries in one batch; returns those that were new (see ``deliveries.insert_new``)."""
        return await insert_new(self._store, docs)

    async def stored_claimed(self, delivery_id: str) -> Doc | None:
        """The delivery, if it is stored pending and claimed by this instance (a ``create`` that failed may
        have stored it all the same). Read by id: it happens only after a store failure."""
        stored = await self._deliveries.find_one({"_id": delivery_id})
        if stored is not None and stored["status"] == PENDING and stored.get("claim") == self.owner:
            return stored
        return None

    # Claimed when due.

    def due(self, now: datetime) -> AsyncCursor[Doc]:
        """The due deliveries, oldest first, without their bodies (a claimed delivery's is read with it).
        The due range of the ``by_due`` index and nothing else: the embedded store answers any other
        condition beside it (such as leaving busy endpoints out) with a scan of every delivery ever made, and
        reads every due document whatever the limit, so the caller skips what it does not want."""
        return self._deliveries.find(
            {"status": PENDING, "next_attempt_at": {"$lte": now}}, projection={"body": 0}
        ).sort("next_attempt_at", 1)

    async def claim_due(
        self, delivery_id: str, known: Doc | None, until: datetime, now: datetime
    ) -> Doc | None:
        """Push the delivery's next attempt to ``until`` (past this attempt's deadline), if it is still due
        (a conditional update, rather than findAndModify, which the embedded store serves with a collection
        scan). With the document already known, the update also requires its attempts to be the ones known,
        so the known document is the one claimed; the claim's end, with this instance's token, tells us the
        document read back by id (when it is not known, or known without its body) is the one we claimed."""
        query: Doc = {"_id": delivery_id, "status": PENDING, "next_attempt_at": {"$lte": now}}
        if known is not None:
            query["attempts"] = {"$size": len(known["attempts"])}
        claimed = await self._deliveries.update_one(
            query, {"$set": {"next_attempt_at": until, "claim": self.owner}}
        )
        if claimed.modified_count != 1:
            return None
        if known is not None and "body" in known:
            return known
        delivery = await self._deliveries.find_one({"_id": delivery_id})
        if delivery is None or delivery.get("claim") != self.owner or delivery["next_attempt_at"] != until:
            return None
        return delivery

    # A claim renewed, or handed back.

    async def renew_claim(self, delivery_id: str, until: datetime) -> bool:
        """Extend this instance's claim to ``until``, unless another instance took the delivery after the
        claim ended."""
        renewed = await self._deliveries.update_one(
            {"_id": delivery_id, "status": PENDING, "claim": self.owner},
            {"$set": {"next_attempt_at": until}},
        )
        return renewed.modified_count == 1

    async def hand_back(self, delivery_id: str, claimed_until: datetime, now: datetime) -> None:
        """Make a delivery this instance created claimed due now, only if still as this instance made it. By
        id (a condition on several fields, or a list of ids, costs the embedded store a scan of every
        delivery)."""
        await self._deliveries.update_one(
            {"_id": delivery_id, "status": PENDING, "claim": self.owner, "next_attempt_at": claimed_until},
            {"$set": {"next_attempt_at": now}},
        )

    async def postpone(self, delivery_id: str, until: datetime, now: datetime) -> None:
        """Make a claimed delivery due at ``until`` with no attempt made: it keeps its place in the retry
        schedule."""
        await self._deliveries.update_one(
            {"_id": delivery_id, "status": PENDING},
            {"$set": {"next_attempt_at": until, "updated_at": now}},
        )

    # What an attempt did.

    async def schedule_retry(self, delivery_id: str, attempt: Doc, next_at: datetime, now: datetime) -> None:
        await self._deliveries.update_one(
            {"_id": delivery_id, "status": PENDING},
            {
                "$push": {"attempts": attempt},
                "$set": {"next_attempt_at": next_at, RETRY_AT: next_at, "updated_at": now},
            },
        )

    async def close(
        self, delivery: Doc, status: str, reason: str | None, attempt: Doc | None, now: datetime
    ) -> bool:
        """Finish a pending delivery with ``status`` (and the attempt, if one was made); whether this call
        finished it."""
        update: Doc = {
            "$set": {
                "status": status,
                "next_attempt_at": None,
                "failure_reason": reason,
                "updated_at": now,
            }
        }
        if attempt is not None:
            update["$push"] = {"attempts": attempt}
        if delivery["attempts"] or RETRY_AT in delivery:
            update["$unset"] = {RETRY_AT: ""}  # it was waiting for a retry
        closed = await self._deliveries.update_one({"_id": delivery["_id"], "status": PENDING}, update)
        return bool(closed.modified_count)
