"""Storing an endpoint exactly as POST /v1/webhooks stores it, for tests that start below the API."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from videogen_common.ids import new_id
from videogen_common.signing import new_webhook_secret
from videogen_common.store import Store


async def insert_webhook(
    store: Store,
    url: str,
    *,
    now: datetime,
    account_id: str,
    events: Sequence[str],
    active: bool = True,
    **fields: Any,
) -> tuple[str, str]:
    """Returns (webhook id, secret)."""
    secret = new_webhook_secret()
    webhook_id = new_id("wh", now)
    await store.webhooks.insert_one(
        {
            "_id": webhook_id,
            "account_id": account_id,
            "url": url,
            "events": list(events),
            "secrets": [{"secret": secret, "created_at": now, "expires_at": None}],
            "active": active,
            "created_at": now,
            "updated_at": now,
            **fields,
        }
    )
    return webhook_id, secret
