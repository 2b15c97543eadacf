"""What POST /v1/batches does before it writes: the body read (JSON or JSONL, within the batch's size
cap), each item judged as a single create is (fields, routing, first frame), the valid ones reserved on the
budgets, and the generation each becomes (``routes.batches`` says the whole order)."""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Annotated, Any

import orjson
from aiohttp import web
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from videogen_api import state
from videogen_api.filters import BatchMetadataParams
from videogen_api.middleware import REQUEST_ID_KEY, api_key_id_of, caller_of
from videogen_api.problems import Problem, unsupported_media_type
from videogen_api.query import Param, once, parse_query, refused
from videogen_api.routes.generations import first_frame
from videogen_api.routing import Routed, routed
from videogen_api.schemas.batches import (
    MAX_ITEMS,
    MAX_LISTED_ERRORS,
    BatchItem,
    BatchOptions,
)
from videogen_api.schemas.common import field_errors
from videogen_api.spend import give_back, spend_of
from videogen_common.budgets import Hold
from videogen_common.generations import new_record
from videogen_common.ids import derived_id
from videogen_common.records.batch import ON_INVALID, BatchRecord
from videogen_common.records.generation import GenerationRecord
from videogen_common.tracing import current_traceparent

JSONL_TYPES = ("application/jsonl", "application/x-ndjson")
_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"


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


# --- The items, judged and reserved -----------------------------------------------------------------


@dataclass(frozen=True)
class Valid:
    index: int
    item: BatchItem
    destination: Routed
    image_key: str | None
    image_type: str | None


@dataclass
class Judged:
    valid: list[Valid]
    refused: list[dict[str, Any]]


async def read_body(request: web.Request, limit: int) -> bytes:
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


def submitted(request: web.Request, raw: bytes) -> tuple[BatchOptions, list[bytes]]:
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


async def judge(request: web.Request, items: list[bytes], now: datetime) -> Judged:
    """Each item validated as a single create is (its fields, its routing, its first frame)."""
    app = request.app
    settings = app[state.SETTINGS]
    context = {
        "prompt_max_chars": settings.prompt_max_chars,
        "retention_days_max": settings.media_retention_days,
    }
    snapshot = await app[state.PROVIDER_STATES].snapshot()
    judged = Judged([], [])
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
            image_key, image_type = await first_frame(request, item, now)
        except Problem as refusal:
            errors = refusal.extensions.get("errors") or [
                {"field": "body", "message": refusal.detail or refusal.title, "code": refusal.slug}
            ]
            judged.refused.append(_refusal(index, item.custom_id, list(errors)))
            continue
        judged.valid.append(Valid(index, item, destination, image_key, image_type))
    return judged


def refused_whole(refusals: list[dict[str, Any]], total: int) -> Problem:
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


async def reserve(request: web.Request, judged: Judged, now: datetime) -> list[tuple[Valid, Hold | None]]:
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
    kept: list[tuple[Valid, Hold | None]] = []
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
        await give_back_all(request, [hold for _, hold in kept])
        raise failure
    judged.refused.sort(key=lambda r: int(r["index"]))
    return kept


async def give_back_all(request: web.Request, holds: list[Hold | None]) -> None:
    store = request.app[state.STORE]
    for hold in holds:
        if hold is not None:
            await give_back(store, hold)


def item_record(
    request: web.Request, batch: BatchRecord, valid: Valid, hold: Hold | None, now: datetime
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


def digest(request: web.Request, raw: bytes) -> str:
    """What a re-send under the same Idempotency-Key must repeat: the body, its type and the query string."""
    hashed = hashlib.sha256(request.content_type.encode() + b"\n" + request.query_string.encode() + b"\n")
    hashed.update(raw)
    return hashed.hexdigest()
