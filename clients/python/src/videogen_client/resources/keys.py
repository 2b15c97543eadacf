"""``client.api_keys`` and ``client.budgets``: the account's own API keys (made with scopes, an expiry and
budgets of their own; the secret answered once), and the account's budgets with what is left of them."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from datetime import datetime
from typing import Any

from videogen_client._paging import walk
from videogen_client._transport import Resource, given
from videogen_client.enums import Scope
from videogen_client.models import ApiKey, ApiKeyBudgets, ApiKeyCreated, ApiKeyList
from videogen_client.models import Budgets as BudgetState

BudgetsIn = ApiKeyBudgets | Mapping[str, float | None]


def _budgets(budgets: BudgetsIn | None) -> dict[str, Any] | None:
    if budgets is None:
        return None
    return budgets.model_dump() if isinstance(budgets, ApiKeyBudgets) else dict(budgets)


class AsyncApiKeys(Resource):
    async def create(
        self,
        *,
        name: str,
        scopes: Sequence[Scope],
        expires_at: datetime | None = None,
        budgets: BudgetsIn | None = None,
    ) -> ApiKeyCreated:
        """Make a key holding ``scopes`` (at most those of the key making it); ``secret`` on the answer is the
        key itself, shown this once. ``budgets``: its own, e.g. ``{"daily_video_seconds": 600}``."""
        expires = expires_at.isoformat() if expires_at is not None else None
        body = {"name": name, "scopes": list(scopes), **given(expires_at=expires, budgets=_budgets(budgets))}
        return await self._t.call(ApiKeyCreated, "POST", "api-keys", json_body=body)

    async def list_page(self, *, limit: int | None = None, cursor: str | None = None) -> ApiKeyList:
        return await self._t.call(ApiKeyList, "GET", "api-keys", params={"limit": limit, "cursor": cursor})

    def list(self, *, page_size: int | None = None) -> AsyncIterator[ApiKey]:
        """Every key of the account, newest first (revoked ones too), page after page."""
        return walk(lambda cursor: self.list_page(limit=page_size, cursor=cursor))

    async def get(self, key_id: str) -> ApiKey:
        return await self._t.call(ApiKey, "GET", f"api-keys/{key_id}")

    async def update(
        self, key_id: str, *, name: str | None = None, budgets: BudgetsIn | None = None
    ) -> ApiKey:
        """Rename it, or replace its own budgets (a budget left out has no limit)."""
        body = given(name=name, budgets=_budgets(budgets))
        return await self._t.call(ApiKey, "PATCH", f"api-keys/{key_id}", json_body=body)

    async def revoke(self, key_id: str) -> ApiKey:
        """It stops working within seconds on every api replica (at once on the one answering)."""
        return await self._t.call(ApiKey, "DELETE", f"api-keys/{key_id}")


class AsyncBudgets(Resource):
    async def get(self) -> BudgetState:
        """The account's budgets, and what is left of each until when."""
        return await self._t.call(BudgetState, "GET", "budgets")

    async def set(
        self,
        *,
        daily_video_seconds: int | None = None,
        monthly_video_seconds: int | None = None,
        daily_cost: float | None = None,
        monthly_cost: float | None = None,
    ) -> BudgetState:
        """Replace the account's budgets: one left as None has no limit. Costs in US dollars."""
        body = {
            "daily_video_seconds": daily_video_seconds,
            "monthly_video_seconds": monthly_video_seconds,
            "daily_cost": daily_cost,
            "monthly_cost": monthly_cost,
        }
        return await self._t.call(BudgetState, "PUT", "budgets", json_body=body)
