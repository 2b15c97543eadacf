"""Newest-first pages of one collection, in (created_at desc, _id desc) order, from the position of the last
item of the previous page on: the query shape every listing of the api uses (generations, deliveries, audit
events)."""

from __future__ import annotations

from datetime import datetime
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
