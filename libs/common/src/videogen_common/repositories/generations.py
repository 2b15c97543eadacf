"""A generation's own lifecycle in the ``generations`` collection: its creation, the compare-and-set
transitions of its state (``transition``; a terminal one carrying its event: ``videogen_common.outbox``) and
the writes its actor makes under its lease, and the orchestrator's reads of it. Each other caller has its
own module beside this one: leases and the reconciler's scans for lost ones ``repositories.leases``; joining
a provider's line and moving to another provider ``repositories.waiting``; what the api reads
``repositories.generation_reads``, the Idempotency-Key's saved reply ``repositories.idempotency``, usage and
what budgets charged ``repositories.usage``; the migrations ``repositories.indexes``. How a generation ends
(the terminal write, its budget give-back and its announcement together) is ``videogen_common.endings``.

Shapes are chosen for MongoDB 7. Where the embedded store needs another shape to be usable, the method says so
and the difference stays here: ``findAndModify`` is answered with a collection scan there, so a
compare-and-set needs no read back on either engine: it is a conditional ``update_one`` whose new state is
computed (``transition`` and every write built on it, ``_set_owned``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, Required, TypedDict, Unpack

from pymongo import ASCENDING, IndexModel
from pymongo.asynchronous.collection import AsyncCollection

from videogen_common.domain import TERMINAL, Status, can_transition
from videogen_common.failures import ErrorCode, GenerationError
from videogen_common.generations import QueueReason, TransitionError, terminal_event
from videogen_common.outbox import OUTBOX, OUTBOX_AT, OUTBOX_INDEX, owing
from videogen_common.records.generation import GenerationRecord, StoredVideo
from videogen_common.store import Store

Doc = dict[str, Any]

ACTIVE = [s.value for s in Status if s not in TERMINAL]
FINISHED = [s.value for s in TERMINAL]
# An expiry long past: the reconciler resumes such a generation at its next pass.
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


# The collection's other indexes are beside the queries they serve: leases, generation_reads (listing),
# idempotency, deletions.
INDEXES: list[IndexModel] = [
    # Terminal generations owing their event to the notifier (videogen_common.outbox).
    OUTBOX_INDEX,
    # Generations waiting to be admitted to their provider: "{provider}\n{account}\n{rank}\n{place}\n{id}",
    # set only while waiting, so one lane's line is an ordered range of this small index
    # (repositories.waiting).
    IndexModel([("slot_wait", ASCENDING)], name="by_slot_wait", sparse=True),
    # Waiting generations with a client's deadline, by it: those past it are failed without waiting longer.
    IndexModel([("wait_deadline", ASCENDING)], name="by_wait_deadline", sparse=True),
]


def _seconds_since(since: datetime | None, now: datetime) -> float | None:
    if since is None or (since.tzinfo is None) != (now.tzinfo is None):
        return None
    return max(0.0, (now - since).total_seconds())


def _admission_fields(record: GenerationRecord) -> Doc:
    """What admission decided in memory, saved with the actor's first write: the pool the generation runs
    on, and since when it is out of our queue."""
    fields: Doc = {}
    if record.provider_pool is not None:
        fields["provider_pool"] = record.provider_pool
    if record.admitted_at is not None:
        fields["admitted_at"] = record.admitted_at
    return fields


class TransitionOptions(TypedDict, total=False):
    """How a ``transition`` is made: when (``now``, required), with which ``fields`` besides the state, under
    whose lease (``owner`` and its fencing token ``fence``, or ``lease_token``), ending which try at a
    provider (``attempt``)."""

    now: Required[datetime]
    fields: Doc | None
    owner: str | None
    fence: int | None
    lease_token: str | None
    attempt: Doc | None


async def transition(
    generations: AsyncCollection[Doc],
    doc: Doc,
    target: Status,
    *,
    now: datetime,
    fields: Doc | None = None,
    owner: str | None = None,
    fence: int | None = None,
    lease_token: str | None = None,
    attempt: Doc | None = None,
) -> Doc | None:
    """Move the generation ``doc`` (in the ``generations`` collection) to ``target``: a compare-and-set on
    (id, expected status, version), and on the lease ``owner`` (with its fencing token ``fence``: the lease
    as its claim left it, ``lease_fence``; None matches a generation never claimed) or ``lease_token`` when
    given. Returns the new
    document, or None if someone else moved the generation first; a duplicate or late event can therefore
    never move it backwards.

    The new document is computed rather than read back: the compare-and-set guarantees the stored one was
    ``doc`` just before this write (writes that do not bump the version touch only lease
    fields). A conditional update is also what the embedded store serves fast; it answers findAndModify
    with a collection scan. A terminal transition's write also carries the event it owes the webhooks
    (``video.completed`` or ``video.failed``) in the generation's ``outbox``.

    Each transition also adds the time spent in the state it leaves to ``state_seconds.<state>`` (since
    ``status_since``, or since creation), so a finished generation says how long it queued and
    processed, whichever instances drove it. ``attempt``: a try at a provider that ends with this
    transition, kept in ``provider_attempts`` (``videogen_common.attempts``)."""
    current = Status(doc["status"])
    if not can_transition(current, target):
        raise TransitionError(f"{current} -> {target} is not allowed")
    update: Doc = {"status": target.value, "updated_at": now, "status_since": now, **(fields or {})}
    if target is not Status.QUEUED:
        update.setdefault("queue_reason", None)
    increments: Doc = {"version": 1}
    step = {"status": target.value, "at": now}
    spent = _seconds_since(doc.get("status_since") or doc.get("created_at"), now)
    if spent is not None:
        increments[f"state_seconds.{current.value}"] = spent
    if target.terminal:
        update["lease_owner"] = None
        update["lease_expires_at"] = None
    query: Doc = {"_id": doc["_id"], "status": current.value, "version": doc["version"]}
    if owner is not None:
        query["lease_owner"] = owner
        query["lease_fence"] = fence
    if lease_token is not None:
        query["lease_token"] = lease_token
    pushes: Doc = {"timeline": step}
    if attempt is not None:
        pushes["provider_attempts"] = attempt
    write: Doc = {"$set": update, "$inc": increments, "$push": pushes}
    if target.terminal and doc.get("wait_deadline") is not None:
        write["$unset"] = {"wait_deadline": ""}  # nothing left to fail at the deadline
    moved = {
        **doc,
        **update,
        "version": doc["version"] + 1,
        "timeline": [*(doc.get("timeline") or []), step],
    }
    if attempt is not None:
        moved["provider_attempts"] = [*(doc.get("provider_attempts") or []), attempt]
    if spent is not None:
        totals = dict(doc.get("state_seconds") or {})
        totals[current.value] = totals.get(current.value, 0) + spent
        moved["state_seconds"] = totals
    if target.terminal and doc.get("item_events") is not False:
        # The event it owes the webhooks rides in this same write (videogen_common.outbox): an
        # acknowledged terminal state never lacks it, whatever is lost on the way to the notifier.
        event = terminal_event(GenerationRecord.from_doc(moved))
        write = owing(write, event)
        moved[OUTBOX] = [*(doc.get(OUTBOX) or []), event.to_doc()]
        moved[OUTBOX_AT] = event.created_at
    result = await generations.update_one(query, write)
    return moved if result.modified_count == 1 else None


def _held(record: GenerationRecord, owner: str, *, version: int) -> Doc:
    """The condition of a write by the holder of ``record``'s lease: the owner and the fencing token its claim
    left (``lease_fence``; ``repositories.leases``), at ``version``. A holder whose lease was taken over
    matches nothing."""
    return {"_id": record.id, "lease_owner": owner, "lease_fence": record.lease_fence, "version": version}


class GenerationRepository:
    """Reads answer ``GenerationRecord``s, and the writes a service makes take and return them.
    ``transition`` itself works on a generation's document (what the record-level writes build on, and what
    tests hand it); ``insert_batch`` takes new documents (``GenerationRecord.to_doc``)."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._generations: AsyncCollection[Doc] = store.generations

    # -- creation -----------------------------------------------------------------------------------------

    async def insert_batch(self, docs: list[Doc]) -> None:
        """New generations in one unordered command: each succeeds or fails on its own (a duplicate
        Idempotency-Key fails only its own document; ``BulkWriteError`` reports which)."""
        await self._generations.insert_many(docs, ordered=False)

    # -- what the orchestrator reads ----------------------------------------------------------------------

    async def get(self, generation_id: str) -> GenerationRecord | None:
        doc = await self._generations.find_one({"_id": generation_id})
        return None if doc is None else GenerationRecord.from_doc(doc)

    async def status_of(self, generation_id: str) -> str | None:
        """The generation's status, None if there is no such generation."""
        doc = await self._generations.find_one({"_id": generation_id}, projection={"status": 1})
        return None if doc is None else str(doc["status"])

    async def media_keys_of(self, generation_id: str) -> set[str]:
        """The media keys the generation names (its video's and thumbnail's), none if there is no such
        generation."""
        doc = await self._generations.find_one(
            {"_id": generation_id}, projection={"video_key": 1, "thumbnail_key": 1}
        )
        return {str(doc[k]) for k in ("video_key", "thumbnail_key") if doc and doc.get(k)}

    async def was_canceled(self, generation_id: str) -> bool:
        """Whether the generation failed because its client canceled it, or was deleted: what its actor
        still does for it is discarded, its task at the provider included."""
        doc = await self._generations.find_one(
            {"_id": generation_id}, projection={"status": 1, "error": 1, "deleted_at": 1}
        )
        if doc is None:
            return False
        if doc.get("deleted_at") is not None:
            return True
        if doc["status"] != Status.FAILED.value:
            return False
        return bool((doc.get("error") or {}).get("code") == ErrorCode.CANCELED)

    # -- state transitions --------------------------------------------------------------------------------

    async def transition(self, doc: Doc, target: Status, **how: Unpack[TransitionOptions]) -> Doc | None:
        """The compare-and-set every change of state is (the module's ``transition``)."""
        return await transition(self._generations, doc, target, **how)

    async def fail(
        self,
        record: GenerationRecord,
        error: GenerationError,
        *,
        now: datetime,
        owner: str | None = None,
        ending: tuple[Doc, Doc | None] | None = None,
    ) -> GenerationRecord | None:
        """Move an unfinished generation to ``failed`` with ``error`` (a cancel, or its actor's verdict under
        the lease of ``owner``); None if someone else moved it first. ``ending``: its cost and its last try at
        a provider (``videogen_common.attempts.ending``). What a failed generation gives back of its budgets
        is ``videogen_common.endings``' (every ending goes through ``end_generation``)."""
        extra, attempt = ending or ({}, None)
        fields = {"error": error.to_doc(), **extra}
        return await self._move(record, Status.FAILED, now=now, fields=fields, owner=owner, attempt=attempt)

    async def complete(
        self,
        record: GenerationRecord,
        media: StoredVideo,
        *,
        now: datetime,
        owner: str | None,
        ending: tuple[Doc, Doc | None] | None = None,
    ) -> GenerationRecord | None:
        """Move the generation ``owner`` runs to ``completed`` with its stored media (and ``ending``: its cost
        and its last try); None if it moved."""
        extra, attempt = ending or ({}, None)
        fields: Doc = {
            **extra,
            "video_url": media.video_url,
            "video_key": media.video_key,
            "thumbnail_url": media.thumbnail_url,
        }
        if media.thumbnail_key is not None:
            fields["thumbnail_key"] = media.thumbnail_key
        if media.due_at is not None:
            fields["media_due_at"] = media.due_at
        fields["progress"] = 100
        return await self._move(
            record, Status.COMPLETED, now=now, fields=fields, owner=owner, attempt=attempt
        )

    async def follow_provider(
        self, record: GenerationRecord, target: Status, *, now: datetime, owner: str
    ) -> GenerationRecord | None:
        """Mirror the provider's own state: ``queued`` (for the provider's reasons) or ``processing``."""
        fields = {"queue_reason": QueueReason.PROVIDER} if target is Status.QUEUED else None
        return await self._move(record, target, now=now, fields=fields, owner=owner)

    async def _move(
        self,
        record: GenerationRecord,
        target: Status,
        *,
        now: datetime,
        fields: Doc | None,
        owner: str | None,
        attempt: Doc | None = None,
    ) -> GenerationRecord | None:
        fence = record.lease_fence if owner is not None else None
        moved = await self.transition(
            record.to_doc(), target, now=now, fields=fields, owner=owner, fence=fence, attempt=attempt
        )
        return None if moved is None else GenerationRecord.from_doc(moved)

    async def save_first_frame(
        self, record: GenerationRecord, owner: str, key: str, content_type: str, due_at: datetime
    ) -> GenerationRecord | None:
        """Where the generation's first frame was kept in media storage, once fetched, and when it is due to
        be deleted (unless the video, stored later, is kept longer)."""
        return await self._set_owned(
            record,
            owner,
            {"image_key": key, "image_type": content_type, "media_due_at": due_at},
            image_key=key,
            image_type=content_type,
            media_due_at=due_at,
        )

    async def mark_submitting(
        self, record: GenerationRecord, owner: str, now: datetime, plan: Mapping[str, Any]
    ) -> GenerationRecord | None:
        """A submit that may make a (paid) task begins now, with the request ``plan``, on the provider key the
        generation was admitted to (``record.provider_pool``). Only under a lease that has not run out by
        ``now``: a holder whose renewals could not reach the store (cut off from it) may still find its lease
        unclaimed once healed, but another instance may claim it at any moment, and a submit it then starts
        would be one whose task id is never saved (the generation failed as an interrupted submit)."""
        fields: Doc = {"submit_started_at": now, "provider_request": plan, **_admission_fields(record)}
        live = {"lease_expires_at": {"$not": {"$lt": now}}}
        return await self._set_owned(
            record, owner, fields, submit_started_at=now, provider_request=plan, condition=live
        )

    async def save_task_id(
        self,
        record: GenerationRecord,
        owner: str,
        task_id: str,
        now: datetime,
        plan: Mapping[str, Any] | None,
    ) -> GenerationRecord | None:
        """The provider took the task: its id (and the request, if given) saved before the first poll, with
        the provider key it runs on and when it was accepted."""
        fields: Doc = {"provider_task_id": task_id, "updated_at": now, "task_started_at": now}
        fields.update(_admission_fields(record))
        if plan:
            fields["provider_request"] = plan
        request = plan or record.provider_request
        return await self._set_owned(
            record,
            owner,
            fields,
            provider_task_id=task_id,
            updated_at=now,
            task_started_at=now,
            provider_request=request,
        )

    async def _set_owned(
        self,
        record: GenerationRecord,
        owner: str,
        fields: Doc,
        *,
        condition: Doc | None = None,
        **changes: Any,
    ) -> GenerationRecord | None:
        """Compare-and-set ``fields`` on (id, the lease: owner and fence, version), bumping the version, like
        ``transition``: a conditional update, and the new record computed (``changes``, the same fields)
        rather than read back (the embedded store serves findAndModify with a collection scan). None if the
        generation moved, or its lease is no longer the one ``record`` holds."""
        query = {**_held(record, owner, version=record.version), **(condition or {})}
        result = await self._generations.update_one(query, {"$set": fields, "$inc": {"version": 1}})
        if result.modified_count != 1:
            return None
        return replace(record, version=record.version + 1, **changes)

    async def still_owned(self, record: GenerationRecord, owner: str) -> bool:
        """Whether the generation is still ``owner``'s under the lease ``record`` holds (same fence) and
        unmoved since ``record`` (same version)."""
        found = await self._generations.find_one(
            _held(record, owner, version=record.version), projection={"_id": 1}
        )
        return found is not None

    async def write_progress(self, record: GenerationRecord, owner: str, progress: int) -> bool:
        """Set the progress of a ``processing`` generation still ``owner``'s at ``record``'s version. Changes
        no state, so the version stays (the owner's own compare-and-set writes stay undisturbed)."""
        result = await self._generations.update_one(
            {**_held(record, owner, version=record.version), "status": Status.PROCESSING.value},
            {"$set": {"progress": progress}},
        )
        return result.modified_count == 1

    # -- slots' holders -----------------------------------------------------------------------------------

    async def unfinished_among(self, generation_ids: list[str]) -> set[str]:
        """Which of these generations exist and are not finished."""
        found = self._generations.find(
            {"_id": {"$in": generation_ids}, "status": {"$nin": FINISHED}}, projection={"_id": 1}
        )
        return {doc["_id"] async for doc in found}

    # -- metrics ------------------------------------------------------------------------------------------

    async def count_in_status(self, status: Status) -> int:
        return await self._generations.count_documents({"status": status.value})
