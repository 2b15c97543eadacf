"""A generation followed live on the real stack, the mock taking a few seconds: its event stream, opened on a
second api process, shows progress rising to 100 and the states in order, then ends; a create with
``Prefer: wait`` answers with the finished generation as soon as the orchestrator has finished it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from tests.support.services import ServiceProcess, wait_http_ok
from tests.support.sse import events
from tests.support.stack import Stack, running_stack
from videogen.engines import free_port
from videogen_common.settings import CommonSettings
from videogen_common.store import Store

pytestmark = pytest.mark.e2e
LATENCY_MS = 3000


@pytest.fixture
async def stack(
    base_env: dict[str, str], common_settings: CommonSettings, store: Store, tmp_path: Path
) -> AsyncIterator[Stack]:
    env = {"VIDEOGEN_MOCK_LATENCY_MS": str(LATENCY_MS), "VIDEOGEN_PROGRESS_WRITE_SECONDS": "0.2"}
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


async def test_a_stream_on_a_second_api_process_shows_progress_rising_and_the_states_in_order(
    stack: Stack, tmp_path: Path
) -> None:
    port = free_port()
    second = ServiceProcess("api", {**stack.env, "VIDEOGEN_API_PORT": str(port)}, tmp_path / "second")
    await second.start()
    try:
        other = f"http://127.0.0.1:{port}"
        await wait_http_ok(f"{other}/readyz", second)
        auth = {"Authorization": f"Bearer {stack.key}"}
        body = {"prompt": "a kite over the dunes", "provider": "mock", "duration": 3}
        async with aiohttp.ClientSession() as session:
            async with session.post(f"{stack.base}/v1/generate", json=body, headers=auth) as created:
                generation_id = (await created.json())["id"]  # made through the first api process
            url = f"{other}/v1/generations/{generation_id}/events"
            async with session.get(url, headers=auth) as response:
                assert response.status == 200
                seen = [event async for event in events(response)]  # to its end
    finally:
        assert await second.stop() == 0
    states = [(e.data["status"], e.data["progress"]) for e in seen]
    assert states[0] == ("processing", None) and states[-1] == ("completed", 100), states
    progress = [p for status, p in states if p is not None]
    assert len(progress) >= 3 and progress == sorted(progress), states  # rising, and seen as it rose
    assert all(status == "processing" for status, _ in states[:-1])
    ids = [e.id for e in seen]
    assert len(set(ids)) == len(ids)  # nothing twice
    assert [s["status"] for s in seen[-1].data["timeline"]] == ["processing", "completed"]
