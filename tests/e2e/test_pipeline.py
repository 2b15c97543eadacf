"""The whole path with the three services as separate processes over the real broker and store:
create → completed → a signed video.completed delivery the receiver verifies; and #fail → video.failed."""

from __future__ import annotations

import asyncio
import io
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import av
import orjson
import pytest

from tests.support.pipeline import Receiver, call, verify
from tests.support.stack import Stack, generate, running_stack, subscribe
from videogen_common.settings import CommonSettings
from videogen_common.store import Store

pytestmark = pytest.mark.e2e


@pytest.fixture
async def stack(
    base_env: dict[str, str], common_settings: CommonSettings, store: Store, tmp_path: Path
) -> AsyncIterator[Stack]:
    """Migrations, an API key, and the three services as processes."""
    async with running_stack(base_env, common_settings, store, tmp_path / "logs") as stack:
        yield stack


async def test_generation_completes_and_a_signed_delivery_arrives(stack: Stack, receiver: Receiver) -> None:
    base, key = stack.base, stack.key
    async with aiohttp.ClientSession() as session:
        hook = await subscribe(session, base, key, receiver.url, ["video.completed", "video.failed"])
        status, created = await generate(session, base, key, "a lighthouse in a storm", duration=4)
        assert status == 202 and created["status"] == "processing"

        headers, body = await asyncio.wait_for(receiver.expect(created["id"]), 90)
        verify(hook["secret"], headers, body)
        assert headers["Content-Type"] == "application/json"
        payload = orjson.loads(body)
        assert payload["event"] == "video.completed"
        assert payload["data"]["status"] == "completed" and payload["data"]["error"] is None

        status, final = await call(session, "GET", f"{base}/v1/generations/{created['id']}", key)
        assert status == 200 and final["status"] == "completed"
        assert {k: final[k] for k in payload["data"]} == payload["data"]
        async with session.get(final["video_url"]) as video:
            assert video.status == 200 and video.content_type == "video/mp4"
            data = await video.read()
        container = av.open(io.BytesIO(data))
        assert isinstance(container, av.container.InputContainer)
        assert container.streams.video[0].codec_context.name == "h264"
        assert container.duration is not None and container.duration / 1_000_000 == pytest.approx(4.0)
        async with session.get(final["thumbnail_url"]) as thumb:
            assert thumb.status == 200 and (await thumb.read())[:2] == b"\xff\xd8"


async def test_fail_marker_ends_failed_and_delivers_video_failed(stack: Stack, receiver: Receiver) -> None:
    base, key = stack.base, stack.key
    async with aiohttp.ClientSession() as session:
        hook = await subscribe(session, base, key, receiver.url, ["video.failed"])
        status, created = await generate(session, base, key, "this one breaks #fail")
        assert status == 202

        headers, body = await asyncio.wait_for(receiver.expect(created["id"]), 90)
        verify(hook["secret"], headers, body)
        payload = orjson.loads(body)
        assert payload["event"] == "video.failed"
        assert payload["data"]["error"]["code"] == "mock_failure"
        status, final = await call(session, "GET", f"{base}/v1/generations/{created['id']}", key)
        assert final["status"] == "failed" and final["error"]["code"] == "mock_failure"
        assert final["video_url"] is None
