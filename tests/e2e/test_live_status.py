"""A generation followed live on the real stack, the mock taking a few seconds: its event stream, opened on a
second api process, shows progress rising to 100 and the states in order, then ends; a create with
``Prefer: wait`` answers with the finished generation as soon as the orchestrator has finished it."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path

import aiohttp
import orjson
import pytest

from tests.support.pipeline import verify
from tests.support.receivers import receiving
from tests.support.services import ServiceProcess, wait_http_ok
from tests.support.sse import events
from tests.support.stack import Stack, generate, running_stack, subscribe
from videogen.engines import free_port
from videogen_common.settings import CommonSettings
from videogen_common.store import Store

pytestmark = pytest.mark.e2e
LATENCY_MS = 3000
NOTICE_SECONDS = 1


@pytest.fixture
async def stack(
    base_env: dict[str, str], common_settings: CommonSettings, store: Store, tmp_path: Path
) -> AsyncIterator[Stack]:
    env = {
        "VIDEOGEN_MOCK_LATENCY_MS": str(LATENCY_MS),
        "VIDEOGEN_PROGRESS_WRITE_SECONDS": "0.2",
        "VIDEOGEN_PROGRESS_WEBHOOK_SECONDS": str(NOTICE_SECONDS),
    }
    async with running_stack(base_env, common_settings, store, tmp_path / "logs", env=env) as stack:
        yield stack


async def test_a_waiting_create_answers_with_the_finished_generation_as_soon_as_it_is_done(
    stack: Stack, store: Store
) -> None:
    body = {"prompt": "a heron taking off", "provider": "mock", "duration": 3}
    headers = {"Authorization": f"Bearer {stack.key}", "Prefer": "wait=60"}  # the longest: room for slow runs
    loop = asyncio.get_running_loop()
    async with aiohttp.ClientSession() as session:
        started = loop.time()
        async with session.post(f"{stack.base}/v1/generate", json=body, headers=headers) as response:
            took = loop.time() - started
            assert response.status == 202
            assert response.headers["Preference-Applied"] == "wait=60"
            answer = await response.json()
    assert answer["status"] == "completed" and answer["video_url"]
    stored = await store.generations.find_one({"_id": answer["id"]})
    assert stored is not None and stored["status"] == "completed"
    # Answered once it was done (at least one poll of the mock's latency), well before the wait ran out.
    assert LATENCY_MS / 1000 <= took < 50


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


async def test_endpoints_that_list_them_get_a_processing_notice_and_throttled_progress_signed_as_any_event(
    stack: Stack,
) -> None:
    async with receiving() as receiver, aiohttp.ClientSession() as session:
        everything = await subscribe(
            session,
            stack.base,
            stack.key,
            receiver.url("/all"),
            ["video.processing", "video.progress", "video.completed"],
        )
        await subscribe(session, stack.base, stack.key, receiver.url("/terminal"), ["video.completed"])
        status, created = await generate(session, stack.base, stack.key, "a lantern drifting downstream")
        assert status == 202
        await receiver.request(1, path="/terminal", timeout=60)
        # The terminal event to one endpoint came; the other's notices were recorded before it.
        await receiver.request_where(
            lambda r: r.path == "/all" and orjson.loads(r.body)["event"] == "video.completed", timeout=30
        )

    notices = [r for r in receiver.requests if r.path == "/all"]
    for request in notices:
        verify(everything["secret"], dict(request.headers), request.body)
    payloads = [orjson.loads(r.body) for r in notices]
    assert {p["data"]["id"] for p in payloads} == {created["id"]}
    kinds = [p["event"] for p in payloads]
    assert kinds.count("video.processing") == 1 and kinds.count("video.completed") == 1, kinds
    progress = sorted(
        (datetime.fromisoformat(p["timestamp"]), p["data"]["progress"])
        for p in payloads
        if p["event"] == "video.progress"
    )
    # Over the mock's 3 s, written every 0.2 s: offered at most once a second, and rising.
    assert 1 <= len(progress) <= LATENCY_MS / 1000 / NOTICE_SECONDS + 1, progress
    assert [value for _, value in progress] == sorted(value for _, value in progress)
    gaps = [(b - a).total_seconds() for (a, _), (b, _) in itertools.pairwise(progress)]
    assert all(gap >= NOTICE_SECONDS for gap in gaps), gaps
    # The endpoint that listed only video.completed got nothing else.
    assert [orjson.loads(r.body)["event"] for r in receiver.requests if r.path == "/terminal"] == [
        "video.completed"
    ]
