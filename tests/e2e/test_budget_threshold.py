"""A budget's soft threshold reaches the account's webhooks: the api and the notifier as processes over the
real broker and store, an endpoint subscribed to ``account.budget_threshold``, and an account whose daily
budget its creations pass 80% of. The event is delivered once in the period, signed, however many creations
follow, and is listed at ``GET /v1/events``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

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
        base_env, common_settings, store, tmp_path / "logs", services=["api", "notifier"]
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
        status, _ = await call(session, "PUT", f"{base}/v1/budgets", key, {"daily_video_seconds": 100})
        assert status == 200
        body = {"prompt": "a kite", "provider": "mock", "duration": 10}
        for _ in range(7):  # 70%: nothing yet
            assert (await call(session, "POST", f"{base}/v1/generate", key, body))[0] == 202
        for _ in range(2):  # 80%, then 90%: announced once
            assert (await call(session, "POST", f"{base}/v1/generate", key, body))[0] == 202

        delivered = await receiver.request(1, timeout=30)
        event = unwrap(hook["secret"], dict(delivered.headers), delivered.body)
        payload = orjson.loads(delivered.body)
        assert payload["event"] == "account.budget_threshold"
        assert event.event == "account.budget_threshold"
        data = payload["data"]
        assert (data["budget"], data["limit"], data["threshold_percent"], data["api_key_id"]) == (
            "daily_video_seconds",
            100,
            80,
            None,
        )
        assert 80 <= data["used"] <= 90 and data["remaining"] == 100 - data["used"]

        async def listed() -> bool:
            status, page = await call(session, "GET", f"{base}/v1/events?type=account.budget_threshold", key)
            return status == 200 and len(page["data"]) == 1

        await eventually(listed, 15, "the event listed at GET /v1/events")
        await _quiet(receiver)
        assert receiver.count() == 1  # once in the period, whatever followed


async def _quiet(receiver: Receiver) -> None:
    """Give a wrong second delivery room to arrive: the notifier delivers within a second."""
    await asyncio.sleep(2.0)
