"""The account's and its keys' budgets (``/v1/budgets``, a key's ``budgets``): what setting them takes, what
is left of each, and the problem that refuses a generation beyond one."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from videogen_api.schemas.common import Body, BudgetName, Moment, Problem
from videogen_common.budgets import Limits


class BudgetRemaining(Body):
    """One hard budget of the account or of one key as it stands now: its limit, what is used (reserved by
    the period's generations, less what failed ones gave back) and left, and when it resets."""

    api_key_id: Annotated[str | None, Field(description="The key whose budget it is; null: the account's.")]
    budget: BudgetName
    limit: Annotated[
        float, Field(ge=0, description="Seconds of video; US dollars (to the millionth) for a cost budget.")
    ]
    used: Annotated[float, Field(ge=0)]
    remaining: Annotated[float, Field(ge=0)]
    period_start: Moment
    resets_at: Moment


# Larger than any month of video anyone will ask for; keeps the counters' arithmetic far from overflowing.
MAX_BUDGET = 1_000_000_000
# Likewise in US dollars (counted in micro-dollars: 10^15 of them, far from 2^63).
MAX_COST_BUDGET = 1_000_000_000


def _limit(what: str) -> Any:
    return Field(
        ge=0,
        le=MAX_BUDGET,
        description=f"At most this many seconds of video {what}; null or absent: no limit.",
    )


def _cost_limit(what: str) -> Any:
    return Field(
        ge=0,
        le=MAX_COST_BUDGET,
        description=f"At most this much estimated cost, in US dollars (to the millionth), {what}; null or "
        "absent: no limit.",
    )


class BudgetLimits(BaseModel):
    """Hard budgets: a generation that would pass one is refused (429 budget-exceeded) before anything is
    written. Seconds of video are counted as asked for (duration), and cost as estimated (estimated_cost:
    its first candidate's price; 0 where the price is unknown), when the generation is made; a generation
    that fails before it reaches a provider gives both back. PUT replaces every budget: a field left out has
    no limit."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    daily_video_seconds: Annotated[int | None, _limit("per UTC day")] = None
    monthly_video_seconds: Annotated[int | None, _limit("per calendar month (UTC)")] = None
    daily_cost: Annotated[float | None, _cost_limit("per UTC day")] = None
    monthly_cost: Annotated[float | None, _cost_limit("per calendar month (UTC)")] = None

    def limits(self) -> Limits:
        return Limits.from_view(self.model_dump())


Seconds = Annotated[int | None, Field(ge=0)]
Dollars = Annotated[float | None, Field(ge=0, description="US dollars; null: no limit.")]


class ApiKeyBudgets(Body):
    """A key's own budgets (null: no limit), on top of the account's."""

    daily_video_seconds: Seconds
    monthly_video_seconds: Seconds
    daily_cost: Dollars
    monthly_cost: Dollars


class Budgets(Body):
    """The account's budgets, and what is left of each that has a limit."""

    daily_video_seconds: Annotated[int | None, Field(ge=0, description="Per UTC day; null: no limit.")]
    monthly_video_seconds: Annotated[
        int | None, Field(ge=0, description="Per calendar month (UTC); null: no limit.")
    ]
    daily_cost: Annotated[float | None, Field(ge=0, description="US dollars per UTC day; null: no limit.")]
    monthly_cost: Annotated[
        float | None, Field(ge=0, description="US dollars per calendar month (UTC); null: no limit.")
    ]
    threshold_percent: Annotated[
        int,
        Field(
            ge=1,
            le=100,
            description="When a budget's use in its period reaches this share of its limit, it is "
            "announced once in that period (the audit trail's budget.threshold_reached).",
        ),
    ]
    remaining: list[BudgetRemaining]


class BudgetProblem(Problem):
    """429 budget-exceeded: which budget the generation would pass, whose, what is left, when it resets."""

    type: Literal["urn:videogen:problem:budget-exceeded"]
    budget: BudgetName
    api_key_id: Annotated[str | None, Field(description="The key whose budget it is; null: the account's.")]
    limit: Annotated[float, Field(ge=0, description="Seconds of video; US dollars for a cost budget.")]
    used: Annotated[float, Field(ge=0)]
    remaining: Annotated[float, Field(ge=0)]
    requested: Annotated[
        float, Field(ge=0, description="What the generation needed (its seconds, or its estimated cost).")
    ]
    resets_at: Moment
