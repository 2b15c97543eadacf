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

import asyncio
import hashlib
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Annotated, Any

import orjson
from aiohttp import web
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from videogen_api import state
from videogen_api.declare import BODY_ERRORS, IDEMPOTENCY_KEY, REQUEST_ID, Endpoint, Parameter, problem
from videogen_api.filters import BatchMetadataParams, choices, choices_description, choices_param
from videogen_api.idempotency import REPLAYED_HEADER, idempotency_key, scoped
from videogen_api.middleware import REQUEST_ID_KEY, account_of, api_key_id_of, caller_of
from videogen_api.paging import DEFAULT_LIMIT, Cursor, Limit, page_from
from videogen_api.problems import Problem, conflict, idempotency_key_reused, not_found, unsupported_media_type
from videogen_api.query import Param, once, parse_query, refused
from videogen_api.routes.generations import _first_frame, cancel_record
from videogen_api.routing import Routed, routed
from videogen_api.schemas.batches import (
    MAX_ITEMS,
    MAX_LISTED_ERRORS,
    Batch,
    BatchCancel,
    BatchGenerationList,
    BatchItem,
    BatchList,
    BatchOptions,
    BatchProblem,
    BatchRequest,
    item_view,
)
from videogen_api.schemas.common import Problem as ProblemModel
from videogen_api.schemas.common import ValidationProblem, field_errors
from videogen_api.serialize import json_response
from videogen_api.spend import give_back, spend_of
from videogen_common.budgets import Hold
from videogen_common.domain import Status
from videogen_common.endings import finish_batch
from videogen_common.events import REQUESTED, Envelope
from videogen_common.generations import new_record
from videogen_common.ids import derived_id, new_id
from videogen_common.records.batch import CANCELING, IN_PROGRESS, ON_INVALID, VALIDATING, BatchRecord
from videogen_common.records.generation import GenerationRecord
from videogen_common.repositories.batched_inserts import insert_all
from videogen_common.repositories.batches import BatchRepository
from videogen_common.scopes import Scope
from videogen_common.store import DuplicateKeyError
from videogen_common.tracing import current_traceparent

log = logging.getLogger(__name__)

routes = web.RouteTableDef()

JSONL_TYPES = ("application/jsonl", "application/x-ndjson")
# Items read from the store per page while streaming results or canceling.
_PAGE = 500
# Items canceled at once.
_CANCELS_AT_ONCE = 32
_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"

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


def item_id(batch_id: str, index: int) -> str:
    """The id of the batch's item ``index``: 22 characters of a hash of the batch's id, then the index in
    base 36 (4 characters), so a batch's items sort in the order given and one written twice is a
    duplicate."""
    digits = ""
    for _ in range(4):
        index, digit = divmod(index, 36)
        digits = _BASE36[digit] + digits
    return derived_id("gen", batch_id)[:26] + digits


# --- The JSONL form's options, as query parameters ---------------------------------------------------------


def _on_invalid(values: Any) -> str:
    value = once(values) if isinstance(values, list) else values
    if value not in ON_INVALID:
        raise refused("enum", f"must be one of {', '.join(ON_INVALID)}")
    return str(value)


def _flag(values: Any) -> bool:
    value = once(values) if isinstance(values, list) else values
    if isinstance(value, bool):
        return value
    if value not in ("true", "false"):
        raise refused("bool", "must be true or false")
    return bool(value == "true")


class BatchQuery(BaseModel):
    """POST /v1/batches's query string when the body is JSONL (application/jsonl): the batch's options."""

    model_config = ConfigDict(frozen=True)

    on_invalid: Annotated[
        str,
        BeforeValidator(_on_invalid),
        Param("BatchOnInvalid", {"type": "string", "enum": list(ON_INVALID), "default": "refuse"}),
    ] = Field("refuse", description="With a JSONL body: as on_invalid in a JSON body.")
    item_events: Annotated[
        bool, BeforeValidator(_flag), Param("BatchItemEvents", {"type": "boolean", "default": True})
    ] = Field(True, description="With a JSONL body: as item_events in a JSON body.")
    metadata: BatchMetadataParams = Field(
        default_factory=dict, description="With a JSONL body: metadata[KEY]=VALUE, the batch's metadata."
    )


# --- POST /v1/batches --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Valid:
    index: int
    item: BatchItem
    destination: Routed
    image_key: str | None
    image_type: str | None


@dataclass
class _Judged:
    valid: list[_Valid]
    refused: list[dict[str, Any]]


async def _body(request: web.Request, limit: int) -> bytes:
    """The raw body, up to ``limit`` bytes (a batch's cap, above a single request's): more is a 413."""
    if request.content_length is not None and request.content_length > limit:
        raise web.HTTPRequestEntityTooLarge(max_size=limit, actual_size=request.content_length)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.content.iter_chunked(1 << 16):
        size += len(chunk)
        if size > limit:
            raise web.HTTPRequestEntityTooLarge(max_size=limit, actual_size=size)
        chunks.append(chunk)
    return b"".join(chunks)


def _one_error(field: str, message: str, code: str) -> Problem:
    return Problem(
        422,
        "validation-error",
        "Invalid request",
        f"{field}: {message}",
        errors=[{"field": field, "message": message, "code": code}],
    )


def _submitted(request: web.Request, raw: bytes) -> tuple[BatchOptions, list[bytes]]:
    """The batch's options and its items' raw JSON, from a JSON body or a JSONL one."""
    if request.content_type in JSONL_TYPES:
        query = parse_query(BatchQuery, request.query)
        options = BatchOptions.model_validate(
            {"metadata": query.metadata, "on_invalid": query.on_invalid, "item_events": query.item_events}
        )
        items = [line for line in raw.split(b"\n") if line.strip()]
    elif request.content_type == "application/json":
        try:
            outer = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise Problem(400, "malformed-json", "Malformed JSON", str(exc)) from None
        if not isinstance(outer, dict):
            raise _one_error("body", "must be a JSON object", "model_type")
        given = outer.pop("items", None)
        try:
            options = BatchOptions.model_validate_json(orjson.dumps(outer))
        except ValidationError as exc:
            errors = field_errors(exc)
            raise Problem(
                422, "validation-error", "Invalid request", errors[0]["message"], errors=errors
            ) from None
        if not isinstance(given, list):
            raise _one_error(
                "items", "must be a list of items", "list_type" if given is not None else "missing"
            )
        items = [orjson.dumps(item) for item in given]
    else:
        raise unsupported_media_type(
            request.headers.get("Content-Type", ""), "application/json or application/jsonl"
        )
    if not 1 <= len(items) <= MAX_ITEMS:
        raise _one_error("items", f"give 1 to {MAX_ITEMS} items (got {len(items)})", "items_count")
    return options, items


def _custom_id_of(raw: bytes) -> str | None:
    """An invalid item's custom_id, if it has a readable one (for the refusal)."""
    try:
        parsed = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    value = parsed.get("custom_id") if isinstance(parsed, dict) else None
    return value if isinstance(value, str) else None


def _refusal(index: int, custom_id: str | None, errors: list[dict[str, str]]) -> dict[str, Any]:
    return {"index": index, "custom_id": custom_id, "errors": errors}


async def _judged(request: web.Request, items: list[bytes], now: datetime) -> _Judged:
    """Each item validated as a single create is (its fields, its routing, its first frame)."""
    app = request.app
    settings = app[state.SETTINGS]
    context = {
        "prompt_max_chars": settings.prompt_max_chars,
        "retention_days_max": settings.media_retention_days,
    }
    snapshot = await app[state.PROVIDER_STATES].snapshot()
    judged = _Judged([], [])
    seen: set[str] = set()
    for index, raw in enumerate(items):
        try:
            item = BatchItem.model_validate_json(raw, context=context)
        except ValidationError as exc:
            judged.refused.append(_refusal(index, _custom_id_of(raw), field_errors(exc)))
            continue
        if item.custom_id is not None:
            if item.custom_id in seen:
                message = "used by an earlier item of this batch"
                error = {"field": "custom_id", "message": message, "code": "duplicate_custom_id"}
                judged.refused.append(_refusal(index, item.custom_id, [error]))
                continue
            seen.add(item.custom_id)
        try:
            destination = routed(item, settings.providers, snapshot, app[state.PRICES], app[state.CATALOGUE])
            image_key, image_type = await _first_frame(request, item, now)
        except Problem as refusal:
            errors = refusal.extensions.get("errors") or [
                {"field": "body", "message": refusal.detail or refusal.title, "code": refusal.slug}
            ]
            judged.refused.append(_refusal(index, item.custom_id, list(errors)))
            continue
        judged.valid.append(_Valid(index, item, destination, image_key, image_type))
    return judged


def _refused_whole(refusals: list[dict[str, Any]], total: int) -> Problem:
    listed = refusals[:MAX_LISTED_ERRORS]
    errors = [
        {
            "field": f"items.{r['index']}" + (f".{r['errors'][0]['field']}" if r["errors"] else ""),
            "message": r["errors"][0]["message"] if r["errors"] else "invalid",
            "code": r["errors"][0]["code"] if r["errors"] else "invalid",
        }
        for r in listed
    ]
    return Problem(
        422,
        "validation-error",
        "Invalid batch",
        f"{len(refusals)} of {total} items are invalid; the batch was not accepted (the first "
        f"{len(listed)} are listed)",
        errors=errors,
        items=listed,
        invalid_count=len(refusals),
    )


async def _reserved(request: web.Request, judged: _Judged, now: datetime) -> list[tuple[_Valid, Hold | None]]:
    """Each valid item's reservation on the account's and the key's budgets (as a single create's); an item
    past a budget is refused, with code budget_exceeded."""
    spend = await spend_of(request.app[state.ACCOUNT_LIMITS], caller_of(request))
    if not spend:
        return [(valid, None) for valid in judged.valid]
    reservations = request.app[state.RESERVATIONS]
    outcomes = await asyncio.gather(
        *(
            reservations.reserve(spend, v.item.duration, v.destination.estimated_cost, now)
            for v in judged.valid
        ),
        return_exceptions=True,
    )
    kept: list[tuple[_Valid, Hold | None]] = []
    failure: BaseException | None = None
    for valid, outcome in zip(judged.valid, outcomes, strict=True):
        if isinstance(outcome, Hold):
            kept.append((valid, outcome))
        elif isinstance(outcome, Problem):
            error = {"field": "body", "message": outcome.detail or outcome.title, "code": "budget_exceeded"}
            judged.refused.append(_refusal(valid.index, valid.item.custom_id, [error]))
        else:
            failure = outcome
    if failure is not None:
        await _give_back_all(request, [hold for _, hold in kept])
        raise failure
    judged.refused.sort(key=lambda r: int(r["index"]))
    return kept


async def _give_back_all(request: web.Request, holds: list[Hold | None]) -> None:
    store = request.app[state.STORE]
    for hold in holds:
        if hold is not None:
            await give_back(store, hold)


def _item_record(
    request: web.Request, batch: BatchRecord, valid: _Valid, hold: Hold | None, now: datetime
) -> GenerationRecord:
    """The generation of a valid item, as a single create makes it (its priority low unless given)."""
    item = valid.item
    deadline = item.deadline_seconds
    return new_record(
        generation_id=item_id(batch.id, valid.index),
        account_id=batch.account_id,
        prompt=item.prompt,
        provider=valid.destination.provider,
        duration=item.duration,
        now=now,
        options=item.options(),
        metadata=item.metadata,
        image_key=valid.image_key,
        image_type=valid.image_type,
        deadline_at=now + timedelta(seconds=deadline) if deadline is not None else None,
        trace_id=request[REQUEST_ID_KEY],
        api_key_id=api_key_id_of(request),
        traceparent=current_traceparent(),
        priority=item.priority.value if item.priority is not None else "low",
        budget_hold=hold.to_doc() if hold is not None else None,
        route=valid.destination.route,
        model=valid.destination.model,
        estimated_cost=valid.destination.estimated_cost,
        retention_days=item.retention_days,
        batch_id=batch.id,
        custom_id=item.custom_id,
        item_events=batch.item_events,
    )


def _digest(request: web.Request, raw: bytes) -> str:
    """What a re-send under the same Idempotency-Key must repeat: the body, its type and the query string."""
    hashed = hashlib.sha256(request.content_type.encode() + b"\n" + request.query_string.encode() + b"\n")
    hashed.update(raw)
    return hashed.hexdigest()


async def _view(request: web.Request, batch: BatchRecord) -> dict[str, Any]:
    """The batch as clients see it; an unfinished one's queued items counted now."""
    queued = 0
    if batch.status in (IN_PROGRESS, CANCELING):
        queued = await request.app[state.GENERATION_READS].queued_in_batch(batch.id)
    return batch.public_view(queued)


async def _answer(request: web.Request, batch: BatchRecord, *, replayed: bool = False) -> web.Response:
    headers = {"Location": f"/v1/batches/{batch.id}"}
    if replayed:
        headers[REPLAYED_HEADER] = "true"
    return json_response(await _view(request, batch), status=202, headers=headers)


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
    query=BatchQuery,
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
    raw = await _body(request, app[state.SETTINGS].batch_max_body_bytes)
    digest = _digest(request, raw)
    batches = BatchRepository(app[state.STORE])
    existing = await batches.by_idempotency_key(scoped(account, key)) if key is not None else None
    if existing is not None:
        if existing.idem_hash != digest:
            raise idempotency_key_reused()
        if existing.status != VALIDATING:
            return await _answer(request, existing, replayed=True)
    options, items = _submitted(request, raw)
    now = app[state.CLOCK].now()
    judged = await _judged(request, items, now)
    if judged.refused and (options.on_invalid == "refuse" or not judged.valid):
        raise _refused_whole(judged.refused, len(items))
    admitted = await _reserved(request, judged, now)
    if judged.refused and (options.on_invalid == "refuse" or not admitted):
        await _give_back_all(request, [hold for _, hold in admitted])
        raise _refused_whole(judged.refused, len(items))
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
            await _give_back_all(request, [hold for _, hold in admitted])
            other = await batches.by_idempotency_key(scoped(account, key)) if key is not None else None
            if other is None:
                raise
            if other.idem_hash != digest:
                raise idempotency_key_reused() from None
            return await _answer(request, other, replayed=True)
    elif not await batches.still_validating(batch.id, now):
        # The reconciler settled it meanwhile (past its bound): it is what was written then.
        await _give_back_all(request, [hold for _, hold in admitted])
        settled = await batches.get(batch.id)
        assert settled is not None
        return await _answer(request, settled, replayed=True)
    records = [_item_record(request, batch, valid, hold, now) for valid, hold in admitted]
    present = await insert_all(app[state.GENERATIONS], [record.to_doc() for record in records])
    if present:  # a re-send of a batch left validating: those were written (and reserved) before
        await _give_back_all(
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


async def _batch_of(request: web.Request) -> BatchRecord:
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
    return json_response(await _view(request, await _batch_of(request)))


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
    batch = await _batch_of(request)
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
    batch = await _batch_of(request)
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
    batch = await _batch_of(request)
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
        {"batch": await _view(request, current), "canceled": canceled, "not_canceled": not_canceled}
    )
