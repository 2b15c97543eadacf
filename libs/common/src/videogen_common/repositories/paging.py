"""Newest-first pages of one collection, in (created_at desc, _id desc) order, from the position of the last
item of the previous page on: the query shape every listing of the api uses (generations, deliveries, audit
events, events, API keys).

The shape, and why: a page is read window by window back in time, each window one query of the form
``{<equalities>, created_at: {<a range>}}`` where the equalities are exactly the leading fields of an index
whose next field is ``created_at`` (``by_account``: ``account_id``, then ``created_at``). The embedded store
serves exactly that shape by a range of the index, and nothing looser: it reads every document a query's
index lookup yields before it sorts and limits (a limit does not stop its walk), it scans the whole collection
for an ``$or`` (the old cursor clause) and looks up by one field alone when a condition beside the index's
fields is added (every generation of the account, for ``deleted_at`` or a metadata pair). So what a window
cannot say through its index is checked here, on what the window returned (``keep``), and a window holds only
so many documents: a page costs the documents of the windows it reads, however long the history behind it.
On MongoDB each window is an index range with the sort and the limit pushed down.

Windows: the first reaches back ``FIRST_WINDOW`` from the position (or from now, open above, for a first
page); each next one reaches on from where the last began, sized from how many the windows so far kept per
second of history (at least twice, at most ``MAX_GROWTH`` times the last; ``EMPTY_GROWTH`` times after
windows that kept nothing), until the page is full or the windows pass ``FLOOR``, below which one last
window takes the rest (a listing's last page, or a filter that keeps little, reads there)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from pymongo import DESCENDING
from pymongo.asynchronous.collection import AsyncCollection

Doc = dict[str, Any]

# A position in a listing: the (created_at, _id) of the last item a page returned.
Position = tuple[datetime, str]

FIRST_WINDOW = timedelta(hours=1)
MAX_GROWTH = 16
EMPTY_GROWTH = 8
# Windows reach no further back than this; one last window takes whatever is older.
FLOOR = datetime(2020, 1, 1, tzinfo=UTC)

_ORDER = [("created_at", DESCENDING), ("_id", DESCENDING)]


def _key(doc: Doc) -> tuple[datetime, str]:
    return doc["created_at"], doc["_id"]


def after(position: Position | None) -> Callable[[Doc], bool]:
    """Whether a document comes strictly after ``position`` in (created_at desc, _id desc) order."""
    if position is None:
        return lambda doc: True
    created_at, item_id = position

    def later(doc: Doc) -> bool:
        at = doc["created_at"]
        return bool(at < created_at or (at == created_at and doc["_id"] < item_id))

    return later


def window_range(lower: tuple[datetime, bool] | None, upper: tuple[datetime, bool] | None) -> Doc:
    """The ``created_at`` condition of one window: each bound (moment, inclusive) if given."""
    clause: Doc = {}
    if lower is not None:
        clause["$gte" if lower[1] else "$gt"] = lower[0]
    if upper is not None:
        clause["$lte" if upper[1] else "$lt"] = upper[0]
    return clause


async def newest_first(
    collection: AsyncCollection[Doc],
    query: Doc,
    position: Position | None,
    limit: int,
    *,
    keep: Callable[[Doc], bool] | None = None,
    reads: Sequence[str] = (),
    now: datetime | None = None,
) -> list[Doc]:
    """Up to ``limit`` documents after ``position``, newest first, that ``query`` matches and ``keep`` (if
    given) keeps. ``query``: the equalities of an index's leading fields, and ``created_at`` bounds
    (``created_between``'s) if any; nothing else, or the embedded store scans (see the module). With
    ``keep``, the windows return only the fields it ``reads`` (a filter that keeps few reads many documents:
    their keys cross the wire, not their bodies) and the documents kept are then read whole by id."""
    equalities = {name: value for name, value in query.items() if name != "created_at"}
    bounds: Doc = query.get("created_at") or {}
    floor_bound: datetime | None = bounds.get("$gt")
    top: tuple[datetime, bool] | None = (bounds["$lt"], False) if "$lt" in bounds else None
    if position is not None and (top is None or position[0] < top[0]):
        top = (position[0], True)
    later = after(position)
    found: list[Doc] = []
    upper = top
    start = top[0] if top is not None else (now or datetime.now(UTC))
    reach = FIRST_WINDOW
    covered = timedelta(0)
    while len(found) < limit:
        # The last window takes everything down to the lower bound (or all that is older, without one).
        last = start - FLOOR <= reach or (floor_bound is not None and start - floor_bound <= reach)
        lower_at = start if last else start - reach
        lower: tuple[datetime, bool] | None = (lower_at, True)
        if last:
            lower = None if floor_bound is None else (floor_bound, False)
        window = {**equalities, "created_at": window_range(lower, upper)} if lower or upper else equalities
        need = limit - len(found)
        projection = None if keep is None else dict.fromkeys(("created_at", *reads), 1)
        cursor = collection.find(window, projection).sort(_ORDER)
        # A limit only where what the window returns is what is kept (a window up to a position, inclusive,
        # returns items on or before it that are left out).
        if keep is None and not (upper is not None and upper[1]):
            cursor = cursor.limit(need)
        docs = [doc for doc in await cursor.to_list(None) if later(doc) and (keep is None or keep(doc))]
        found.extend(docs[:need] if keep is None else await _whole(collection, docs[:need]))
        if last:
            break
        covered += reach
        upper, start = (lower_at, False), lower_at
        if not found:
            reach *= EMPTY_GROWTH
        else:
            per_second = len(found) / max(covered.total_seconds(), 1.0)
            wanted = timedelta(seconds=1.25 * (limit - len(found)) / per_second)
            reach = min(max(wanted, reach * 2), reach * MAX_GROWTH)
    return found


async def _whole(collection: AsyncCollection[Doc], keys: list[Doc]) -> list[Doc]:
    """The documents of ``keys`` (projections), whole, in their order (one gone meanwhile left out)."""
    if not keys:
        return []
    ids = [key["_id"] for key in keys]
    whole = {doc["_id"]: doc for doc in await collection.find({"_id": {"$in": ids}}).to_list(None)}
    return [whole[item_id] for item_id in ids if item_id in whole]


def merged(pages: Sequence[list[Doc]], limit: int) -> list[Doc]:
    """The first ``limit`` of several newest-first pages (each of one value of a field, say one status, read
    on its own index range), newest first."""
    every = [doc for page in pages for doc in page]
    return sorted(every, key=_key, reverse=True)[:limit]


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
