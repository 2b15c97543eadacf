"""Newest-first pages of one collection, in (created_at desc, _id desc) order, from the position of the last
item of the previous page on: the query shape every listing of the api uses (generations, deliveries, audit
events)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from pymongo import DESCENDING
from pymongo.asynchronous.collection import AsyncCollection

Doc = dict[str, Any]

# A position in a listing: the (created_at, _id) of the last item a page returned.
Position = tuple[datetime, str]


def after_position(position: Position | None) -> Doc:
    """The query clause for items strictly after ``position`` in (created_at desc, _id desc) order."""
    if position is None:
        return {}
    created_at, item_id = position
    return {"$or": [{"created_at": {"$lt": created_at}}, {"created_at": created_at, "_id": {"$lt": item_id}}]}


async def newest_first(
    collection: AsyncCollection[Doc], query: Doc, position: Position | None, limit: int
) -> list[Doc]:
    """Up to ``limit`` documents ``query`` matches after ``position``, newest first."""
    found = collection.find({**query, **after_position(position)})
    return await found.sort([("created_at", DESCENDING), ("_id", DESCENDING)]).limit(limit).to_list(limit)


def created_between(after: datetime | None, before: datetime | None) -> Doc:
    """The clause for ``created_at`` strictly between the bounds given (either may be absent). The store keeps
    milliseconds: each bound is rounded outwards to one, so sub-millisecond input still selects exactly what
    is inside it."""
    created: dict[str, datetime] = {}
    if after is not None:
        created["$gt"] = _floor_ms(after)
    if before is not None:
        created["$lt"] = ceil_ms(before)
    return {"created_at": created} if created else {}


_MS = timedelta(milliseconds=1)


def _floor_ms(moment: datetime) -> datetime:
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


def ceil_ms(moment: datetime) -> datetime:
    """Up to the next millisecond (the store keeps milliseconds and would otherwise truncate)."""
    floor = _floor_ms(moment)
    if floor == moment:
        return moment
    try:
        return floor + _MS
    except OverflowError:  # within the last millisecond of year 9999: nothing is stored later anyway
        return floor
