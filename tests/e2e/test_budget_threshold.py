"""A budget's soft threshold reaches the account's webhooks: the api and the notifier as processes over the
real broker and store, an endpoint subscribed to ``account.budget_threshold``, and an account whose daily
budgets (of seconds, and of cost: the mock priced at $0.10 a second here) its creations pass 80% of. Each
budget's event is delivered once in the period, signed, however many creations follow, and is listed at
``GET /v1/events``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest

from tests.support.pipeline import call
from tests.support.receivers import Receiver, receiving
from tests.support.stack import Stack, running_stack
from tests.support.waiting import eventually
from videogen_client.webhooks import unwrap
from videogen_common.settings import CommonSettings
from videogen_common.store import Store

pytestmark = pytest.mark.e2e


@pytest.fixture
async def stack(
    base_env: dict[str, str], common_settings: CommonSettings, store: Store, tmp_path: Path
) -> AsyncIterator[Stack]:
    async with running_stack(
        base_env,
        common_settings,
        store,
        tmp_path / "logs",
        services=["api", "notifier"],
        env={"VIDEOGEN_PRICES": '{"mock": {"mock": 0.1}}'},
    ) as s:
        yield s


async def test_a_budgets_threshold_is_delivered_once_in_its_period_signed(stack: Stack) -> None:
    async with receiving() as receiver, aiohttp.ClientSession() as session:
        base, key = stack.base, stack.key
        status, hook = await call(
            session,
            "POST",
            f"{base}/v1/webhooks",
            key,
            {"url": receiver.url(), "events": ["account.budget_threshold"]},
        )
        assert status == 201, hook
        budgets = {"daily_video_seconds": 100, "daily_cost": 10}  # ten generations of 10 s ($1) each
        status, _ = await call(session, "PUT", f"{base}/v1/budgets", key, budgets)
        assert status == 200
        body = {"prompt": "a kite", "provider": "mock", "duration": 10}
        for _ in range(7):  # 70%: nothing yet
            assert (await call(session, "POST", f"{base}/v1/generate", key, body))[0] == 202
        for _ in range(2):  # 80%, then 90%: announced once
            assert (await call(session, "POST", f"{base}/v1/generate", key, body))[0] == 202

        await receiver.request(2, timeout=30)  # one per budget
        by_budget: dict[str, dict[str, Any]] = {}
        for delivered in receiver.requests:
            event = unwrap(hook["secret"], dict(delivered.headers), delivered.body)
            payload = orjson.loads(delivered.body)
            assert payload["event"] == event.event == "account.budget_threshold"
            by_budget[payload["data"]["budget"]] = payload["data"]
        assert set(by_budget) == {"daily_video_seconds", "daily_cost"}
        for name, limit, used in (("daily_video_seconds", 100, (80, 90)), ("daily_cost", 10, (8, 9))):
            data = by_budget[name]
            assert (data["limit"], data["threshold_percent"], data["api_key_id"]) == (limit, 80, None)
            assert used[0] <= data["used"] <= used[1] and data["remaining"] == limit - data["used"]

        async def listed() -> bool:
            status, page = await call(session, "GET", f"{base}/v1/events?type=account.budget_threshold", key)
            return status == 200 and len(page["data"]) == 2

        await eventually(listed, 15, "the event listed at GET /v1/events")
        await _quiet(receiver)
        assert receiver.count() == 2  # each once in the period, whatever followed


async def _quiet(receiver: Receiver) -> None:
    """Give a wrong second delivery room to arrive: the notifier delivers within a second."""
    await asyncio.sleep(2.0)
