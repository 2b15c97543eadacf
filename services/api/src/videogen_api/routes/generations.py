"""POST /v1/generate, GET /v1/generations/{id}, GET /v1/generations, POST /v1/generations/{id}/cancel (the
delete is ``routes.deletions``)."""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timedelta
from typing import Any

from aiohttp import web

from videogen_api import state
from videogen_api.declare import (
    BODY_ERRORS,
    CANCEL_AFTER_HEADER,
    GENERATION_ID,
    IDEMPOTENCY_KEY,
    PREFER_WAIT,
    Endpoint,
    problem,
    with_headers,
)
from videogen_api.filters import GenerationFilters
from videogen_api.idempotency import (
    REPLAYED_HEADER,
    idempotency_fields,
    idempotency_key,
    request_hash,
    saved_response,
)
from videogen_api.middleware import REQUEST_ID_KEY, account_of, api_key_id_of, caller_of
from videogen_api.paging import page_from
from videogen_api.prefer import (
    CANCEL_AFTER,
    MAX_WAIT_SECONDS,
    PREFER,
    PREFERENCE_APPLIED,
    applied,
    cancel_after,
    preferred_wait,
)
from videogen_api.problems import (
    Problem,
    generation_busy,
    generation_terminal,
    invalid,
    not_found,
    store_unavailable,
)
from videogen_api.query import parse_query
from videogen_api.queue_position import view_with_position
from videogen_api.routes.bodies import json_body
from videogen_api.routes.uploads import usable_upload
from videogen_api.routing import routed
from videogen_api.schemas.common import Problem as ProblemModel
from videogen_api.schemas.common import ValidationProblem, parse_body
from videogen_api.schemas.generations import MAX_DEADLINE_SECONDS, GenerateRequest, Generation, GenerationList
from videogen_api.serialize import json_response
from videogen_api.spend import give_back, spend_of
from videogen_common.destinations.addresses import AddressPolicy, refused_host
from videogen_common.endings import end_generation
from videogen_common.events import REQUESTED, Envelope
from videogen_common.failures import CANCELED_BY_CLIENT
from videogen_common.generations import new_record, status_envelope, terminal_event
from videogen_common.ids import new_id
from videogen_common.outbox import publish
from videogen_common.records.generation import GenerationRecord
from videogen_common.scopes import Scope
from videogen_common.store import DuplicateKeyError
from videogen_common.tracing import annotate, current_traceparent

log = logging.getLogger(__name__)

routes = web.RouteTableDef()

# Compare-and-set attempts a cancel makes while the generation keeps moving between unfinished states.
CANCEL_ATTEMPTS = 5


def _deadline_seconds(request: web.Request, in_body: int | None) -> int | None:
    """The client's deadline: ``deadline_seconds`` or the ``Cancel-After`` header, the sooner of the two."""
    try:
        in_header = cancel_after(request.headers.get(CANCEL_AFTER))
    except ValueError as exc:
        raise invalid([{"field": CANCEL_AFTER, "message": str(exc), "code": "duration"}]) from None
    if in_header is not None and in_header > MAX_DEADLINE_SECONDS:
        message = f"must be at most {MAX_DEADLINE_SECONDS} seconds"
        raise invalid([{"field": CANCEL_AFTER, "message": message, "code": "duration"}])
    given = [s for s in (in_body, in_header) if s is not None]
    return min(given) if given else None


async def _accepted(request: web.Request, view: dict[str, Any], *, replayed: bool = False) -> web.Response:
    headers = {"Location": f"/v1/generations/{view['id']}"}
    if replayed:
        headers[REPLAYED_HEADER] = "true"
    view, waited = await _waited(request, view["id"], view)
    return json_response(view, status=202, headers={**headers, **waited})


async def _waited(
    request: web.Request, generation_id: str, view: dict[str, Any] | None = None
) -> tuple[dict[str, Any], dict[str, str]]:
    """With ``Prefer: wait=N``: the generation once it is finished, or after N seconds (and the header saying
    the preference was applied); without, ``view`` (or the generation as stored). A 404 if it is not the
    caller's."""
    account = account_of(request)
    generations = request.app[state.GENERATION_READS]

    async def read() -> GenerationRecord | None:
        return await generations.get_for_account(generation_id, account)

    seconds = preferred_wait(request.headers.getall(PREFER, []))
    if seconds is None:
        if view is None and (record := await read()) is not None:
            view = await view_with_position(request.app[state.STORE], record)
        found = view
        waited: dict[str, str] = {}
    else:
        found = await request.app[state.FEED].until_terminal(generation_id, read, seconds)
        waited = applied(seconds)
        if found is not None and found["status"] == "queued" and (record := await read()) is not None:
            found = await view_with_position(
                request.app[state.STORE], record
            )  # still waiting: say where in line
    if found is None:
        # A foreign id answers exactly like an unknown one.
        raise not_found(f"no generation {generation_id!r}")
    return found, waited


async def first_frame(
    request: web.Request, body: GenerateRequest, now: datetime
) -> tuple[str | None, str | None]:
    """Where the orchestrator finds the first frame asked for (internal fields of the generation: the media
    key and type of an upload of this account's, still usable), after checking that a URL's host is not an
    address we refuse to connect to (a name is checked again, after DNS, when the orchestrator fetches it)."""
    image = body.image
    if image is None:
        return None, None
    if image.upload_id is not None:
        upload = await usable_upload(request.app[state.STORE], account_of(request), image.upload_id, now)
        return upload["key"], upload["content_type"]
    assert image.url is not None
    policy = AddressPolicy(request.app[state.SETTINGS].image_fetch_networks)
    if (why := refused_host(image.url, policy)) is not None:
        message = f"the URL points at an address we do not fetch from ({why})"
        raise invalid([{"field": "image.url", "message": message, "code": "destination_not_allowed"}])
    return None, None


@routes.post("/v1/generate")
@Endpoint(
    operation_id="createGeneration",
    scope=Scope.GENERATIONS_WRITE,
    spends_budget=True,
    tag="Generations",
    summary="Submit a generation",
    description=(
        "The generation is durably stored before the answer, with status processing; the orchestrator takes "
        "it from there. With an Idempotency-Key, a repeat of the same request replays the saved 202 (with "
        f"{REPLAYED_HEADER}: true) and creates nothing; concurrent repeats create one generation. With "
        f"{PREFER}: wait=N the answer comes once the generation is finished or after N seconds (at most "
        f"{MAX_WAIT_SECONDS}), whichever is first. Its seconds and estimated cost are reserved on the "
        "account's and the key's budgets first: one it would pass refuses it with 429 budget-exceeded, and "
        "nothing is written."
    ),
    status=202,
    answer="Accepted: the generation as created (or, with Prefer: wait, as it is when the answer comes).",
    model=Generation,
    parameters=(IDEMPOTENCY_KEY, PREFER_WAIT, CANCEL_AFTER_HEADER),
    body=GenerateRequest,
    headers=("Location", REPLAYED_HEADER, PREFERENCE_APPLIED),
    errors={
        **BODY_ERRORS,
        404: problem("not-found: image.upload_id names no upload of this account."),
        422: problem(
            "validation-error: a field is invalid (one entry per field in errors; for a routed request that "
            "no provider can make, one per provider and reason); "
            "provider-unavailable: that provider is not enabled here (errors names provider); "
            "idempotency-key-reused: the key was used before with a different body.",
            ValidationProblem,
            ProblemModel,
        ),
        503: with_headers(
            problem(
                "store-unavailable: the store could not be reached in time (within about twice "
                "VIDEOGEN_API_STORE_TIMEOUT_SECONDS); the generation may or may not have been created, so "
                "retry with the same Idempotency-Key, which makes it at most once."
            ),
            "Retry-After",
        ),
    },
)
async def create_generation(request: web.Request) -> web.Response:
    app = request.app
    settings = app[state.SETTINGS]
    key = idempotency_key(request)
    body = parse_body(
        GenerateRequest,
        await json_body(request),
        prompt_max_chars=settings.prompt_max_chars,
        retention_days_max=settings.media_retention_days,
    )
    # Where it goes first (its candidates and why, when it asks for routing), and what that costs.
    snapshot = await app[state.PROVIDER_STATES].snapshot()
    destination = routed(body, settings.providers, snapshot, app[state.PRICES], app[state.CATALOGUE])
    options = body.options()
    account = account_of(request)
    request_id = request[REQUEST_ID_KEY]
    now = app[state.CLOCK].now()
    try:
        image_key, image_type = await first_frame(request, body, now)
    except Problem:
        # A repeat of a request that was accepted answers as it did, even if its upload has expired since.
        if key is not None:
            saved = await saved_response(app[state.STORE], account, key, request_hash(body))
            if saved is not None:
                return await _accepted(request, saved, replayed=True)
        raise
    deadline = _deadline_seconds(request, body.deadline_seconds)
    digest = request_hash(body) if key is not None else ""
    # The account's and the key's budgets: reserved before anything is written (429 budget-exceeded when one
    # has no room). A repeat of an accepted request replays its answer and reserves nothing.
    spend = await spend_of(app[state.ACCOUNT_LIMITS], caller_of(request))
    hold = None
    if spend:
        if key is not None:
            saved = await saved_response(app[state.STORE], account, key, digest)
            if saved is not None:
                return await _accepted(request, saved, replayed=True)
        hold = await app[state.RESERVATIONS].reserve(spend, body.duration, destination.estimated_cost, now)
    traceparent = current_traceparent()
    record = new_record(
        generation_id=new_id("gen", now),
        account_id=account,
        prompt=body.prompt,
        provider=destination.provider,
        duration=body.duration,
        now=now,
        options=options,
        metadata=body.metadata,
        image_key=image_key,
        image_type=image_type,
        deadline_at=now + timedelta(seconds=deadline) if deadline is not None else None,
        # The creating request's id stays with the generation: its status events carry it, so one generation
        # can be followed in every service's logs (internal; never shown).
        trace_id=request_id,
        # Which of the account's keys asked for it: usage is reported per key too (internal; never shown).
        api_key_id=api_key_id_of(request),
        # And, when traces are on, this request's trace: the orchestrator's and the notifier's work joins it.
        traceparent=traceparent,
        priority=body.priority.value if body.priority is not None else None,
        budget_hold=hold.to_doc() if hold is not None else None,
        route=destination.route,
        model=destination.model,
        estimated_cost=destination.estimated_cost,
        retention_days=body.retention_days,
    )
    if traceparent is not None:
        annotate(generation_id=record.id, account_id=account, provider=record.provider)
    view = record.public_view()
    doc = record.to_doc()
    if key is not None:
        doc.update(idempotency_fields(account, key, digest, view))
    # Durable first: the 202 promises the generation is never lost, so it is in the store before we answer
    # (its own insert acknowledged, grouped with concurrent requests' inserts: see batched_inserts). Under an
    # Idempotency-Key this one insert is also the commit point of the key (see idempotency).
    try:
        # Bounded like every store call (the client's timeout), also while waiting for a group ahead of it
        # (a timer, not a task of its own: nothing more per creation).
        async with asyncio.timeout(settings.api_store_timeout_seconds):
            await app[state.INSERTS].insert(doc)
    except TimeoutError:
        raise store_unavailable() from None
    except DuplicateKeyError:
        # Not written (a concurrent repeat under the same key was): what it reserved goes back. An insert
        # that fails otherwise may still have been written, and keeps its reservation.
        if hold is not None:
            await give_back(app[state.STORE], hold)
        saved = await saved_response(app[state.STORE], account, key, digest) if key is not None else None
        if saved is None:
            raise
        return await _accepted(request, saved, replayed=True)
    # The request goes to Kafka after the answer, without waiting for the broker: the document is durable, and
    # the orchestrator's reconciler dispatches any generation whose request never arrives (see publisher).
    app[state.PUBLISHER].publish_soon(
        Envelope(
            event_id=new_id("evt", now),
            type=REQUESTED,
            occurred_at=view["created_at"],  # ``now``, formatted once
            account_id=account,
            generation=view,
            trace_id=request_id,
            traceparent=traceparent,
        )
    )
    log.info("generation accepted", extra={"generation_id": record.id, "provider": record.provider})
    return await _accepted(request, view)


@routes.get("/v1/generations/{id}")
@Endpoint(
    operation_id="getGeneration",
    scope=Scope.GENERATIONS_READ,
    tag="Generations",
    summary="Read a generation",
    description=(
        f"Another account's generation answers exactly like an unknown one. With {PREFER}: wait=N the "
        f"answer comes once the generation is finished or after N seconds (at most {MAX_WAIT_SECONDS}), "
        "whichever is first: no polling."
    ),
    status=200,
    answer="The generation.",
    model=Generation,
    parameters=(GENERATION_ID, PREFER_WAIT),
    headers=(PREFERENCE_APPLIED,),
    errors={404: "NotFound"},
)
async def get_generation(request: web.Request) -> web.Response:
    view, waited = await _waited(request, request.match_info["id"])
    return json_response(view, headers=waited)


def _position(record: GenerationRecord) -> tuple[datetime, str]:
    return record.created_at, record.id


@routes.get("/v1/generations")
@Endpoint(
    operation_id="listGenerations",
    scope=Scope.GENERATIONS_READ,
    tag="Generations",
    summary="List generations",
    description=(
        "The account's generations, newest first (ties by id), but those deleted (GET by id still answers "
        "their tombstone; usage still counts them). Filters narrow the set; a cursor holds only a "
        "position, so a walk never skips or repeats while new generations arrive."
    ),
    status=200,
    answer="A page of generations.",
    model=GenerationList,
    query=GenerationFilters,
    errors={422: "Invalid"},
)
async def list_generations(request: web.Request) -> web.Response:
    listing = parse_query(GenerationFilters, request.query)
    account, kept = account_of(request), listing.to_filter()
    generations = request.app[state.GENERATION_READS]
    return json_response(
        await page_from(
            lambda position, limit: generations.newest_first(account, kept, position, limit),
            listing,
            GenerationRecord.public_view,
            _position,
        )
    )


@routes.post("/v1/generations/{id}/cancel")
@Endpoint(
    operation_id="cancelGeneration",
    scope=Scope.GENERATIONS_WRITE,
    tag="Generations",
    summary="Cancel a generation",
    description=(
        "An unfinished generation becomes failed, with error code canceled, and video.failed is sent. The "
        "orchestrator then cancels the provider's own task where the provider allows it (best effort); any "
        "result it still produces is discarded."
    ),
    status=200,
    answer="The canceled generation.",
    model=Generation,
    parameters=(GENERATION_ID,),
    errors={
        404: "NotFound",
        409: problem(
            "generation-terminal: it has already finished; generation-busy: it kept changing; try again."
        ),
    },
)
async def cancel_generation(request: web.Request) -> web.Response:
    """An unfinished generation becomes ``failed`` with error code ``canceled``; a finished one is a 409.

    The write is a compare-and-set like every transition, so a cancel racing the orchestrator's terminal
    transition leaves exactly one of them in place. The orchestrator's actor learns of the cancel at its next
    compare-and-set (or ownership check), stops, and cancels the provider's own task where the provider allows
    it (best effort); any result it still produces is discarded."""
    generation_id = request.match_info["id"]
    reads = request.app[state.GENERATION_READS]
    for _ in range(CANCEL_ATTEMPTS):
        record = await reads.get_for_account(generation_id, account_of(request))
        if record is None:
            raise not_found(f"no generation {generation_id!r}")
        if record.status.terminal:
            raise generation_terminal(generation_id, record.status.value)
        canceled = await cancel_record(request, record)
        if canceled is not None:
            return json_response(canceled.public_view())
        # Someone moved it between our read and our write: read again, and stop if it has finished.
    raise generation_busy(generation_id)


async def cancel_record(request: web.Request, record: GenerationRecord) -> GenerationRecord | None:
    """Cancel the unfinished generation ``record`` (a compare-and-set from its version) and announce it: the
    one way a generation ends (``videogen_common.endings.end_generation``, which also gives its budgets back);
    None if it moved first. The transition stored its video.failed event, owed to the
    notifier until it has recorded the event's deliveries; until then the orchestrator's reconciler
    republishes the same event (same id) after its grace."""
    app = request.app
    publisher = app[state.PUBLISHER]

    async def announce(canceled: GenerationRecord) -> None:
        await publisher.publish(status_envelope(canceled, app[state.CLOCK].now(), request[REQUEST_ID_KEY]))
        if canceled.item_events is not False:
            await publish(publisher, terminal_event(canceled))

    return await end_generation(
        app[state.STORE],
        record,
        CANCELED_BY_CLIENT,
        prices=app[state.PRICES],
        now=app[state.CLOCK].now(),
        announce=announce,
        sink=publisher,
    )
