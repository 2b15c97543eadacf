"""Usage: how many generations the calling account made, and how many seconds of video, by UTC day, provider
and status over a time range, in total and per API key.

Counted from the generations themselves (one document each, whatever happened to its events), by when each
was made: an event delivered twice, a request redelivered, a retried webhook count nothing twice. Settled
days are read from their rows, the rest of the range live from the ``by_account`` index
(``repositories.usage``); the range is at most a year."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Annotated, Any

from aiohttp import web
from multidict import MultiMapping
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationInfo, model_validator

from videogen_api import state
from videogen_api.declare import Endpoint
from videogen_api.middleware import account_of, caller_of
from videogen_api.query import Param, once, parse_query, refused
from videogen_api.routes.budgets import remaining_view
from videogen_api.schemas.common import parse_timestamp
from videogen_api.schemas.usage import Usage
from videogen_api.serialize import json_response
from videogen_common.budgets import ACCOUNT, Remaining
from videogen_common.clock import isoformat
from videogen_common.domain import Status
from videogen_common.pricing import DIGITS
from videogen_common.repositories.budgets import BudgetCounterRepository, BudgetRepository
from videogen_common.repositories.keys import ApiKeyRepository
from videogen_common.repositories.usage import (
    UsageGroup,
    UsageRepository,
    groups_in,
    totals_by_provider,
    tries_in,
)
from videogen_common.scopes import Scope

routes = web.RouteTableDef()

Doc = dict[str, Any]

DEFAULT_DAYS = 30
MAX_DAYS = 366
_TOTALS = ("generations", "seconds", "video_seconds", "cost")


def _moment(raw: str) -> datetime:
    """A timestamp with a time zone, or a date (its midnight, UTC)."""
    if len(raw) == 10:
        try:
            return datetime.combine(date.fromisoformat(raw), time(), UTC)
        except ValueError:
            pass
    return parse_timestamp(raw)


def _bound(values: list[str]) -> datetime:
    given = once(values)
    try:
        return _moment(given)
    except ValueError as exc:
        message = f"{exc}, or a date such as 2026-11-01 (+ in a URL is %2B)"
        raise refused("timestamp", message) from None


def _bound_param(component: str) -> Param:
    schema = {"anyOf": [{"type": "string", "format": "date-time"}, {"type": "string", "format": "date"}]}
    return Param(component, schema)


_BOUND = " ISO 8601 with a time zone (write + as %2B in a URL), or a date (its midnight UTC)."


class UsageQuery(BaseModel):
    """GET /v1/usage's query string: ``start`` (inclusive) and ``end`` (exclusive), by default the last 30
    days, and ``api_key_id``. The range is checked once every parameter is well-formed; it needs the time
    (``now`` in the parser's context)."""

    model_config = ConfigDict(frozen=True)

    start: Annotated[datetime | None, BeforeValidator(_bound), _bound_param("UsageStart")] = Field(
        None, description="The range's start (inclusive); by default 30 days before end." + _BOUND
    )
    end: Annotated[datetime | None, BeforeValidator(_bound), _bound_param("UsageEnd")] = Field(
        None, description="The range's end (exclusive); by default now." + _BOUND
    )
    api_key_id: Annotated[str | None, BeforeValidator(once), Param("ApiKeyId", {"type": "string"})] = Field(
        None, description="Only the generations made with this API key (its id, e.g. key_…)."
    )

    def range(self, now: datetime) -> tuple[datetime, datetime]:
        end = self.end or now
        try:
            start = self.start or end - timedelta(days=DEFAULT_DAYS)
        except OverflowError:  # an end in the first month of year 1
            start = datetime.min.replace(tzinfo=UTC)
        return start, end

    @model_validator(mode="after")
    def _in_range(self, info: ValidationInfo) -> UsageQuery:
        if not isinstance(info.context, dict) or not isinstance(info.context.get("now"), datetime):
            raise TypeError("UsageQuery is parsed with now=the current time")
        start, end = self.range(info.context["now"])
        if start >= end:
            raise refused("range", "must be earlier than end", field="start")
        if end - start > timedelta(days=MAX_DAYS):
            raise refused("range", f"the range may span at most {MAX_DAYS} days", field="start")
        return self


def parse_range(query: MultiMapping[str], now: datetime) -> tuple[datetime, datetime, str | None]:
    """``start`` (inclusive) and ``end`` (exclusive), by default the last 30 days; ``api_key_id``. Every bad
    parameter is reported at once, in one 422."""
    usage = parse_query(UsageQuery, query, now=now)
    start, end = usage.range(now)
    return start, end, usage.api_key_id


def _totals(rows: list[Doc]) -> Doc:
    return _rounded({name: sum(row[name] for row in rows) for name in _TOTALS})


def _rounded(totals: Doc) -> Doc:
    return {**totals, "cost": round(totals["cost"], DIGITS)}


def usage_view(groups: list[UsageGroup], start: datetime, end: datetime, api_key_id: str | None) -> Doc:
    """The answer, from the aggregation's groups (one per day, provider, status and key)."""
    rows: dict[tuple[str, str, str], Doc] = {}
    keys: dict[str | None, Doc] = {}
    for group in groups:
        counted = {
            "generations": group.generations,
            "seconds": group.seconds,
            "video_seconds": group.seconds if group.status == Status.COMPLETED.value else 0,
            "cost": group.cost,
        }
        day, provider, status = group.day, group.provider, group.status
        row = rows.setdefault(
            (day, provider, status),
            {"date": day, "provider": provider, "status": status, **dict.fromkeys(_TOTALS, 0)},
        )
        key = keys.setdefault(group.key, dict.fromkeys(_TOTALS, 0))
        for name, value in counted.items():
            row[name] += value
            key[name] += value
    data = [_rounded(rows[k]) for k in sorted(rows)]
    return {
        "start": isoformat(start),
        "end": isoformat(end),
        "api_key_id": api_key_id,
        "total": _totals(data),
        "data": data,
        "api_keys": [
            {"api_key_id": key_id, **_rounded(totals)}
            for key_id, totals in sorted(keys.items(), key=lambda item: item[0] or "")
        ],
    }


@routes.get("/v1/usage")
@Endpoint(
    operation_id="getUsage",
    scope=Scope.USAGE_READ,
    tag="Account",
    summary="Read the account's usage",
    description=(
        "How many generations the account made and how many seconds of video, by UTC day, provider and "
        "status, over [start, end) (by default the last 30 days; at most 366 days), in total and per API "
        "key. Counted from the generations themselves by when each was made: once each, however often their "
        "events were delivered. seconds is what was asked for, video_seconds what was made (completed ones); "
        "cost is what their providers charged (USD), and providers says it by provider, every try at each "
        "counted, models by provider and model. "
        "budgets: what is left now of the account's budgets and of the key's (the one asked about, or else "
        "the one making the request)."
    ),
    status=200,
    answer="The usage.",
    model=Usage,
    query=UsageQuery,
    errors={422: "Invalid"},
)
async def get_usage(request: web.Request) -> web.Response:
    app = request.app
    now = app[state.CLOCK].now()
    start, end, api_key_id = parse_range(request.query, now)
    account = account_of(request)
    usage = UsageRepository(app[state.STORE])
    days = await usage.days(account, start, end, now)  # one read for both
    groups = groups_in(days, api_key_id)
    by_model = tries_in(days, api_key_id)
    budgets = remaining_view(await _budgets_left(request, account, api_key_id, now))
    providers = [
        {"provider": c.provider, "attempts": c.attempts, "cost": c.cost} for c in totals_by_provider(by_model)
    ]
    models = [
        {"provider": c.provider, "model": c.model, "attempts": c.attempts, "cost": c.cost} for c in by_model
    ]
    view = usage_view(groups, start, end, api_key_id)
    return json_response({**view, "providers": providers, "models": models, "budgets": budgets})


async def _budgets_left(
    request: web.Request, account: str, api_key_id: str | None, now: datetime
) -> list[Remaining]:
    """What is left of the account's budgets and of the key asked about (or else the calling key's)."""
    store = request.app[state.STORE]
    owners = [(ACCOUNT, await BudgetRepository(store).limits_of(account))]
    if api_key_id is None:
        caller = caller_of(request)
        owners.append((caller.key_id, caller.budgets))
    elif (key := await ApiKeyRepository(store).owned(api_key_id, account)) is not None:
        owners.append((key.id, key.budgets))
    return await BudgetCounterRepository(store).remaining(account, owners, now)
