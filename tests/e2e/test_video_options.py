"""What a request asks of the video, through the three services as processes: the mock honours the frame size,
the seed, the negative prompt and an uploaded first frame for real (its render cache off, so every video is
rendered anew), and the client's metadata rides to the webhook and filters the listing."""

from __future__ import annotations

import asyncio
import io
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import av
import orjson
import pytest

from tests.support.images import close_to, opening_colour, solid_image
from tests.support.pipeline import Receiver, call, verify
from tests.support.stack import Stack, running_stack, subscribe
from videogen_client import AsyncClient
from videogen_common.settings import CommonSettings
from videogen_common.store import Store

pytestmark = pytest.mark.e2e

PROMPT = "a paper lantern rising over a dark lake"
GREEN = (40, 190, 60)


@pytest.fixture
async def stack(
    base_env: dict[str, str], common_settings: CommonSettings, store: Store, tmp_path: Path
) -> AsyncIterator[Stack]:
    env = {"VIDEOGEN_MOCK_RENDER_CACHE_ENTRIES": "0"}
    async with running_stack(base_env, common_settings, store, tmp_path / "logs", env=env) as stack:
        yield stack


async def _made(
    session: aiohttp.ClientSession, stack: Stack, receiver: Receiver, secret: str, **fields: Any
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Request a 3 s mock video with ``fields``; return its video.completed data and the generation."""
    body = {"prompt": PROMPT, "provider": "mock", "duration": 3, **fields}
    status, created = await call(session, "POST", f"{stack.base}/v1/generate", stack.key, body)
    assert status == 202, created
    headers, raw = await asyncio.wait_for(receiver.expect(created["id"]), 90)
    verify(secret, headers, raw)
    payload = orjson.loads(raw)
    assert payload["event"] == "video.completed", payload
    status, final = await call(session, "GET", f"{stack.base}/v1/generations/{created['id']}", stack.key)
    assert status == 200
    return payload["data"], final


async def _frames(session: aiohttp.ClientSession, url: str) -> tuple[tuple[int, int], list[bytes]]:
    async with session.get(url) as response:
        assert response.status == 200
        data = await response.read()

    def decode() -> tuple[tuple[int, int], list[bytes]]:
        with av.open(io.BytesIO(data), mode="r") as container:
            context = container.streams.video[0].codec_context
            size = (context.width, context.height)
            return size, [f.to_ndarray(format="rgb24").tobytes() for f in container.decode(video=0)]

    return await asyncio.to_thread(decode)


async def test_the_mock_honours_frame_size_seed_and_negative_prompt_and_metadata_reaches_the_webhook(
    stack: Stack, receiver: Receiver
) -> None:
    async with aiohttp.ClientSession() as session:
        hook = await subscribe(session, stack.base, stack.key, receiver.url, ["video.completed"])
        secret = hook["secret"]
        portrait = {"aspect_ratio": "9:16", "resolution": "720p"}
        data, tall = await _made(
            session, stack, receiver, secret, **portrait, seed=1, metadata={"order_id": "42", "team": "ads"}
        )
        _, again = await _made(session, stack, receiver, secret, **portrait, seed=1)
        _, other = await _made(session, stack, receiver, secret, **portrait, seed=2)
        _, negative = await _made(session, stack, receiver, secret, **portrait, seed=1, negative_prompt="fog")

        # The request's fields come back on the generation and in its webhook, metadata included.
        assert (tall["aspect_ratio"], tall["resolution"], tall["seed"]) == ("9:16", "720p", 1)
        assert tall["metadata"] == data["metadata"] == {"order_id": "42", "team": "ads"}
        assert (data["aspect_ratio"], data["seed"], data["negative_prompt"]) == ("9:16", 1, None)
        assert negative["negative_prompt"] == "fog"

        size, frames = await _frames(session, tall["video_url"])
        assert size == (720, 1280)
        assert len(frames) == 3 * 24
        assert (await _frames(session, again["video_url"]))[1] == frames
        other_frames = (await _frames(session, other["video_url"]))[1]
        assert all(a != b for a, b in zip(frames, other_frames, strict=True))
        negative_frames = (await _frames(session, negative["video_url"]))[1]
        assert all(a != b for a, b in zip(frames, negative_frames, strict=True))

        # The metadata filters the listing: only the generation that carries it.
        url = f"{stack.base}/v1/generations?metadata[order_id]=42"
        status, page = await call(session, "GET", url, stack.key)
        assert status == 200
        assert [g["id"] for g in page["data"]] == [tall["id"]]


async def test_an_uploaded_image_opens_the_video(stack: Stack, tmp_path: Path) -> None:
    frame = tmp_path / "frame.png"
    frame.write_bytes(solid_image(GREEN, size=(320, 240)))
    async with AsyncClient(api_key=stack.key, base_url=f"{stack.base}/v1") as client:
        upload = await client.uploads.create(frame)
        made = await client.generations.create_and_wait(
            prompt=PROMPT, provider="mock", duration=3, aspect_ratio="1:1", image=upload.id
        )
        again = await client.generations.create_and_wait(
            prompt=PROMPT, provider="mock", duration=3, image=frame.read_bytes()
        )
        video = b"".join([chunk async for chunk in client.generations.iter_video(made.id)])

    assert (upload.content_type, upload.width, upload.height) == ("image/png", 320, 240)
    assert made.image is not None and made.image.upload_id == upload.id
    assert again.image is not None and again.image.upload_id not in (None, upload.id)  # uploaded anew
    assert close_to(await asyncio.to_thread(opening_colour, video), GREEN)
