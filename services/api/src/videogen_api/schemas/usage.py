"""``GET /v1/usage``: what the account made in a range, by day, provider, status and key, and its budgets
as they stand."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from videogen_api.schemas.budgets import BudgetRemaining
from videogen_api.schemas.common import Body, Moment
from videogen_common.domain import Provider, Status

COST = "USD their providers charged (finished generations' cost, every try counted)."


class UsageRow(Body):
    """One day's generations of one provider that ended in (or are in) one status."""

    date: Annotated[
        str, Field(pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$", description="The UTC day they were made.")
    ]
    provider: Provider
    status: Status
    generations: Annotated[int, Field(ge=0)]
    seconds: Annotated[int, Field(ge=0, description="Seconds of video asked for.")]
    video_seconds: Annotated[int, Field(ge=0, description="Seconds of video made: completed ones only.")]
    cost: Annotated[float, Field(ge=0, description=COST)]


class UsageTotals(Body):
    generations: Annotated[int, Field(ge=0)]
    seconds: Annotated[int, Field(ge=0, description="Seconds of video asked for.")]
    video_seconds: Annotated[int, Field(ge=0, description="Seconds of video made: completed ones only.")]
    cost: Annotated[float, Field(ge=0, description=COST)]


class ProviderCost(Body):
    """What one provider charged for the range's generations, all their tries there counted."""

    provider: Provider
    attempts: Annotated[int, Field(ge=0, description="Tries at it.")]
    cost: Annotated[float, Field(ge=0, description="USD.")]


class ModelCost(Body):
    """What one model of one provider charged for the range's generations, all their tries of it counted."""

    provider: Provider
    model: Annotated[str | None, Field(description="Null: tries recorded before models were.")]
    attempts: Annotated[int, Field(ge=0, description="Tries of it.")]
    cost: Annotated[float, Field(ge=0, description="USD.")]


class KeyUsage(UsageTotals):
    """What one API key made."""

    api_key_id: Annotated[
        str | None, Field(description="The key's id; null for generations made before keys were recorded.")
    ]


class Usage(Body):
    """The account's generations made in [start, end), counted once each, from the generations themselves."""

    start: Moment
    end: Moment
    api_key_id: Annotated[str | None, Field(description="Only this key's generations, when asked for.")]
    total: UsageTotals
    data: Annotated[list[UsageRow], Field(description="By day, provider and status; oldest day first.")]
    api_keys: Annotated[list[KeyUsage], Field(description="The same totals per API key.")]
    providers: Annotated[
        list[ProviderCost],
        Field(description="Cost by provider: what each provider charged for the tries made there."),
    ]
    models: Annotated[
        list[ModelCost],
        Field(description="Cost by provider and model: what each model charged for the tries of it."),
    ]
    budgets: Annotated[
        list[BudgetRemaining],
        Field(
            description="What is left now of each budget of the account and of the key asked about "
            "(api_key_id), or else of the key making the request; only budgets with a limit."
        ),
    ]
