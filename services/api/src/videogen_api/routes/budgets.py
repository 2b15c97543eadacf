"""The account's budgets: ``GET /v1/budgets`` and ``PUT /v1/budgets`` (a key's own are set on the key, PATCH
/v1/api-keys/{id}). What POST /v1/generate reserves of them is ``videogen_api.spend``; the counting is
``videogen_common.budgets``."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from aiohttp import web

from videogen_api import state
from videogen_api.declare import BODY_ERRORS, Endpoint
from videogen_api.middleware import account_of
from videogen_api.routes.audit import record_change
from videogen_api.routes.bodies import json_body
from videogen_api.schemas.budgets import BudgetLimits, Budgets
from videogen_api.schemas.common import parse_body
from videogen_api.serialize import json_response
from videogen_api.spend import start_counting
from videogen_common.audit import AuditEventType
from videogen_common.budgets import ACCOUNT, Limits, Remaining
from videogen_common.clock import isoformat
from videogen_common.repositories.budgets import BudgetCounterRepository, BudgetRepository
from videogen_common.scopes import Scope

routes = web.RouteTableDef()

Doc = dict[str, Any]


def remaining_view(states: Sequence[Remaining]) -> list[Doc]:
    return [
        {
            "api_key_id": None if s.owner == ACCOUNT else s.owner,
            "budget": s.budget.name,
            **s.amounts(),
            "period_start": isoformat(s.period_start),
            "resets_at": isoformat(s.resets_at),
        }
        for s in states
    ]


async def _budgets_view(request: web.Request, limits: Limits, now: datetime) -> Doc:
    app = request.app
    states = await BudgetCounterRepository(app[state.STORE]).remaining(
        account_of(request), [(ACCOUNT, limits)], now
    )
    return {
        **limits.view(),
        "threshold_percent": app[state.SETTINGS].budget_threshold_percent,
        "remaining": remaining_view(states),
    }


_DESCRIPTION = (
    "Hard budgets of the whole account, on top of each key's own: at most this many seconds of video, and "
    "this much cost (US dollars), per UTC day and per calendar month. A generation is charged its duration "
    "and its estimated_cost (its first candidate's price; 0 where the price is unknown) when it is made, and "
    "refused with 429 budget-exceeded if that would pass a budget (nothing is written); a fallback to "
    "another provider does not change what was counted. One that fails before it reaches a provider "
    "(canceled first, refused for its image, out of time) gives its seconds and cost back. When a budget's "
    "use reaches threshold_percent of it, that is announced once in the period."
)


@routes.get("/v1/budgets")
@Endpoint(
    operation_id="getBudgets",
    scope=Scope.USAGE_READ,
    tag="Account",
    summary="Read the account's budgets",
    description=_DESCRIPTION,
    status=200,
    answer="The budgets, and what is left of each.",
    model=Budgets,
)
async def get_budgets(request: web.Request) -> web.Response:
    app = request.app
    limits = await BudgetRepository(app[state.STORE]).limits_of(account_of(request))
    return json_response(await _budgets_view(request, limits, app[state.CLOCK].now()))


@routes.put("/v1/budgets")
@Endpoint(
    operation_id="setBudgets",
    scope=Scope.BUDGETS_WRITE,
    tag="Account",
    summary="Set the account's budgets",
    description=_DESCRIPTION
    + " PUT replaces them all: a budget null or left out has no limit. Every api replica applies the change "
    "within VIDEOGEN_BUDGET_CACHE_SECONDS (5 s by default); the one answering, at once. A budget set in the "
    "middle of a period counts what the period's generations already used.",
    status=200,
    answer="The budgets as set, and what is left of each.",
    model=Budgets,
    body=BudgetLimits,
    errors=BODY_ERRORS,
)
async def set_budgets(request: web.Request) -> web.Response:
    app = request.app
    limits = parse_body(BudgetLimits, await json_body(request)).limits()
    account, now = account_of(request), app[state.CLOCK].now()
    budgets = BudgetRepository(app[state.STORE])
    before = await budgets.limits_of(account)
    if limits.meters() - before.meters():  # a meter nothing limited until now: count the month's use of it
        await start_counting(
            app[state.STORE],
            account_id=account,
            owner=ACCOUNT,
            api_key_id=None,
            now=now,
        )
    await budgets.set_limits(account, limits, now)
    app[state.ACCOUNT_LIMITS].forget(account)
    old, new = before.view(), limits.view()
    changes = {name: {"from": old[name], "to": new[name]} for name in old if old[name] != new[name]}
    if changes:
        await record_change(request, AuditEventType.BUDGET_UPDATED, ("budget", ACCOUNT), {"changes": changes})
    return json_response(await _budgets_view(request, limits, now))
