"""Opaque cursors for newest-first listing: the (created_at, id) of the last item returned.

A cursor encodes only that position, never the filters, so it is valid with any filters: the next page is the
items strictly after the position, in (created_at desc, id desc) order, that match the filters sent with it.
Keep the same filters through a walk to page through one result set. Both sort keys are fixed at creation, so
a walk never repeats or skips an item, and generations created during the walk (newer than the cursor) do not
show up in its later pages."""

from __future__ import annotations

import base64
from collections.abc import Callable
from datetime import datetime
from typing import Any

import orjson
from multidict import MultiMapping
from pymongo import DESCENDING
from pymongo.asynchronous.collection import AsyncCollection

from videogen_api.problems import invalid
from videogen_common.clock import from_millis, to_millis


def encode_cursor(created_at: datetime, item_id: str) -> str:
    raw = orjson.dumps([to_millis(created_at), item_id])
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        millis, item_id = orjson.loads(raw)
        if type(millis) is not int or not isinstance(item_id, str):
            raise TypeError
        return from_millis(millis), item_id
    except (ValueError, TypeError, OverflowError, orjson.JSONDecodeError):
        raise invalid(
            [{"field": "cursor", "message": "not a cursor this API returned", "code": "cursor"}]
        ) from None


def before_cursor(cursor: str | None) -> dict[str, Any]:
    """The query clause for items strictly after the cursor in (created_at desc, _id desc) order."""
    if cursor is None:
        return {}
    created_at, item_id = decode_cursor(cursor)
    return {"$or": [{"created_at": {"$lt": created_at}}, {"created_at": created_at, "_id": {"$lt": item_id}}]}


# The ``limit`` query parameter of every listing (the OpenAPI document states the same numbers).
DEFAULT_LIMIT = 20
MAX_LIMIT = 100


def parse_limit(raw: str | None, *, default: int = DEFAULT_LIMIT, maximum: int = MAX_LIMIT) -> int:
    if raw is None:
        return default
    limit = int(raw) if raw.isascii() and raw.isdigit() else 0
    if not 1 <= limit <= maximum:
        raise invalid(
            [{"field": "limit", "message": f"must be an integer from 1 to {maximum}", "code": "limit"}]
        )
    return limit


async def newest_first_page(
    collection: AsyncCollection[dict[str, Any]],
    query: dict[str, Any],
    params: MultiMapping[str],
    view: Callable[[dict[str, Any]], dict[str, Any]],
) -> dict[str, Any]:
    """One page of what ``query`` matches, newest first from the ``cursor`` parameter on, ``limit`` long:
    ``{"data": [view(doc), ...], "next_cursor": null | string}``. One more document than the page is read, to
    know whether another page follows."""
    limit = parse_limit(params.get("limit"))
    found = collection.find({**query, **before_cursor(params.get("cursor"))})
    docs = (
        await found.sort([("created_at", DESCENDING), ("_id", DESCENDING)])
        .limit(limit + 1)
        .to_list(limit + 1)
    )
    page = docs[:limit]
    next_cursor = encode_cursor(page[-1]["created_at"], page[-1]["_id"]) if len(docs) > limit else None
    return {"data": [view(doc) for doc in page], "next_cursor": next_cursor}
