"""A generation's first frame at the orchestrator, with the real mock provider, actor, store and media folder:
an uploaded image (already in media storage) or one fetched from the client's URL through the destination
guard opens the video; a URL on a refused address is never fetched; what is not a usable image fails the
generation with ``image_unusable``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from tests.support.images import close_to, opening_colour, solid_image
from tests.support.orchestration import Orchestration
from videogen.engines import free_port
from videogen_common.media import LocalMediaStore
from videogen_common.store import Store
from videogen_orchestrator.providers.mock import MockProvider

RED, BLUE = (220, 30, 40), (30, 60, 210)


@dataclass
class ImageServer:
    """A client's image host on 127.0.0.1: ``GET /image`` answers ``body`` as ``content_type``."""

    body: bytes = b""
    content_type: str = "image/png"
    requests: int = 0
    url: str = ""
    runner: web.AppRunner | None = field(default=None, repr=False)

    async def serve(self, request: web.Request) -> web.Response:
        self.requests += 1
        return web.Response(body=self.body, content_type=self.content_type)


@pytest.fixture
async def server() -> AsyncIterator[ImageServer]:
    served = ImageServer()
    app = web.Application()
    app.router.add_get("/image", served.serve)
    served.runner = web.AppRunner(app)
    await served.runner.setup()
    port = free_port()
    await web.TCPSite(served.runner, "127.0.0.1", port).start()
    served.url = f"http://127.0.0.1:{port}/image"
    try:
        yield served
    finally:
        await served.runner.cleanup()


@pytest.fixture
def media(tmp_path: Path) -> LocalMediaStore:
    return LocalMediaStore(tmp_path / "media")


async def _run(
    store: Store, base_env: dict[str, str], media: LocalMediaStore, *, allow: str = "", **fields: Any
) -> dict[str, Any]:
    orchestration = Orchestration(
        store, base_env, media, settings={"image_fetch_allow_cidrs": allow, "image_max_bytes": 64 * 1024}
    )
    return await orchestration.run_actor(MockProvider(cache_entries=0), **fields)


async def _opening(media: LocalMediaStore, doc: dict[str, Any]) -> tuple[int, int, int]:
    video = await media.get(doc["video_key"])
    assert video is not None
    return await asyncio.to_thread(opening_colour, video)


async def test_an_uploaded_image_opens_the_video(
    store: Store, base_env: dict[str, str], media: LocalMediaStore
) -> None:
    await media.put("upl_1/image.png", solid_image(RED))
    doc = await _run(
        store,
        base_env,
        media,
        image={"upload_id": "upl_1"},
        image_key="upl_1/image.png",
        image_type="image/png",
    )

    assert doc["status"] == "completed", doc["error"]
    assert close_to(await _opening(media, doc), RED)


async def test_an_image_at_a_url_is_fetched_once_kept_and_opens_the_video(
    store: Store, base_env: dict[str, str], media: LocalMediaStore, server: ImageServer
) -> None:
    server.body = solid_image(BLUE, kind="JPEG")
    doc = await _run(store, base_env, media, allow="127.0.0.0/8", image={"url": server.url})

    assert doc["status"] == "completed", doc["error"]
    assert close_to(await _opening(media, doc), BLUE)
    assert server.requests == 1
    # Kept beside the video, so a retry or another instance does not fetch it again.
    assert doc["image_key"] == f"{doc['_id']}/first_frame.jpg" and doc["image_type"] == "image/jpeg"
    assert await media.get(doc["image_key"]) == server.body


async def test_a_url_on_a_private_address_is_never_fetched(
    store: Store, base_env: dict[str, str], media: LocalMediaStore, server: ImageServer
) -> None:
    server.body = solid_image(BLUE)
    doc = await _run(store, base_env, media, image={"url": server.url})

    assert doc["status"] == "failed"
    assert doc["error"]["code"] == "image_unusable"
    assert "address we do not fetch from" in doc["error"]["message"]
    assert "127.0.0.1" in doc["error"]["message"]
    assert server.requests == 0


@pytest.mark.parametrize(
    ("body", "content_type", "says"),
    [
        (b"<html>not an image</html>", "image/png", "did not give a usable image"),
        (solid_image(RED, kind="GIF"), "image/gif", "a GIF image; send PNG, JPEG or WebP"),
        (solid_image(RED, size=(400, 400), kind="BMP"), "image/png", "over 65536 bytes"),
    ],
)
async def test_what_is_not_a_usable_image_fails_the_generation(
    store: Store,
    base_env: dict[str, str],
    media: LocalMediaStore,
    server: ImageServer,
    body: bytes,
    content_type: str,
    says: str,
) -> None:
    server.body, server.content_type = body, content_type
    doc = await _run(store, base_env, media, allow="127.0.0.0/8", image={"url": server.url})

    assert doc["status"] == "failed"
    assert doc["error"]["code"] == "image_unusable"
    assert says in doc["error"]["message"]
    assert doc["error"]["retriable"] is False
