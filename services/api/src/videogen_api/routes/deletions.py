"""DELETE /v1/generations/{id}: a tenant honours a deletion request with one call.

An unfinished generation is canceled first, exactly as the cancel route does (its actor then cancels the
provider's task where the provider allows it, and writes nothing more: its compare-and-set writes fail on a
generation that moved). The finished generation then becomes a tombstone in one compare-and-set write that
also carries its ``video.deleted`` event (``repositories.deletions``): its prompt, negative prompt, metadata,
first frame, links, what the provider was sent and its Idempotency-Key's saved reply are erased; its id,
account, provider, duration, status, error, options and timestamps stay, so usage, budgets and the audit trail
stay exact. Before the answer, every object in its media folder is deleted and its recorded events' data and
deliveries' bodies are erased (``videogen_common.erasure``); the retention sweeper erases again a minute
later, once the notifier has taken in what was on its way. A second delete answers 204 as well, and erases
again."""

from __future__ import annotations

import logging

from aiohttp import web

from videogen_api import state
from videogen_api.declare import GENERATION_ID, Endpoint, problem
from videogen_api.middleware import REQUEST_ID_KEY, account_of
from videogen_api.problems import generation_busy, not_found
from videogen_api.routes.audit import record_change
from videogen_api.routes.generations import CANCEL_ATTEMPTS, cancel_record
from videogen_common.audit import AuditEventType
from videogen_common.erasure import ERASE_AGAIN_AFTER, erase_generation
from videogen_common.event_types import VIDEO_DELETED
from videogen_common.outbox import publish
from videogen_common.repositories.deletions import GenerationDeletions
from videogen_common.scopes import Scope
from videogen_common.tracing import current_traceparent

log = logging.getLogger(__name__)

routes = web.RouteTableDef()


@routes.delete("/v1/generations/{id}")
@Endpoint(
    operation_id="deleteGeneration",
    scope=Scope.GENERATIONS_WRITE,
    tag="Generations",
    summary="Delete a generation",
    description=(
        "Its video, thumbnail and first frame are deleted from storage, its links answer 410 Gone, and its "
        "prompt, negative_prompt, metadata and image are erased, from its recorded events and deliveries "
        "too. An unfinished one is canceled first, as the cancel route does. GET still answers it, as a "
        "tombstone (deleted: true, status unchanged), and usage still counts it; lists leave it out. "
        "video.deleted is sent. Deleting it again answers 204 too."
    ),
    status=204,
    answer="Deleted (or deleted before).",
    parameters=(GENERATION_ID,),
    errors={404: "NotFound", 409: problem("generation-busy: it kept changing; try again.")},
)
async def delete_generation(request: web.Request) -> web.Response:
    app = request.app
    generation_id = request.match_info["id"]
    account = account_of(request)
    store, clock = app[state.STORE], app[state.CLOCK]
    reads, deletions = app[state.GENERATION_READS], GenerationDeletions(store)
    for _ in range(CANCEL_ATTEMPTS):
        record = await reads.get_for_account(generation_id, account)
        if record is None:
            # A foreign id answers exactly like an unknown one, and deletes nothing.
            raise not_found(f"no generation {generation_id!r}")
        if record.deleted_at is not None:
            break  # deleted before: erased again below
        if not record.status.terminal and (record := await cancel_record(request, record)) is None:
            continue  # it moved between our read and our cancel: read again
        now = clock.now()
        deleted = record.tombstone(now, media_due_at=now)
        event = VIDEO_DELETED.event(
            deleted,
            change="deleted",
            at=now,
            trace_id=request[REQUEST_ID_KEY],
            traceparent=current_traceparent(),
        )
        if await deletions.delete(record, deleted, owes=event):
            await publish(app[state.PUBLISHER], event)
            await record_change(
                request,
                AuditEventType.GENERATION_DELETED,
                ("generation", generation_id),
                {"status": record.status.value, "provider": record.provider, "duration": record.duration},
            )
            break
    else:
        raise generation_busy(generation_id)
    # Due to the sweeper since the tombstone's write, in case this process stops here; erased now, and due
    # again a little later for what is still on its way.
    erased = await erase_generation(store, app[state.MEDIA], generation_id, account)
    await deletions.due_again([generation_id], clock.now() + ERASE_AGAIN_AFTER)
    log.info(
        "generation deleted",
        extra={"generation_id": generation_id, "objects": erased.objects, "deliveries": erased.deliveries},
    )
    return web.Response(status=204)
