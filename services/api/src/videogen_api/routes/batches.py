"""POST /v1/batches, GET /v1/batches/{id}, GET /v1/batches, GET /v1/batches/{id}/generations, GET
/v1/batches/{id}/results, POST /v1/batches/{id}/cancel.

A batch's items are ordinary generations carrying its id; accepting one is this, in order:

1. **Validated item by item**, with the rules of a single create: each item is a ``GenerateRequest`` (plus its
   ``custom_id``, unique within the batch), routed against the providers' states as one create is, its first
   frame checked; an item that fails is refused with its index, ``custom_id`` and errors. With
   ``on_invalid: refuse`` (the default) one refused item refuses the batch (422, the first 100 listed, nothing
   written or reserved); with ``skip`` the refusals are recorded on the batch.
2. **Budgets, item by item**: each item's seconds and estimated cost are reserved as a single create's are
   (``spend.Reservations``: the items leave as one group, so a batch that fits is one conditional update per
   counter; one that does not is reserved item by item, in order, and exactly what fits is admitted). An item
   past the budget is refused like an invalid one (code ``budget_exceeded``). Nothing is reserved later: the
   orchestrator runs what was admitted.
3. **The batch document, ``validating``** (under the Idempotency-Key, if one was sent: its unique index makes
   one batch per key).
4. **The items, in bulk** (unordered ``insert_many`` of 1,000 documents), each with an id derived from the
   batch's id and its index, so writing them again writes nothing twice; then the batch becomes
   ``in_progress``, and each item's request is handed to the producer like a single create's. A process that
   dies between 3 and 4 leaves a ``validating`` batch: re-sending it with the same key writes the missing
   items (what they reserved again is given back for those already written) and finishes the move. Without a
   re-send the written items still run (the reconciler dispatches them), and once the batch has been
   ``validating`` for the orchestrator's ``batch_validating_seconds`` (5 minutes) the reconciler settles it
   (``endings.settle_validating``): ``in_progress`` with the items written, or ``failed`` if none was.

Items default to ``priority: "low"``: they wait in their account's lane behind its normal work, and other
accounts share the provider fairly with it (admission's lanes); the account's concurrency cap holds for them
as for any generation."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from aiohttp import web
from pydantic import BaseModel, ConfigDict

from videogen_api import state
from videogen_api.declare import BODY_ERRORS, IDEMPOTENCY_KEY, Endpoint, Parameter, problem
from videogen_api.idempotency import REPLAYED_HEADER, idempotency_key, scoped
from videogen_api.middleware import REQUEST_ID_KEY, account_of, api_key_id_of
from videogen_api.paging import DEFAULT_LIMIT, Cursor, Limit, page_from
from videogen_api.problems import idempotency_key_reused, not_found
from videogen_api.query import parse_query
from videogen_api.routes import batch_intake as intake
from videogen_api.schemas.batches import (
    MAX_ITEMS,
    MAX_LISTED_ERRORS,
    Batch,
    BatchList,
    BatchProblem,
    BatchRequest,
)
from videogen_api.schemas.common import Problem as ProblemModel
from videogen_api.schemas.common import ValidationProblem
from videogen_api.serialize import json_response
from videogen_common.events import REQUESTED, Envelope
from videogen_common.ids import new_id
from videogen_common.records.batch import CANCELING, IN_PROGRESS, VALIDATING, BatchRecord
from videogen_common.repositories.batched_inserts import insert_all
from videogen_common.repositories.batches import BatchRepository
from videogen_common.scopes import Scope
from videogen_common.store import DuplicateKeyError

log = logging.getLogger(__name__)

routes = web.RouteTableDef()

BATCH_ID = Parameter(
    "BatchId",
    {
        "name": "id",
        "in": "path",
        "required": True,
        "description": "The batch's id.",
        "schema": {"type": "string"},
    },
)


async def batch_view(request: web.Request, batch: BatchRecord) -> dict[str, Any]:
    """The batch as clients see it; an unfinished one's queued items counted now."""
    queued = 0
    if batch.status in (IN_PROGRESS, CANCELING):
        queued = await request.app[state.GENERATION_READS].queued_in_batch(batch.id)
    return batch.public_view(queued)


async def _answer(request: web.Request, batch: BatchRecord, *, replayed: bool = False) -> web.Response:
    headers = {"Location": f"/v1/batches/{batch.id}"}
    if replayed:
        headers[REPLAYED_HEADER] = "true"
    return json_response(await batch_view(request, batch), status=202, headers=headers)


@routes.post("/v1/batches")
@Endpoint(
    operation_id="createBatch",
    scope=Scope.GENERATIONS_WRITE,
    tag="Batches",
    summary="Submit a batch of generations",
    description=(
        f"Up to {MAX_ITEMS} items, each the body of POST /v1/generate plus an optional custom_id (unique "
        "within the batch), as a JSON body (items, metadata, on_invalid, item_events) or as JSONL "
        "(Content-Type: application/jsonl, one item per line; the options then as query parameters: "
        "on_invalid, item_events, metadata[KEY]). Each item is validated, routed and reserved on the budgets "
        "as a single create is; with on_invalid refuse (the default) one invalid item refuses the batch "
        f"(422, the first {MAX_LISTED_ERRORS} invalid items listed by index and custom_id, nothing written), "
        "with skip the valid ones are accepted and the others listed in the batch's refused. An item past a "
        "budget is invalid with code budget_exceeded. Items are low priority unless they say otherwise. "
        "With an Idempotency-Key, re-sending the same body answers the same batch (with "
        f"{REPLAYED_HEADER}: true) and creates nothing more."
    ),
    status=202,
    answer="Accepted: the batch as created.",
    model=Batch,
    query=intake.BatchQuery,
    parameters=(IDEMPOTENCY_KEY,),
    body=BatchRequest,
    headers=("Location", REPLAYED_HEADER),
    errors={
        **BODY_ERRORS,
        415: "UnsupportedMediaType",
        422: problem(
            "validation-error: the batch's options are invalid, or (with on_invalid refuse) items are: "
            f"items lists the first {MAX_LISTED_ERRORS} by index and custom_id, invalid_count counts them; "
            "idempotency-key-reused: the key was used before with a different body.",
            BatchProblem,
            ValidationProblem,
            ProblemModel,
        ),
    },
)
async def create_batch(request: web.Request) -> web.Response:
    app = request.app
    account = account_of(request)
    key = idempotency_key(request)
    raw = await intake.read_body(request, app[state.SETTINGS].batch_max_body_bytes)
    digest = intake.digest(request, raw)
    batches = BatchRepository(app[state.STORE])
    existing = await batches.by_idempotency_key(scoped(account, key)) if key is not None else None
    if existing is not None:
        if existing.idem_hash != digest:
            raise idempotency_key_reused()
        if existing.status != VALIDATING:
            return await _answer(request, existing, replayed=True)
    options, items = intake.submitted(request, raw)
    now = app[state.CLOCK].now()
    judged = await intake.judge(request, items, now)
    if judged.refused and (options.on_invalid == "refuse" or not judged.valid):
        raise intake.refused_whole(judged.refused, len(items))
    admitted = await intake.reserve(request, judged, now)
    if judged.refused and (options.on_invalid == "refuse" or not admitted):
        await intake.give_back_all(request, [hold for _, hold in admitted])
        raise intake.refused_whole(judged.refused, len(items))
    costs = [v.destination.estimated_cost for v, _ in admitted if v.destination.estimated_cost is not None]
    batch = existing or BatchRecord(
        id=new_id("bat", now),
        account_id=account,
        status=VALIDATING,
        created_at=now,
        updated_at=now,
        total=len(admitted),
        item_events=options.item_events,
        metadata=dict(options.metadata),
        refused=judged.refused,
        estimated_cost=round(sum(costs), 6) if costs else None,
        api_key_id=api_key_id_of(request),
        idem=scoped(account, key) if key is not None else None,
        idem_hash=digest if key is not None else None,
    )
    if existing is None:
        try:
            await batches.insert(batch)
        except DuplicateKeyError:
            # A concurrent re-send under the same key wrote it first: answer its batch.
            await intake.give_back_all(request, [hold for _, hold in admitted])
            other = await batches.by_idempotency_key(scoped(account, key)) if key is not None else None
            if other is None:
                raise
            if other.idem_hash != digest:
                raise idempotency_key_reused() from None
            return await _answer(request, other, replayed=True)
    elif not await batches.still_validating(batch.id, now):
        # The reconciler settled it meanwhile (past its bound): it is what was written then.
        await intake.give_back_all(request, [hold for _, hold in admitted])
        settled = await batches.get(batch.id)
        assert settled is not None
        return await _answer(request, settled, replayed=True)
    records = [intake.item_record(request, batch, valid, hold, now) for valid, hold in admitted]
    present = await insert_all(app[state.GENERATIONS], [record.to_doc() for record in records])
    if present:  # a re-send of a batch left validating: those were written (and reserved) before
        await intake.give_back_all(
            request, [hold for (v, hold), r in zip(admitted, records, strict=True) if r.id in present]
        )
    await batches.items_in(batch.id, now)
    publisher = app[state.PUBLISHER]
    request_id = request[REQUEST_ID_KEY]
    for record in records:
        if record.id in present:
            continue
        view = record.public_view()
        publisher.publish_soon(
            Envelope(
                event_id=new_id("evt", now),
                type=REQUESTED,
                occurred_at=view["created_at"],
                account_id=account,
                generation=view,
                trace_id=request_id,
                traceparent=record.traceparent,
            )
        )
    log.info(
        "batch accepted", extra={"batch_id": batch.id, "items": len(records), "refused": len(judged.refused)}
    )
    accepted = await batches.get(batch.id)
    assert accepted is not None
    return await _answer(request, accepted, replayed=existing is not None)


# --- Reading batches ---------------------------------------------------------------------------------------


async def batch_of(request: web.Request) -> BatchRecord:
    batch_id = request.match_info["id"]
    batch = await BatchRepository(request.app[state.STORE]).get_for_account(batch_id, account_of(request))
    if batch is None:
        raise not_found(f"no batch {batch_id!r}")
    return batch


@routes.get("/v1/batches/{id}")
@Endpoint(
    operation_id="getBatch",
    scope=Scope.GENERATIONS_READ,
    tag="Batches",
    summary="Read a batch",
    description=(
        "Its status, its items counted by state (every count but queued is kept on the batch as items end; "
        "queued is counted when it is read), its estimated and actual cost. Another account's batch answers "
        "like an unknown one."
    ),
    status=200,
    answer="The batch.",
    model=Batch,
    parameters=(BATCH_ID,),
    errors={404: "NotFound"},
)
async def get_batch(request: web.Request) -> web.Response:
    return json_response(await batch_view(request, await batch_of(request)))


class BatchListing(BaseModel):
    """GET /v1/batches's query string: limit and cursor."""

    model_config = ConfigDict(frozen=True)

    limit: Limit = DEFAULT_LIMIT
    cursor: Cursor = None


def _batch_position(batch: BatchRecord) -> tuple[datetime, str]:
    return batch.created_at, batch.id


@routes.get("/v1/batches")
@Endpoint(
    operation_id="listBatches",
    scope=Scope.GENERATIONS_READ,
    tag="Batches",
    summary="List batches",
    description="The account's batches, newest first. In a list, unfinished items count as processing.",
    status=200,
    answer="A page of batches.",
    model=BatchList,
    query=BatchListing,
    errors={422: "Invalid"},
)
async def list_batches(request: web.Request) -> web.Response:
    listing = parse_query(BatchListing, request.query)
    batches = BatchRepository(request.app[state.STORE])
    account = account_of(request)
    return json_response(
        await page_from(
            lambda position, limit: batches.newest_first(account, position, limit),
            listing,
            lambda batch: batch.public_view(),
            _batch_position,
        )
    )
