"""``vg keys`` and ``vg budgets``: the account's API keys and budgets."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from videogen_client._client import Client
from videogen_client.cli import output
from videogen_client.models import ApiKeyBudgets
from videogen_client.models import Budgets as BudgetState

KEY_COLUMNS = ("id", "name", "scopes", "last_four", "last_used_at", "expires_at", "revoked_at")
REMAINING_COLUMNS = ("budget", "limit", "used", "remaining", "resets_at")


def keys(client: Client, args: argparse.Namespace) -> None:
    command = args.keys_command
    if command == "create":
        budgets = ApiKeyBudgets(**_given(args))
        made = client.api_keys.create(
            name=args.name,
            scopes=args.scope,
            expires_at=args.expires_at,
            budgets=budgets if budgets.model_dump(exclude_none=True) else None,
        )
        print(output.as_json(made) if args.json else output.fields(made))
        print("vg: the secret is shown this once; store it now", file=sys.stderr)
    elif command == "list":
        found = [k for _, k in zip(range(args.limit), client.api_keys.list(), strict=False)]
        print(output.as_json(found) if args.json else output.table(found, KEY_COLUMNS))
    elif command == "get":
        key = client.api_keys.get(args.id)
        print(output.as_json(key) if args.json else output.fields(key))
    else:
        revoked = client.api_keys.revoke(args.id)
        print(
            output.as_json(revoked)
            if args.json
            else f"revoked {revoked.id} at {revoked.revoked_at:%Y-%m-%d %H:%M:%S} UTC"
        )


def budgets(client: Client, args: argparse.Namespace) -> None:
    if getattr(args, "budgets_command", None) == "set":
        state = client.budgets.set(**_given(args))
    else:
        state = client.budgets.get()
    if args.json:
        print(output.as_json(state))
        return
    print(_limits(state))
    if state.remaining:
        print()
        print(output.table(state.remaining, REMAINING_COLUMNS))


def _given(args: argparse.Namespace) -> dict[str, Any]:
    """The budgets given as options (``--daily-video-seconds`` ... ``--monthly-cost``; absent: no limit)."""
    return {name: getattr(args, name) for name in ApiKeyBudgets.model_fields}


def _limits(state: BudgetState) -> str:
    def limit(value: float | None, unit: str) -> str:
        return "no limit" if value is None else unit.format(value)

    return (
        f"daily video seconds: {limit(state.daily_video_seconds, '{} s')}; monthly video seconds: "
        f"{limit(state.monthly_video_seconds, '{} s')}; daily cost: {limit(state.daily_cost, '${}')}; "
        f"monthly cost: {limit(state.monthly_cost, '${}')} (announced at {state.threshold_percent}% of each)"
    )
