"""``GET /v1/generations/{id}/events``: a generation's changes as Server-Sent Events.

The generation as it is comes at once; then one event for every change of status or progress this api
process hears of (from the status topic: see ``status_feed``, so it works whichever replica served the
create), until the generation is terminal, when the stream ends. Each event is ``event: generation`` with the
generation's public view as ``data`` (its ``timeline`` holds every state it entered), and an ``id`` that
orders its changes (``version:progress``): a client reconnecting with ``Last-Event-ID`` gets only what is
newer, so it neither misses the current state nor sees one twice. A comment line every 15 s keeps proxies
from closing a quiet stream. Open streams are bounded per account in each process; a shutdown ends them."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager

import orjson
from aiohttp import web

from videogen_api import state
from videogen_api.declare import GENERATION_ID, JSON, REQUEST_ID, Endpoint, Parameter, ref
from videogen_api.middleware import REQUEST_ID_KEY, account_of
from videogen_api.problems import Problem, not_found
from videogen_api.queue_position import view_with_position
from videogen_api.schemas.generations import Generation
from videogen_api.status_feed import Change, Key, change_key
from videogen_common.records.generation import GenerationRecord
from videogen_common.scopes import Scope

routes = web.RouteTableDef()

KEEP_ALIVE_SECONDS = 15.0


def format_id(key: Key) -> str:
    version, progress = key
    return f"{version}:{progress if progress >= 0 else ''}"


def parse_id(raw: str | None) -> Key | None:
    """A ``Last-Event-ID`` this stream sent (``version:progress``); anything else counts as none."""
    if not raw:
        return None
    version, _, progress = raw.partition(":")
    if not (version.isascii() and version.isdigit()) or (progress and not progress.isdigit()):
        return None
    return int(version), int(progress) if progress else -1


def too_many_streams(limit: int) -> Problem:
    return Problem(
        429,
        "too-many-streams",
        "Too Many Event Streams",
        f"this account has {limit} event streams open here already; close one first",
        headers={"Retry-After": "5"},
    )


@contextmanager
def _counted(app: web.Application, account: str) -> Iterator[None]:
    streams = app[state.EVENT_STREAMS]
    limit = app[state.SETTINGS].event_streams_per_account
    if streams.get(account, 0) >= limit:
        raise too_many_streams(limit)
    streams[account] = streams.get(account, 0) + 1
    try:
        yield
    finally:
        streams[account] -= 1
        if not streams[account]:
            del streams[account]


LAST_EVENT_ID = Parameter(
    "LastEventId",
    {
        "name": "Last-Event-ID",
        "in": "header",
        "description": "The id of the last event received, to resume a stream: only newer changes come.",
        "schema": {"type": "string"},
    },
)
# What the stream's answer holds, for the OpenAPI document.
_EVENTS = {
    "text/event-stream": {
        "schema": {
            "type": "object",
            "description": "Each event: `id: <version>:<progress>`, `event: generation`, `data: "
            "<the Generation as JSON>`, ended by a blank line; a comment line (`: keep-alive`) every "
            "15 s.",
            "properties": {
                "id": {"type": "string", "pattern": "^[0-9]+:[0-9]*$"},
                "event": {"const": "generation"},
                "data": {
                    "type": "string",
                    "contentMediaType": JSON,
                    "contentSchema": ref(Generation),
                },
            },
            "required": ["id", "event", "data"],
        }
    }
}


@routes.get("/v1/generations/{id}/events")
@Endpoint(
    operation_id="streamGenerationEvents",
    scope=Scope.GENERATIONS_READ,
    tag="Generations",
    summary="Follow a generation live (Server-Sent Events)",
    description=(
        "The generation as it is, at once, then an event for every change of its status or progress until it "
        "is completed or failed, when the stream ends. Every event is `event: generation` with the "
        "generation (as GET answers it) as `data`, and an `id` ordering its changes: reconnect with "
        "`Last-Event-ID` to get only what is newer. Served by any api replica. Each account may hold a "
        "bounded number of streams open on one api process."
    ),
    status=200,
    answer="The stream.",
    content=_EVENTS,
    parameters=(GENERATION_ID, LAST_EVENT_ID),
    errors={404: "NotFound"},
    stream=True,
)
async def generation_events(request: web.Request) -> web.StreamResponse:
    app = request.app
    generation_id, account = request.match_info["id"], account_of(request)
    feed = app[state.FEED]

    async def read() -> GenerationRecord | None:
        # With every other stream's opening at the same moment (one query); a foreign id reads as unknown.
        record = await feed.read(generation_id)
        return record if record is not None and record.account_id == account else None

    with _counted(app, account):
        async with contextlib.aclosing(feed.changes(generation_id, read, cues=True)) as changes:
            first = await anext(changes, None)
            if first is None:
                raise not_found(f"no generation {generation_id!r}")
            response = web.StreamResponse(
                headers={
                    REQUEST_ID: request[REQUEST_ID_KEY],  # sent before the handler returns, so set here
                    "Content-Type": "text/event-stream",
                    "Cache-Control": "no-cache",
                    "X-Accel-Buffering": "no",  # proxies that buffer by default (nginx) pass each event on
                }
            )
            last = parse_id(request.headers.get("Last-Event-ID"))
            try:
                await response.prepare(request)
                last = await _send(request, response, first, last, read)
                del first  # an idle stream holds no view
                async for change in changes:
                    if change is None:  # nothing newer for a while: the feed's cue, spread among streams
                        await response.write(b": keep-alive\n\n")
                    else:
                        last = await _send(request, response, change, last, read)
                await response.write_eof()
            except ConnectionResetError:
                pass  # the client went away (seen at the next write): nothing left to send
            return response


async def _send(
    request: web.Request,
    response: web.StreamResponse,
    change: Change,
    last: Key | None,
    read: Callable[[], Awaitable[GenerationRecord | None]],
) -> Key | None:
    """Write ``change`` as an event if it is newer than ``last`` (what the client has); what it has now."""
    view = change[1]
    key = change_key(change)
    if view["status"] == "queued" and view.get("queue_position") is None:
        # Waiting in line: where, as a read of it alone says (its state events do not carry it).
        record = await read()
        if record is not None and record.version == key[0]:
            view = await view_with_position(request.app[state.STORE], record)
    if last is not None and key <= last:
        return last
    frame = f"id: {format_id(key)}\nevent: generation\ndata: ".encode()
    await response.write(frame + orjson.dumps(view) + b"\n\n")
    return key
