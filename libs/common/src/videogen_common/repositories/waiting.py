"""The generations waiting to be admitted to a provider: the ``waiting_lanes`` collection (``WaitingLane``:
one account's line at one provider and priority) and the waiting generations' ``slot_wait`` keys in the
``generations`` collection (``lane, place, id``: a lane's generations are one range of the sparse
``by_slot_wait`` index, in the order they start).

Every query here costs the same whether ten or ten thousand generations wait: a lane's next generation is
looked for among a few places from the lane's ``head`` (a range of at most ``WINDOW`` places, never the whole
lane), and a provider's waiting lanes are an equality match on ``(provider, pending)``. (The embedded store
answers a range query by reading the whole range first, so an open-ended range over the index would cost as
much as the line is long.)

A generation joins its lane (``join_lane``: ``queued``, still leased) and moves to another provider of its
route (``move_provider``) by compare-and-set writes on its document, like every change of its state
(``repositories.generations.transition``).

Joining a lane is three steps, in this order: take a place (``tail``), write the key on the generation (while
it is still leased), then lower the lane's ``head`` to that place if it is above it and mark the lane pending
(``joined``, which also counts the join). A reader that moved ``head`` past a place whose key was not yet
written is corrected by the third step, and a reader that looked before the key was written marks the lane
empty only if no join was counted since it read the lane; a joiner that dies before the third step still
holds its lease, so the generation is resumed and joins again."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from pymongo import ASCENDING, IndexModel, ReturnDocument
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.errors import DuplicateKeyError

from videogen_common.domain import TERMINAL, Status
from videogen_common.records.admission import SEP, WaitingLane, lane_id, place_bound
from videogen_common.records.generation import GenerationRecord
from videogen_common.repositories.generations import transition
from videogen_common.store import Engine, Store

Doc = dict[str, Any]

INDEXES: list[IndexModel] = [
    # A provider's lanes that may hold someone (admission's dispatch), and an account's (its slot freed).
    IndexModel([("provider", ASCENDING), ("pending", ASCENDING)], name="by_provider_pending"),
    IndexModel([("account_id", ASCENDING), ("pending", ASCENDING)], name="by_account_pending"),
]

# How many places of a lane one look covers.
WINDOW = 32

FINISHED = [s.value for s in TERMINAL]


class WaitingRepository:
    def __init__(self, store: Store) -> None:
        self._store = store
        self._lanes: AsyncCollection[Doc] = store.waiting_lanes
        self._generations: AsyncCollection[Doc] = store.generations

    # -- joining --------------------------------------------------------------------------------------------

    async def take_place(self, provider: str, account_id: str, rank: int) -> tuple[str, int]:
        """A new place at the end of the account's lane at ``provider`` and ``rank``: (lane id, place). Two
        joiners may get the same place on the embedded store (its read back is a second step); keys hold the
        generation's id too, so they stay apart and start in either order."""
        lane = lane_id(provider, account_id, rank)
        update: Doc = {
            "$inc": {"tail": 1},
            "$setOnInsert": {"provider": provider, "account_id": account_id, "rank": rank, "head": 0},
        }
        for _ in range(3):
            try:
                if await self._store.engine() is Engine.SECANTUSDB:
                    await self._lanes.update_one({"_id": lane}, update, upsert=True)
                    doc = await self._lanes.find_one({"_id": lane}, projection={"tail": 1})
                else:
                    doc = await self._lanes.find_one_and_update(
                        {"_id": lane},
                        update,
                        upsert=True,
                        projection={"tail": 1},
                        return_document=ReturnDocument.AFTER,
                    )
            except DuplicateKeyError:
                continue  # two first joiners made the lane at once: the other's document is there now
            assert doc is not None
            return lane, int(doc["tail"]) - 1
        raise RuntimeError(f"could not take a place in lane {lane!r}")

    async def joined(self, lane: str, place: int, since: datetime) -> None:
        """A generation's key at ``place`` is written: the lane is pending, one more waits, and ``head`` is at
        most ``place``."""
        await self._lanes.update_one(
            {"_id": lane},
            {
                "$min": {"head": place, "since": since},
                "$set": {"pending": True},
                "$inc": {"waiting": 1, "joins": 1},
            },
        )

    async def left(self, lane: str, *, standby: str | None = None) -> None:
        """A generation of the lane was taken out of it (started, or found finished; ``standby``: this one,
        kept ready to start next, still counted ahead of the lane in its places)."""
        update: Doc = {"$inc": {"waiting": -1}}
        if standby is not None:
            update["$addToSet"] = {"standby": standby}
        await self._lanes.update_one({"_id": lane, "waiting": {"$gt": 0}}, update)

    async def off_standby(self, lane: str, generation_id: str) -> None:
        """The generation kept ready to start next is no longer (started, or back in its place)."""
        await self._lanes.update_one(
            {"_id": lane, "standby": generation_id}, {"$pull": {"standby": generation_id}}
        )

    # -- joining a provider's line, moving to another provider -----------------------------------------------

    async def join_lane(
        self,
        record: GenerationRecord,
        key: str,
        place: int,
        reason: str,
        *,
        now: datetime,
        refused: bool = False,
    ) -> GenerationRecord | None:
        """Make a generation leased under ``record``'s token wait, ``queued`` for ``reason``, at ``key`` in
        its lane (``repositories.waiting``), still leased: a transition from ``processing``; from ``queued``,
        the same fields without a new version (no state changes). ``refused``: the provider refused its submit
        for capacity, so no task was made: the submit's mark and plan go. The lease is let go by
        ``leave_lease`` once the lane knows the place. None if it moved since ``record``."""
        fields: Doc = {"slot_wait": key, "queue_place": place, "queue_reason": reason}
        if record.deadline_at is not None:
            fields["wait_deadline"] = record.deadline_at
        if refused:
            fields["submit_started_at"] = None
            fields["provider_request"] = None
        changes: Doc = {name: value for name, value in fields.items() if name != "wait_deadline"}
        if record.status is Status.QUEUED:
            parked = await self._generations.update_one(
                {"_id": record.id, "version": record.version, "lease_token": record.lease_token},
                {"$set": fields},
            )
            return replace(record, **changes) if parked.modified_count == 1 else None
        moved = await transition(
            self._generations,
            record.to_doc(),
            Status.QUEUED,
            now=now,
            fields=fields,
            lease_token=record.lease_token,
        )
        return None if moved is None else GenerationRecord.from_doc(moved)

    async def move_provider(
        self,
        record: GenerationRecord,
        provider: str,
        *,
        reason: str,
        now: datetime,
        attempt: Doc | None = None,
    ) -> GenerationRecord | None:
        """Move a generation leased under ``record``'s token, and at no provider now (its try there ended, or
        none began), to its next candidate ``provider``: a compare-and-set that drops everything of the old
        provider (its key, its place in a line there, the submit's mark, plan and task id) and keeps the try
        that ended (``attempt``). ``reason`` says why, on its route. None if it moved since ``record``."""
        cleared: tuple[str, ...] = (
            "queue_place",
            "provider_pool",
            "submit_started_at",
            "provider_request",
            "provider_task_id",
            "task_started_at",
            "slot_wait",
            "wait_deadline",
        )
        route = {**record.route, "reason": reason} if record.route is not None else None
        # The model the route chose at that candidate (None: its provider's default).
        model = next(
            (c.get("model") for c in (route or {}).get("candidates") or () if c["provider"] == provider), None
        )
        changes: Doc = {"provider": provider, "updated_at": now, "progress": None}
        if model is not None:
            changes["model"] = model
        else:
            cleared = (*cleared, "model")
        if route is not None:
            changes["route.reason"] = reason
        write: Doc = {
            "$set": changes,
            "$unset": dict.fromkeys(cleared, ""),
            "$inc": {"version": 1},
        }
        attempts = list(record.provider_attempts or ())
        if attempt is not None:
            write["$push"] = {"provider_attempts": attempt}
            attempts.append(attempt)
        moved = await self._generations.update_one(
            {"_id": record.id, "version": record.version, "lease_token": record.lease_token}, write
        )
        if moved.modified_count != 1:
            return None
        return replace(
            record,
            provider=provider,
            model=model,
            updated_at=now,
            version=record.version + 1,
            progress=None,
            route=route,
            provider_attempts=attempts,
            queue_place=None,
            provider_pool=None,
            submit_started_at=None,
            provider_request=None,
            provider_task_id=None,
            task_started_at=None,
            slot_wait=None,
            wait_deadline=None,
        )

    # -- reading --------------------------------------------------------------------------------------------

    async def pending_at(self, provider: str) -> list[WaitingLane]:
        """The provider's lanes that may hold a waiting generation."""
        found = self._lanes.find({"provider": provider, "pending": True})
        return [WaitingLane.from_doc(doc) async for doc in found]

    async def pending_of(self, account_id: str) -> list[WaitingLane]:
        """The account's lanes, at every provider, that may hold a waiting generation."""
        found = self._lanes.find({"account_id": account_id, "pending": True})
        return [WaitingLane.from_doc(doc) async for doc in found]

    async def lane(self, lane: str) -> WaitingLane | None:
        doc = await self._lanes.find_one({"_id": lane})
        return None if doc is None else WaitingLane.from_doc(doc)

    async def next_in(self, lane: WaitingLane) -> tuple[str, str, str] | None:
        """The (id, status, key) of the lane's next generation, or None when the lane is empty (then it is
        marked so, unless someone joined meanwhile). Looks ``WINDOW`` places at a time from ``head``, moving
        ``head`` past places found empty."""
        current = lane
        while True:
            end = current.head + WINDOW
            window = {"$gte": place_bound(current.id, current.head), "$lt": place_bound(current.id, end)}
            doc = await self._generations.find_one(
                {"slot_wait": window},
                projection={"status": 1, "slot_wait": 1},
                sort=[("slot_wait", ASCENDING)],
            )
            if doc is not None:
                return doc["_id"], doc["status"], doc["slot_wait"]
            if end < current.tail:
                moved = await self._lanes.update_one(
                    {"_id": current.id, "head": current.head}, {"$set": {"head": end}}
                )
                if moved.modified_count == 1:
                    current = replace(current, head=end)
                    continue
            else:
                # Empty only if nobody joined since the lane was read: a joiner whose key was written after
                # the look above has marked the lane since (``joined``), and keeps it marked.
                unjoined = current.joins or {"$in": [0, None]}  # a lane from before ``joins`` has none
                emptied = await self._lanes.update_one(
                    {"_id": current.id, "tail": current.tail, "head": current.head, "joins": unjoined},
                    {"$set": {"pending": False, "waiting": 0}, "$unset": {"since": ""}},
                )
                if emptied.modified_count == 1:
                    return None
            # Someone joined (or moved head) meanwhile: look again at the lane as it now is.
            fresh = await self.lane(current.id)
            if fresh is None or not fresh.pending:
                return None
            current = fresh

    async def position(self, key: str, cap: int = 10_000) -> int | None:
        """The place in its account's line at its provider of the generation waiting at ``key``: 1 when it is
        the account's next there (its higher-priority lanes counted first). Counted up to ``cap`` ahead in
        its own lane; None if its lane is not known."""
        lane_key = lane_of(key)
        provider, account_id, rank = lane_key.split(SEP)
        lanes = {lane.id: lane for lane in await self.pending_of(account_id) if lane.provider == provider}
        own = lanes.get(lane_key)
        if own is None:
            return None
        higher = sum(lane.waiting for lane in lanes.values() if lane.rank < int(rank))
        ready = sum(len(lane.standby) for lane in lanes.values() if lane.rank <= int(rank))
        ahead = await self._generations.count_documents(
            {"slot_wait": {"$gte": place_bound(own.id, own.head), "$lt": key}}, limit=cap
        )
        return 1 + ready + higher + ahead

    async def waiting_by_provider(self) -> dict[str, int]:
        """How many generations wait at each provider (the lanes' counts)."""
        pipeline: list[Doc] = [
            {"$match": {"pending": True}},
            {"$group": {"_id": "$provider", "waiting": {"$sum": "$waiting"}}},
        ]
        groups = await (await self._lanes.aggregate(pipeline)).to_list(None)
        return {group["_id"]: int(group["waiting"]) for group in groups}

    async def leave(self, generation_id: str, key: str) -> None:
        """Take a finished generation (canceled while it waited) out of its lane."""
        left = await self._generations.update_one(
            {"_id": generation_id, "status": {"$in": FINISHED}, "slot_wait": key},
            {"$unset": {"slot_wait": "", "wait_deadline": ""}},
        )
        if left.modified_count == 1:
            await self.left(lane_of(key))

    async def past_deadline(self, now: datetime, limit: int) -> list[str]:
        """Ids of waiting generations whose client's deadline has passed (a small range: only those)."""
        found = self._generations.find({"wait_deadline": {"$lt": now}}, projection={"_id": 1}).limit(limit)
        return [doc["_id"] async for doc in found]


def lane_of(key: str) -> str:
    """The lane a waiting generation's key belongs to."""
    return key.rsplit(SEP, 2)[0]
