"""The bodies of the account's own resources: API keys (``/v1/api-keys``), budgets (``/v1/budgets``), and the
problems that refuse a key beyond its scopes or a generation beyond a budget. Like ``schemas``, the same
models validate requests, generate the OpenAPI document and check the answers in the tests."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

from videogen_api.schemas import (
    BudgetName,
    BudgetRemaining,
    Moment,
    Problem,
    _absent_not_null,
    _Body,
    parse_timestamp,
)
from videogen_common.budgets import Limits
from videogen_common.scopes import Scope

# Larger than any month of video anyone will ask for; keeps the counters' arithmetic far from overflowing.
MAX_BUDGET = 1_000_000_000
# Likewise in US dollars (counted in micro-dollars: 10^15 of them, far from 2^63).
MAX_COST_BUDGET = 1_000_000_000
MAX_NAME_CHARS = 100

KeyId = Annotated[str, Field(pattern=r"^key_[0-9a-z]{26}$")]


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


class ApiKeyBudgets(_Body):
    """A key's own budgets (null: no limit), on top of the account's."""

    daily_video_seconds: Seconds
    monthly_video_seconds: Seconds
    daily_cost: Dollars
    monthly_cost: Dollars


class Budgets(_Body):
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


def _name(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be blank")
    return value


def _expiry(value: Any) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError("must be an ISO 8601 timestamp string, e.g. 2026-12-31T00:00:00Z")
    return parse_timestamp(value)


KeyName = Annotated[str, Field(min_length=1, max_length=MAX_NAME_CHARS, description="Yours, to tell it by.")]
Scopes = Annotated[
    list[Scope],
    Field(
        min_length=1,
        json_schema_extra={"uniqueItems": True},
        description="What the key may do (each :write holds the :read of the same resource); at most the "
        "scopes of the key making it.",
    ),
]
Expiry = Annotated[
    datetime | None,
    BeforeValidator(_expiry),
    Field(description="When it stops working (ISO 8601 with a time zone, in the future); null: never."),
]


class ApiKeyCreate(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    name: KeyName
    scopes: Scopes
    expires_at: Expiry = None
    budgets: Annotated[
        BudgetLimits | None,
        Field(
            description="Its own budgets, on top of the account's; at most those of the key making it. "
            "Absent: none."
        ),
    ] = None

    _blank = field_validator("name")(_name)

    @field_validator("scopes")
    @classmethod
    def _unique(cls, value: list[Scope]) -> list[Scope]:
        if len(set(value)) != len(value):
            raise ValueError("must not repeat a scope")
        return value


class ApiKeyUpdate(BaseModel):
    """PATCH /v1/api-keys/{id}: its name, its budgets (replaced as a whole: a budget left out has no limit),
    or both."""

    model_config = ConfigDict(
        extra="forbid", strict=True, frozen=True, json_schema_extra={"minProperties": 1}
    )

    name: KeyName | None = Field(default=None, json_schema_extra=_absent_not_null)
    budgets: BudgetLimits | None = Field(default=None, json_schema_extra=_absent_not_null)

    @field_validator("name", "budgets", mode="before")
    @classmethod
    def _not_null(cls, value: Any) -> Any:
        if value is None:
            raise ValueError("must not be null")
        return value

    _blank = field_validator("name")(_name)

    @model_validator(mode="after")
    def _not_empty(self) -> ApiKeyUpdate:
        if not self.model_fields_set:
            raise ValueError("must set at least one of name, budgets")
        return self


class ApiKey(_Body):
    """An API key as the account sees it: never its secret, only its prefix and last four characters."""

    id: KeyId
    name: Annotated[str | None, Field(description="null for keys made before keys had names.")]
    scopes: Annotated[list[Scope], Field(description="What it may do (as given; :write holds :read).")]
    prefix: Annotated[str, Field(description="How every key begins.")]
    last_four: Annotated[
        str | None, Field(description="Its last four characters; null for keys made before they were kept.")
    ]
    budgets: ApiKeyBudgets
    created_at: Moment
    last_used_at: Annotated[
        datetime | None, Field(description="When it was last used, to the minute; null: never since kept.")
    ]
    expires_at: Annotated[datetime | None, Field(description="When it stops working; null: never.")]
    revoked_at: Annotated[datetime | None, Field(description="When it was revoked; null: it was not.")]


class ApiKeyCreated(ApiKey):
    secret: Annotated[
        str, Field(description="The key itself: shown here only, once. Send it as Authorization: Bearer.")
    ]


class ApiKeyList(_Body):
    """A page of the account's keys, newest first (revoked ones too)."""

    data: list[ApiKey]
    next_cursor: Annotated[
        str | None, Field(description="Pass as cursor for the next page; null on the last page.")
    ]


class ScopeProblem(Problem):
    """403 insufficient-scope: the scope the request needed, which the key does not hold."""

    type: Literal["urn:videogen:problem:insufficient-scope"]
    scope: Scope


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
