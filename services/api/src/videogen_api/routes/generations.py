"""POST /v1/generate, GET /v1/generations/{id}, GET /v1/generations."""

from __future__ import annotations

from aiohttp import web
from pymongo import DESCENDING

from videogen_api import state
from videogen_api.middleware import REQUEST_ID_KEY, account_of
from videogen_api.paging import before_cursor, encode_cursor, parse_limit
from videogen_api.problems import not_found
from videogen_api.routes.bodies import json_body
from videogen_api.schemas import GenerateRequest, parse_body
from videogen_api.serialize import json_response
from videogen_common.clock import isoformat
from videogen_common.events import REQUESTED, Envelope
from videogen_common.generations import new_generation, public_view
from videogen_common.ids import new_id

routes = web.RouteTableDef()


@routes.post("/v1/generate")
async def create_generation(request: web.Request) -> web.Response:
    app = request.app
    settings = app[state.SETTINGS]
    body = parse_body(GenerateRequest, await json_body(request), prompt_max_chars=settings.prompt_max_chars)
    account = account_of(request)
    now = app[state.CLOCK].now()
    doc = new_generation(
        generation_id=new_id("gen", now),
        account_id=account,
        prompt=body.prompt,
        provider=body.provider,
        duration=body.duration,
        now=now,
    )
    # Durable first: the 202 promises the generation is never lost, so it is in the store before we answer.
    await app[state.STORE].generations.insert_one(doc)
    view = public_view(doc)
    await app[state.PUBLISHER].publish(
        Envelope(
            event_id=new_id("evt", now),
            type=REQUESTED,
            occurred_at=isoformat(now),
            account_id=account,
            generation=view,
            trace_id=request[REQUEST_ID_KEY],
        )
    )
    return json_response(view, status=202, headers={"Location": f"/v1/generations/{doc['_id']}"})


@routes.get("/v1/generations/{id}")
async def get_generation(request: web.Request) -> web.Response:
    generation_id = request.match_info["id"]
    doc = await request.app[state.STORE].generations.find_one(
        {"_id": generation_id, "account_id": account_of(request)}
    )
    if doc is None:
        # A foreign id answers exactly like an unknown one.
        raise not_found(f"no generation {generation_id!r}")
    return json_response(public_view(doc))


@routes.get("/v1/generations")
async def list_generations(request: web.Request) -> web.Response:
    limit = parse_limit(request.query.get("limit"))
    query = {"account_id": account_of(request), **before_cursor(request.query.get("cursor"))}
    cursor = (
        request.app[state.STORE]
        .generations.find(query)
        .sort([("created_at", DESCENDING), ("_id", DESCENDING)])
        .limit(limit + 1)
    )
    docs = await cursor.to_list(limit + 1)
    page = docs[:limit]
    next_cursor = encode_cursor(page[-1]["created_at"], page[-1]["_id"]) if len(docs) > limit else None
    return json_response({"data": [public_view(d) for d in page], "next_cursor": next_cursor})
