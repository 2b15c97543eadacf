"""The services as separate processes with ``VIDEOGEN_MEDIA_BACKEND=s3`` against a real local S3 server: the
orchestrator stores a generation's video and thumbnail in the bucket, and the api serves both through their
signed links, byte ranges included."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp
import orjson
import pytest

from tests.support.pipeline import Receiver
from tests.support.s3 import s3_client
from tests.support.stack import generate, running_stack, subscribe
from videogen_common.settings import CommonSettings
from videogen_common.store import Store

pytestmark = pytest.mark.e2e


async def test_a_generation_completed_with_s3_media_has_both_links_working(
    base_env: dict[str, str],
    s3_env: dict[str, str],
    common_settings: CommonSettings,
    store: Store,
    receiver: Receiver,
    tmp_path: Path,
) -> None:
    async with (
        running_stack(base_env, common_settings, store, tmp_path / "logs", env=s3_env) as stack,
        aiohttp.ClientSession() as session,
    ):
        await subscribe(session, stack.base, stack.key, receiver.url, ["video.completed"])
        status, created = await generate(session, stack.base, stack.key, "a lantern festival over a river")
        assert status == 202
        _, body = await asyncio.wait_for(receiver.expect(created["id"]), 90)
        done = orjson.loads(body)["data"]
        assert done["status"] == "completed"

        bucket = s3_env["VIDEOGEN_S3_BUCKET"]
        async with s3_client(s3_env["VIDEOGEN_S3_ENDPOINT_URL"]) as raw:
            listing = await raw.list_objects_v2(Bucket=bucket)
            # Named by the fence of the lease that stored them (media_copy): the first claim's, 1.
            assert sorted(o["Key"] for o in listing["Contents"]) == [
                f"{created['id']}/thumbnail-1.jpg",
                f"{created['id']}/video-1.mp4",
            ]
            stored = await raw.get_object(Bucket=bucket, Key=f"{created['id']}/video-1.mp4")
            async with stored["Body"] as stream:
                video = await stream.read()
        assert not (Path(stack.env["VIDEOGEN_DATA_DIR"]) / "media").exists()

        async with session.get(done["video_url"]) as whole:
            assert whole.status == 200 and whole.content_type == "video/mp4"
            assert await whole.read() == video
        async with session.get(done["video_url"], headers={"Range": "bytes=32-1055"}) as part:
            assert part.status == 206
            assert part.headers["Content-Range"] == f"bytes 32-1055/{len(video)}"
            assert await part.read() == video[32:1056]
        async with session.get(done["thumbnail_url"]) as thumb:
            assert thumb.status == 200 and thumb.content_type == "image/jpeg"
            assert (await thumb.read())[:2] == b"\xff\xd8"
