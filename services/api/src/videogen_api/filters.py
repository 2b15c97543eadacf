"""Filters for GET /v1/generations (and the same parameters of GET /v1/audit-events and of an endpoint's
delivery log), read from the query string.

- ``status``: any of queued, processing, completed, failed; repeat the parameter or separate with commas.
- ``provider``: any of mock, runway, luma, pika; the same way.
- ``created_after`` / ``created_before``: ISO 8601 timestamps with a time zone (``Z`` or an offset; in a URL
  write ``+`` as ``%2B``). Both bounds are exclusive; ``created_after`` later than ``created_before`` is
  a 422.
- ``metadata[KEY]=VALUE``: generations whose metadata has exactly that value under ``KEY``; several must
  all match.

Filters only narrow the set; order and paging stay as they are (see ``paging``). A status filter applies to
each page as it is read, so a generation that changes status during a walk is judged by its status then.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any, TypeVar

from multidict import MultiMapping

from videogen_api.problems import invalid
from videogen_api.schemas import METADATA_KEY
from videogen_common.domain import Provider, Status

E = TypeVar("E", bound=StrEnum)

_MS = timedelta(milliseconds=1)
_METADATA_PARAM = re.compile(r"^metadata\[(.*)\]$")
_METADATA_KEY = re.compile(METADATA_KEY)


@dataclass(frozen=True)
class GenerationFilters:
    statuses: tuple[Status, ...] = ()
    providers: tuple[Provider, ...] = ()
    created_after: datetime | None = None
    created_before: datetime | None = None
    metadata: tuple[tuple[str, str], ...] = ()

    def clause(self) -> dict[str, Any]:
        """The MongoDB query clause; empty without filters."""
        clause: dict[str, Any] = {f"metadata.{key}": value for key, value in self.metadata}
        if self.statuses:
            clause["status"] = {"$in": [s.value for s in self.statuses]}
        if self.providers:
            clause["provider"] = {"$in": [p.value for p in self.providers]}
        return {**clause, **created_clause(self.created_after, self.created_before)}


def created_clause(after: datetime | None, before: datetime | None) -> dict[str, Any]:
    """The clause for ``created_at`` strictly between the bounds given. The store keeps milliseconds: each
    bound is rounded outwards to one, so sub-millisecond input still selects exactly what is inside it."""
    created: dict[str, datetime] = {}
    if after is not None:
        created["$gt"] = _floor_ms(after)
    if before is not None:
        created["$lt"] = ceil_ms(before)
    return {"created_at": created} if created else {}


def created_bounds(
    query: MultiMapping[str], errors: list[dict[str, str]]
) -> tuple[datetime | None, datetime | None]:
    """``created_after`` and ``created_before``; a range that ends before it starts is an error."""
    after = timestamp(query, "created_after", errors)
    before = timestamp(query, "created_before", errors)
    if after is not None and before is not None and after > before:
        errors.append(
            {"field": "created_after", "message": "must not be later than created_before", "code": "range"}
        )
    return after, before


def parse_filters(query: MultiMapping[str]) -> GenerationFilters:
    """Every bad parameter is reported at once, in one 422."""
    errors: list[dict[str, str]] = []
    statuses = choices(query, "status", Status, errors)
    providers = choices(query, "provider", Provider, errors)
    after, before = created_bounds(query, errors)
    metadata = metadata_filters(query, errors)
    if errors:
        raise invalid(errors)
    return GenerationFilters(statuses, providers, after, before, metadata)


def metadata_filters(query: MultiMapping[str], errors: list[dict[str, str]]) -> tuple[tuple[str, str], ...]:
    """``metadata[KEY]=VALUE`` parameters, each key once."""
    found: dict[str, str] = {}
    for name in dict.fromkeys(query.keys()):
        match = _METADATA_PARAM.fullmatch(name)
        if match is None:
            continue
        key, values = match.group(1), query.getall(name)
        if not _METADATA_KEY.fullmatch(key):
            message = "a metadata key is 1 to 40 letters, digits, _ or -"
            errors.append({"field": name, "message": message, "code": "metadata_key"})
        elif len(values) != 1:
            errors.append({"field": name, "message": "give it once", "code": "metadata_value"})
        else:
            found[key] = values[0]
    return tuple(found.items())


def choices(
    query: MultiMapping[str], name: str, enum: type[E], errors: list[dict[str, str]]
) -> tuple[E, ...]:
    allowed = {e.value: e for e in enum}
    chosen: dict[E, None] = {}
    for raw in query.getall(name, []):
        for value in raw.split(","):
            member = allowed.get(value.strip())
            if member is None:
                errors.append(
                    {
                        "field": name,
                        "message": f"{value.strip()!r} is not one of {', '.join(allowed)}",
                        "code": "enum",
                    }
                )
                return ()
            chosen[member] = None
    return tuple(chosen)


def single(query: MultiMapping[str], name: str, errors: list[dict[str, str]]) -> str | None:
    """A parameter given at most once (None if not given)."""
    values = query.getall(name, [])
    if len(values) > 1:
        errors.append({"field": name, "message": "give it once", "code": "repeated"})
        return None
    return values[0] if values else None


def timestamp(query: MultiMapping[str], name: str, errors: list[dict[str, str]]) -> datetime | None:
    values = query.getall(name, [])
    if not values:
        return None
    message = "must be an ISO 8601 timestamp with a time zone, e.g. 2026-11-21T08:47:00Z (+ in a URL is %2B)"
    if len(values) == 1:
        try:
            moment = datetime.fromisoformat(values[0])
            if moment.utcoffset() is not None:
                return moment.astimezone(UTC)
            message = "must carry a time zone (Z or an offset such as %2B02:00)"
        except (ValueError, OverflowError):
            pass
    else:
        message = "give it once"
    errors.append({"field": name, "message": message, "code": "timestamp"})
    return None


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
