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
from tests.support.services import ServiceProcess, wait_http_ok
from videogen.engines import free_port
from videogen.keys import create_key
from videogen.migrate import migrate
from videogen_common.settings import CommonSettings
from videogen_common.store import Store

pytestmark = pytest.mark.e2e


@pytest.fixture
async def stack(
    base_env: dict[str, str], common_settings: CommonSettings, store: Store, tmp_path: Path
) -> AsyncIterator[tuple[str, str]]:
    """Migrations, an API key, and the three services as processes. Yields (api base URL, key)."""
    await migrate(common_settings)
    key = await create_key(store, "acme")
    port = free_port()
    env = {**base_env, "VIDEOGEN_API_PORT": str(port), "VIDEOGEN_PUBLIC_BASE_URL": f"http://127.0.0.1:{port}"}
    services = [ServiceProcess(name, env, tmp_path / "logs") for name in ("api", "orchestrator", "notifier")]
    try:
        for service in services:
            await service.start()
        await wait_http_ok(f"http://127.0.0.1:{port}/healthz", services[0])
        yield f"http://127.0.0.1:{port}", key
    finally:
        codes = await asyncio.gather(*(s.stop() for s in services))
        assert codes == [0, 0, 0], f"services did not exit cleanly on SIGTERM: {codes}"


async def test_generation_completes_and_a_signed_delivery_arrives(
    stack: tuple[str, str], receiver: Receiver
) -> None:
    base, key = stack
    async with aiohttp.ClientSession() as session:
        status, hook = await call(
            session,
            "POST",
            f"{base}/v1/webhooks",
            key,
            {"url": receiver.url, "events": ["video.completed", "video.failed"]},
        )
        assert status == 201
        status, created = await call(
            session,
            "POST",
            f"{base}/v1/generate",
            key,
            {"prompt": "a lighthouse in a storm", "provider": "mock", "duration": 4},
        )
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


async def test_fail_marker_ends_failed_and_delivers_video_failed(
    stack: tuple[str, str], receiver: Receiver
) -> None:
    base, key = stack
    async with aiohttp.ClientSession() as session:
        status, hook = await call(
            session, "POST", f"{base}/v1/webhooks", key, {"url": receiver.url, "events": ["video.failed"]}
        )
        assert status == 201
        status, created = await call(
            session,
            "POST",
            f"{base}/v1/generate",
            key,
            {"prompt": "this one breaks #fail", "provider": "mock", "duration": 3},
        )
        assert status == 202

        headers, body = await asyncio.wait_for(receiver.expect(created["id"]), 90)
        verify(hook["secret"], headers, body)
        payload = orjson.loads(body)
        assert payload["event"] == "video.failed"
        assert payload["data"]["error"]["code"] == "mock_failure"
        status, final = await call(session, "GET", f"{base}/v1/generations/{created['id']}", key)
        assert final["status"] == "failed" and final["error"]["code"] == "mock_failure"
        assert final["video_url"] is None
