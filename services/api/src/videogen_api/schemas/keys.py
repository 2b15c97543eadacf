"""The account's API keys (``/v1/api-keys``): what making and changing one takes, the key as answered (its
secret only once), and the problem that refuses a key beyond its scopes."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

from videogen_api.schemas.budgets import ApiKeyBudgets, BudgetLimits
from videogen_api.schemas.common import Body, Moment, NextCursor, Problem, absent_not_null, parse_timestamp
from videogen_common.scopes import Scope

MAX_NAME_CHARS = 100

KeyId = Annotated[str, Field(pattern=r"^key_[0-9a-z]{26}$")]


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

    name: KeyName | None = Field(default=None, json_schema_extra=absent_not_null)
    budgets: BudgetLimits | None = Field(default=None, json_schema_extra=absent_not_null)

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


class ApiKey(Body):
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


class ApiKeyList(Body):
    """A page of the account's keys, newest first (revoked ones too)."""

    data: list[ApiKey]
    next_cursor: NextCursor


class ScopeProblem(Problem):
    """403 insufficient-scope: the scope the request needed, which the key does not hold."""

    type: Literal["urn:videogen:problem:insufficient-scope"]
    scope: Scope
