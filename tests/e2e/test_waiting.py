"""``Prefer: wait`` on the real stack: a create that waits answers with the finished generation as soon as the
orchestrator has finished it (a mock taking a few seconds), told by the status event, not by polling."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from tests.support.stack import Stack, running_stack
from videogen_common.settings import CommonSettings
from videogen_common.store import Store

pytestmark = pytest.mark.e2e
LATENCY_MS = 2000


@pytest.fixture
async def stack(
    base_env: dict[str, str], common_settings: CommonSettings, store: Store, tmp_path: Path
) -> AsyncIterator[Stack]:
    env = {"VIDEOGEN_MOCK_LATENCY_MS": str(LATENCY_MS)}
    async with running_stack(base_env, common_settings, store, tmp_path / "logs", env=env) as stack:
        yield stack


async def test_a_waiting_create_answers_with_the_finished_generation_as_soon_as_it_is_done(
    stack: Stack, store: Store
) -> None:
    body = {"prompt": "a heron taking off", "provider": "mock", "duration": 3}
    headers = {"Authorization": f"Bearer {stack.key}", "Prefer": "wait=30"}
    loop = asyncio.get_running_loop()
    async with aiohttp.ClientSession() as session:
        started = loop.time()
        async with session.post(f"{stack.base}/v1/generate", json=body, headers=headers) as response:
            took = loop.time() - started
            assert response.status == 202
            assert response.headers["Preference-Applied"] == "wait=30"
            answer = await response.json()
    assert answer["status"] == "completed" and answer["video_url"]
    stored = await store.generations.find_one({"_id": answer["id"]})
    assert stored is not None and stored["status"] == "completed"
    # Answered once it was done (at least one poll of the mock's latency), well before the wait ran out.
    assert LATENCY_MS / 1000 <= took < 30
