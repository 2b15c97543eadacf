"""GET /v1/batches/{id}/generations, GET /v1/batches/{id}/results, POST /v1/batches/{id}/cancel: a batch's
items, read one page or streamed whole, and canceled."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Annotated, Any

import orjson
from aiohttp import web
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from videogen_api import state
from videogen_api.declare import REQUEST_ID, Endpoint, problem
from videogen_api.filters import choices, choices_description, choices_param
from videogen_api.middleware import REQUEST_ID_KEY
from videogen_api.paging import DEFAULT_LIMIT, Cursor, Limit, page_from
from videogen_api.problems import conflict
from videogen_api.query import Param, once, parse_query
from videogen_api.routes.batches import BATCH_ID, batch_of, batch_view
from videogen_api.routes.generations import cancel_record
from videogen_api.schemas.batches import (
    BatchCancel,
    BatchGenerationList,
    item_view,
)
from videogen_api.serialize import json_response
from videogen_common.domain import Status
from videogen_common.endings import finish_batch
from videogen_common.records.batch import VALIDATING
from videogen_common.records.generation import GenerationRecord
from videogen_common.repositories.batches import BatchRepository
from videogen_common.scopes import Scope

routes = web.RouteTableDef()

# Items read from the store per page while streaming results or canceling.
_PAGE = 500
# Items canceled at once.
_CANCELS_AT_ONCE = 32


class BatchItemFilters(BaseModel):
    """GET /v1/batches/{id}/generations's query string."""

    model_config = ConfigDict(frozen=True, populate_by_name=True)

    statuses: Annotated[
        tuple[Status, ...], BeforeValidator(choices(Status)), choices_param("GenerationStatus", Status)
    ] = Field((), alias="status", description=choices_description("Only these statuses"))
    custom_id: Annotated[str | None, BeforeValidator(once), Param("BatchCustomId", {"type": "string"})] = (
        Field(None, description="Only the item with this custom_id.")
    )
    limit: Limit = DEFAULT_LIMIT
    cursor: Cursor = None


def _item_position(record: GenerationRecord) -> tuple[datetime, str]:
    return record.created_at, record.id


def _item_view(record: GenerationRecord) -> dict[str, Any]:
    return item_view(record.public_view(), record.batch_id or "", record.custom_id)


@routes.get("/v1/batches/{id}/generations")
@Endpoint(
    operation_id="listBatchGenerations",
    scope=Scope.GENERATIONS_READ,
    tag="Batches",
    summary="List a batch's generations",
    description="Its items' generations in the order they were given, filtered by status and custom_id.",
    status=200,
    answer="A page of the batch's generations.",
    model=BatchGenerationList,
    parameters=(BATCH_ID,),
    query=BatchItemFilters,
    errors={404: "NotFound", 422: "Invalid"},
)
async def list_batch_generations(request: web.Request) -> web.Response:
    listing = parse_query(BatchItemFilters, request.query)
    batch = await batch_of(request)
    reads = request.app[state.GENERATION_READS]

    async def fetch(position: tuple[datetime, str] | None, limit: int) -> list[GenerationRecord]:
        return await reads.of_batch(
            batch.account_id,
            batch.id,
            statuses=listing.statuses,
            custom_id=listing.custom_id,
            after=position[1] if position is not None else None,
            limit=limit,
        )

    return json_response(await page_from(fetch, listing, _item_view, _item_position))


def result_line(record: GenerationRecord) -> dict[str, Any]:
    """One item's outcome in the results file."""
    view = record.public_view()
    return {
        "id": record.id,
        "custom_id": record.custom_id,
        "status": view["status"],
        "video_url": view["video_url"],
        "thumbnail_url": view["thumbnail_url"],
        "error": view["error"],
        "cost": view["cost"],
    }


@routes.get("/v1/batches/{id}/results")
@Endpoint(
    operation_id="getBatchResults",
    scope=Scope.GENERATIONS_READ,
    tag="Batches",
    summary="Download a batch's results",
    description=(
        "JSONL, one line per item in the order given: id, custom_id, status, video_url and thumbnail_url "
        "(signed links, once completed), error (once failed), cost. Streamed; an unfinished batch's "
        "unfinished items show their status now."
    ),
    status=200,
    answer="The results, one JSON object per line.",
    parameters=(BATCH_ID,),
    content={"application/jsonl": {"schema": {"type": "string"}}},
    errors={404: "NotFound"},
)
async def batch_results(request: web.Request) -> web.StreamResponse:
    batch = await batch_of(request)
    reads = request.app[state.GENERATION_READS]
    # Sent before the handler returns: the request id is set here.
    response = web.StreamResponse(
        headers={"Content-Type": "application/jsonl", REQUEST_ID: request[REQUEST_ID_KEY]}
    )
    await response.prepare(request)
    lines: list[bytes] = []
    async for record in reads.all_of_batch(batch.account_id, batch.id, batch_size=_PAGE):
        lines.append(orjson.dumps(result_line(record)))
        if len(lines) == _PAGE:
            await response.write(b"\n".join(lines) + b"\n")
            lines = []
    if lines:
        await response.write(b"\n".join(lines) + b"\n")
    await response.write_eof()
    return response


# --- Cancel ------------------------------------------------------------------------------------------------


@routes.post("/v1/batches/{id}/cancel")
@Endpoint(
    operation_id="cancelBatch",
    scope=Scope.GENERATIONS_WRITE,
    tag="Batches",
    summary="Cancel a batch",
    description=(
        "Every item that has not started (nothing submitted to a provider yet) is canceled, as POST "
        "/v1/generations/{id}/cancel cancels one (failed, error code canceled; what it reserved is given "
        "back); those already at a provider are left to finish and listed in not_canceled. The batch is "
        "canceling until its last item ends, then canceled (and batch.completed is sent)."
    ),
    status=200,
    answer="The batch, how many items were canceled and which could not be.",
    model=BatchCancel,
    parameters=(BATCH_ID,),
    errors={404: "NotFound", 409: problem("batch-finished: every item has ended already; batch-validating.")},
)
async def cancel_batch(request: web.Request) -> web.Response:
    app = request.app
    batch = await batch_of(request)
    batches = BatchRepository(app[state.STORE])
    if batch.finished:
        raise conflict(
            f"batch {batch.id} has finished ({batch.status})", slug="batch-finished", title="Batch finished"
        )
    if batch.status == VALIDATING:
        raise conflict(
            f"batch {batch.id} is still being written", slug="batch-validating", title="Batch validating"
        )
    await batches.canceling(batch.id, app[state.CLOCK].now())
    reads = app[state.GENERATION_READS]
    canceled = 0
    not_canceled: list[str] = []

    async def cancel_one(record: GenerationRecord) -> bool | None:
        """True: canceled; False: it had started; None: it ended meanwhile."""
        for _ in range(3):
            if record.status.terminal:
                return None
            if record.provider_task_id is not None or record.submit_started_at is not None:
                return False
            if await cancel_record(request, record) is not None:
                return True
            again = await reads.get_for_account(record.id, record.account_id)
            if again is None:
                return None
            record = again
        return False

    after: str | None = None
    unfinished = (Status.PROCESSING, Status.QUEUED)
    while True:
        page = await reads.of_batch(batch.account_id, batch.id, statuses=unfinished, after=after, limit=_PAGE)
        if not page:
            break
        for start in range(0, len(page), _CANCELS_AT_ONCE):
            chunk = page[start : start + _CANCELS_AT_ONCE]
            for record, outcome in zip(chunk, await asyncio.gather(*map(cancel_one, chunk)), strict=True):
                if outcome is True:
                    canceled += 1
                elif outcome is False:
                    not_canceled.append(record.id)
        after = page[-1].id
        if len(page) < _PAGE:
            break
    now = app[state.CLOCK].now()
    current = await batches.get(batch.id)
    assert current is not None
    await finish_batch(app[state.STORE], current, now, app[state.PUBLISHER])
    current = await batches.get(batch.id)
    assert current is not None
    return json_response(
        {"batch": await batch_view(request, current), "canceled": canceled, "not_canceled": not_canceled}
    )
