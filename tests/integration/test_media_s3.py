"""Media in S3, against a real local S3 server (moto's, see tests/support/s3.py), a fresh bucket per test: the
store itself, and a generation completed by the orchestrator's actor whose video and thumbnail the api
serves from the bucket through their signed links, ranges included."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.support.api import api_client
from tests.support.env import settings_for
from tests.support.fakes import FinishedProvider, ManualClock
from tests.support.orchestration import Orchestration
from tests.support.s3 import s3_client
from videogen_api.settings import ApiSettings
from videogen_common.media import CHUNK_BYTES, MediaChanged, MediaStore, open_media_store
from videogen_common.media.s3 import S3MediaStore
from videogen_common.settings import CommonSettings
from videogen_common.store import Store
from videogen_orchestrator.providers.base import Output
from videogen_orchestrator.render import Rendered, Scene, render
from videogen_orchestrator.settings import OrchestratorSettings

KEY = "gen_1/video.mp4"


@pytest.fixture
def env(base_env: dict[str, str], s3_env: dict[str, str]) -> dict[str, str]:
    return {**base_env, **s3_env, "VIDEOGEN_S3_KEY_PREFIX": "videogen/test/"}


@pytest.fixture
async def s3(env: dict[str, str]) -> AsyncIterator[S3MediaStore]:
    async with open_media_store(settings_for(CommonSettings, env)) as store:
        assert isinstance(store, S3MediaStore)
        yield store


async def read(store: MediaStore, key: str, start: int, stop: int) -> list[bytes]:
    info = await store.stat(key)
    assert info is not None
    async with store.open_range(key, info, start, stop) as chunks:
        return [chunk async for chunk in chunks]


async def test_the_settings_choose_s3_and_objects_round_trip_under_the_prefix(
    s3: S3MediaStore, env: dict[str, str]
) -> None:
    assert s3.bucket == env["VIDEOGEN_S3_BUCKET"] and s3.prefix == "videogen/test/"
    await s3.put(KEY, b"\x00\x00\x00\x18ftypmp42")
    await s3.put("gen_1/thumbnail.jpg", b"\xff\xd8\xff\xe0")
    assert await s3.get(KEY) == b"\x00\x00\x00\x18ftypmp42"

    async with s3_client(env["VIDEOGEN_S3_ENDPOINT_URL"]) as raw:
        listing = await raw.list_objects_v2(Bucket=s3.bucket)
        assert sorted(o["Key"] for o in listing["Contents"]) == [
            "videogen/test/gen_1/thumbnail.jpg",
            "videogen/test/gen_1/video.mp4",
        ]
        head = await raw.head_object(Bucket=s3.bucket, Key="videogen/test/gen_1/video.mp4")
        thumb = await raw.head_object(Bucket=s3.bucket, Key="videogen/test/gen_1/thumbnail.jpg")
    assert (head["ContentType"], thumb["ContentType"]) == ("video/mp4", "image/jpeg")

    info = await s3.stat(KEY)
    assert info is not None
    assert info.size == 12 and f'"{info.etag}"' == head["ETag"] and info.modified == head["LastModified"]


async def test_missing_objects_are_none(s3: S3MediaStore) -> None:
    assert await s3.get(KEY) is None
    assert await s3.stat(KEY) is None


async def test_ranges_are_read_from_s3_in_chunks(s3: S3MediaStore) -> None:
    data = random.Random(3).randbytes(2 * CHUNK_BYTES + 1000)
    await s3.put(KEY, data)
    for start, stop in [
        (0, len(data)),
        (0, 1),
        (100, 200),
        (CHUNK_BYTES - 5, CHUNK_BYTES + 5),
        (len(data) - 1, len(data)),
    ]:
        assert b"".join(await read(s3, KEY, start, stop)) == data[start:stop]
    assert await read(s3, KEY, 7, 7) == []
    whole = await read(s3, KEY, 0, len(data))
    assert len(whole) > 1  # streamed, not one read of the whole object


async def test_a_replaced_or_removed_object_is_not_read_as_the_one_described(
    s3: S3MediaStore, env: dict[str, str]
) -> None:
    await s3.put(KEY, b"first version")
    stale = await s3.stat(KEY)
    assert stale is not None
    await s3.put(KEY, b"second version!")
    with pytest.raises(MediaChanged):
        async with s3.open_range(KEY, stale, 0, stale.size):
            pass
    async with s3_client(env["VIDEOGEN_S3_ENDPOINT_URL"]) as raw:
        await raw.delete_object(Bucket=s3.bucket, Key=s3.object_key(KEY))
    with pytest.raises(MediaChanged):
        async with s3.open_range(KEY, stale, 0, stale.size):
            pass


@pytest.mark.parametrize("key", ["../x", "a/b/c"])
async def test_bad_keys_are_refused_before_reaching_s3(s3: S3MediaStore, key: str) -> None:
    with pytest.raises(ValueError, match="bad media key"):
        await s3.put(key, b"x")
    with pytest.raises(ValueError, match="bad media key"):
        await s3.stat(key)


@pytest.fixture(scope="module")
def rendered() -> Rendered:
    return render(Scene("a hot air balloon over a desert at dawn", 3))


def path_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.path}?{parts.query}"


async def test_the_api_serves_a_completed_generations_media_from_s3(
    store: Store, env: dict[str, str], tmp_path: Path, rendered: Rendered
) -> None:
    clock = ManualClock()
    orchestrator_settings = settings_for(OrchestratorSettings, env, orchestrator_instance="orch-a")
    async with open_media_store(orchestrator_settings) as media:
        # No thumbnail from the provider: the orchestrator makes one, and stores both in the bucket.
        orchestration = Orchestration(store, env, media, clock=clock)
        doc = await orchestration.run_actor(FinishedProvider(Output(video=rendered.video)))
        assert doc["status"] == "completed"
        thumbnail = await media.get(doc["thumbnail_key"])
    assert thumbnail is not None and thumbnail.startswith(b"\xff\xd8")
    # Nothing was written to the local folder.
    assert not (tmp_path / "data" / "media").exists()

    size = len(rendered.video)
    async with api_client(settings_for(ApiSettings, env, api_port=0), clock=clock) as client:
        video = await client.get(path_of(doc["video_url"]))
        assert video.status == 200 and video.content_type == "video/mp4"
        assert video.headers["Content-Length"] == str(size) and video.headers["Accept-Ranges"] == "bytes"
        assert await video.read() == rendered.video

        part = await client.get(path_of(doc["video_url"]), headers={"Range": "bytes=1000-1999"})
        assert part.status == 206 and part.headers["Content-Range"] == f"bytes 1000-1999/{size}"
        assert await part.read() == rendered.video[1000:2000]
        tail = await client.get(path_of(doc["video_url"]), headers={"Range": "bytes=-100"})
        assert tail.status == 206 and await tail.read() == rendered.video[-100:]
        beyond = await client.get(path_of(doc["video_url"]), headers={"Range": f"bytes={size}-"})
        assert beyond.status == 416 and beyond.headers["Content-Range"] == f"bytes */{size}"

        same = await client.get(path_of(doc["video_url"]), headers={"If-None-Match": video.headers["ETag"]})
        assert same.status == 304

        thumb = await client.get(path_of(doc["thumbnail_url"]))
        assert thumb.status == 200 and thumb.content_type == "image/jpeg"
        assert await thumb.read() == thumbnail

        forged = await client.get(path_of(doc["video_url"])[:-4] + "0000")
        assert forged.status == 404 and forged.content_type == "application/problem+json"
