"""Opaque cursors for newest-first listing: the (created_at, id) of the last item returned.

A cursor encodes only that position, never the filters, so it is valid with any filters: the next page is the
items strictly after the position, in (created_at desc, id desc) order, that match the filters sent with it.
Keep the same filters through a walk to page through one result set. Both sort keys are fixed at creation, so
a walk never repeats or skips an item, and generations created during the walk (newer than the cursor) do not
show up in its later pages."""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Annotated, Any, Protocol, TypeVar

import orjson
from pydantic import BeforeValidator, Field

from videogen_api.problems import invalid
from videogen_api.query import Param, first, refused
from videogen_common.clock import from_millis, to_millis


def encode_cursor(created_at: datetime, item_id: str) -> str:
    raw = orjson.dumps([to_millis(created_at), item_id])
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


_NOT_A_CURSOR = "not a cursor this API returned"


def _decoded(cursor: str) -> tuple[datetime, str] | None:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        millis, item_id = orjson.loads(raw)
        if type(millis) is not int or not isinstance(item_id, str):
            raise TypeError
        return from_millis(millis), item_id
    except (ValueError, TypeError, OverflowError, orjson.JSONDecodeError):
        return None


def decode_cursor(cursor: str) -> tuple[datetime, str]:
    decoded = _decoded(cursor)
    if decoded is None:
        raise invalid([{"field": "cursor", "message": _NOT_A_CURSOR, "code": "cursor"}])
    return decoded


# The ``limit`` query parameter of every listing (the OpenAPI document states the same numbers).
DEFAULT_LIMIT = 20
MAX_LIMIT = 100


def _limit(values: list[str]) -> int:
    raw = first(values)
    limit = int(raw) if raw.isascii() and raw.isdigit() else 0
    if not 1 <= limit <= MAX_LIMIT:
        raise refused("limit", f"must be an integer from 1 to {MAX_LIMIT}")
    return limit


def _cursor(values: list[str]) -> str:
    cursor = first(values)
    if _decoded(cursor) is None:
        raise refused("cursor", _NOT_A_CURSOR)
    return cursor


# The paging fields of every listing's query model (declared last in each): refused only once the filters are
# well-formed, and one at a time, limit first.
Limit = Annotated[
    int,
    BeforeValidator(_limit),
    Param(
        "Limit",
        {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": DEFAULT_LIMIT},
        alone=True,
    ),
    Field(description=f"Page size, 1 to {MAX_LIMIT}."),
]
Cursor = Annotated[
    str | None,
    BeforeValidator(_cursor),
    Param("Cursor", {"type": "string"}, alone=True),
    Field(description="The next_cursor of the previous page, as returned."),
]


class Page(Protocol):
    """What a listing's query model says of paging: ``limit`` and ``cursor``."""

    @property
    def limit(self) -> int: ...

    @property
    def cursor(self) -> str | None: ...


T = TypeVar("T")


async def page_from(
    fetch: Callable[[tuple[datetime, str] | None, int], Awaitable[list[T]]],
    page: Page,
    view: Callable[[T], dict[str, Any]],
    position: Callable[[T], tuple[datetime, str]],
) -> dict[str, Any]:
    """One page of a repository's listing: ``fetch(position, n)`` answers up to ``n`` items
    after ``page.cursor``'s position, newest first; ``position`` gives an item's (created_at, id).
    One more item than the page is read, to know whether another page follows."""
    limit = page.limit
    items = await fetch(None if page.cursor is None else decode_cursor(page.cursor), limit + 1)
    shown = items[:limit]
    next_cursor = encode_cursor(*position(shown[-1])) if len(items) > limit else None
    return {"data": [view(item) for item in shown], "next_cursor": next_cursor}
