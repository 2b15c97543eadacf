"""Usage: how many generations the calling account made, and how many seconds of video, by UTC day, provider
and status over a time range, in total and per API key.

Counted from the generations themselves (one document each, whatever happened to its events), by when each
was made: a status event delivered twice, a request redelivered, a retried webhook count nothing twice. One
aggregation over the account's range of the ``by_account`` index; the range is at most a year."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from aiohttp import web
from multidict import MultiMapping

from videogen_api import state
from videogen_api.middleware import account_of
from videogen_api.problems import invalid
from videogen_api.schemas import parse_timestamp
from videogen_api.serialize import json_response
from videogen_common.clock import isoformat
from videogen_common.domain import Status

routes = web.RouteTableDef()

Doc = dict[str, Any]

DEFAULT_DAYS = 30
MAX_DAYS = 366
_TOTALS = ("generations", "seconds", "video_seconds")


def _moment(raw: str) -> datetime:
    """A timestamp with a time zone, or a date (its midnight, UTC)."""
    if len(raw) == 10:
        try:
            return datetime.combine(date.fromisoformat(raw), time(), UTC)
        except ValueError:
            pass
    return parse_timestamp(raw)


def parse_range(query: MultiMapping[str], now: datetime) -> tuple[datetime, datetime, str | None]:
    """``start`` (inclusive) and ``end`` (exclusive), by default the last 30 days; ``api_key_id``. Every bad
    parameter is reported at once, in one 422."""
    errors: list[dict[str, str]] = []
    found: dict[str, datetime] = {}
    for name in ("start", "end"):
        values = query.getall(name, [])
        if len(values) > 1:
            errors.append({"field": name, "message": "give it once", "code": "repeated"})
        elif values:
            try:
                found[name] = _moment(values[0])
            except ValueError as exc:
                message = f"{exc}, or a date such as 2026-11-01 (+ in a URL is %2B)"
                errors.append({"field": name, "message": message, "code": "timestamp"})
    keys = query.getall("api_key_id", [])
    if len(keys) > 1:
        errors.append({"field": "api_key_id", "message": "give it once", "code": "repeated"})
    end = found.get("end", now)
    try:
        start = found.get("start") or end - timedelta(days=DEFAULT_DAYS)
    except OverflowError:  # an end in the first month of year 1
        start = datetime.min.replace(tzinfo=UTC)
    if not errors:
        if start >= end:
            errors.append({"field": "start", "message": "must be earlier than end", "code": "range"})
        elif end - start > timedelta(days=MAX_DAYS):
            message = f"the range may span at most {MAX_DAYS} days"
            errors.append({"field": "start", "message": message, "code": "range"})
    if errors:
        raise invalid(errors)
    return start, end, keys[0] if keys else None


def _totals(rows: list[Doc]) -> Doc:
    return {name: sum(row[name] for row in rows) for name in _TOTALS}


def usage_view(groups: list[Doc], start: datetime, end: datetime, api_key_id: str | None) -> Doc:
    """The answer, from the aggregation's groups (one per day, provider, status and key)."""
    rows: dict[tuple[str, str, str], Doc] = {}
    keys: dict[str | None, Doc] = {}
    for group in groups:
        day, provider, status = group["_id"]["day"], group["_id"]["provider"], group["_id"]["status"]
        seconds = int(group["seconds"])
        counted = {
            "generations": int(group["generations"]),
            "seconds": seconds,
            "video_seconds": seconds if status == Status.COMPLETED.value else 0,
        }
        row = rows.setdefault(
            (day, provider, status),
            {"date": day, "provider": provider, "status": status, **dict.fromkeys(_TOTALS, 0)},
        )
        key = keys.setdefault(group["_id"].get("key"), dict.fromkeys(_TOTALS, 0))
        for name, value in counted.items():
            row[name] += value
            key[name] += value
    data = [rows[k] for k in sorted(rows)]
    return {
        "start": isoformat(start),
        "end": isoformat(end),
        "api_key_id": api_key_id,
        "total": _totals(data),
        "data": data,
        "api_keys": [
            {"api_key_id": key_id, **totals}
            for key_id, totals in sorted(keys.items(), key=lambda item: item[0] or "")
        ],
    }


@routes.get("/v1/usage")
async def get_usage(request: web.Request) -> web.Response:
    app = request.app
    start, end, api_key_id = parse_range(request.query, app[state.CLOCK].now())
    groups = await app[state.GENERATIONS].usage_groups(account_of(request), start, end, api_key_id)
    return json_response(usage_view(groups, start, end, api_key_id))
