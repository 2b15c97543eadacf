"""GET /v1/media/{key}: signed links serve the stored file without an API key; forged or expired links
are 404. Files are streamed, with single byte ranges and conditional requests (here from the local store;
tests/integration/test_media_s3.py does the same through S3)."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

import pytest
from aiohttp import ClientPayloadError, web
from aiohttp.test_utils import TestClient, TestServer

from tests.support.api import api_client
from tests.support.fakes import ManualClock
from tests.support.media import PassThroughMedia
from videogen_api import state
from videogen_api.app import create_app
from videogen_api.settings import ApiSettings
from videogen_common.media import LocalMediaStore, MediaInfo, MediaStore, signed_media_url

Client = TestClient[web.Request, web.Application]


def path_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.path}?{parts.query}"


async def test_signed_links_serve_media_and_forged_or_expired_ones_do_not(api_settings: ApiSettings) -> None:
    await LocalMediaStore(api_settings.media_dir).put("gen_1/video.mp4", b"\x00\x00\x00\x18ftypmp42")
    now = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
    clock = ManualClock(now)
    signing_key = api_settings.media_signing_key.get_secret_value()
    url = signed_media_url(
        api_settings.public_base_url, signing_key, "gen_1/video.mp4", now=now, retention=timedelta(days=30)
    )
    async with api_client(api_settings, clock=clock) as client:
        ok = await client.get(path_of(url))  # no Authorization header: the signature is the credential
        assert ok.status == 200 and ok.content_type == "video/mp4"
        assert await ok.read() == b"\x00\x00\x00\x18ftypmp42"

        forged = await client.get(path_of(url).replace("gen_1/video.mp4", "gen_2/video.mp4"))
        assert forged.status == 404 and forged.content_type == "application/problem+json"
        tampered = await client.get(path_of(url)[:-4] + "0000")
        assert tampered.status == 404

        clock.advance(timedelta(days=30, seconds=1))
        expired = await client.get(path_of(url))
        assert expired.status == 404


SIZE = 700_000  # more than two of the store's read chunks


@pytest.fixture
async def served(api_settings: ApiSettings) -> AsyncIterator[tuple[Client, str, bytes]]:
    """A video in the local store, its signed link, and the api serving it: (client, path, bytes)."""
    data = random.Random(7).randbytes(SIZE)
    await LocalMediaStore(api_settings.media_dir).put("gen_1/video.mp4", data)
    clock = ManualClock()
    url = signed_media_url(
        api_settings.public_base_url,
        api_settings.media_signing_key.get_secret_value(),
        "gen_1/video.mp4",
        now=clock.now(),
        retention=timedelta(days=30),
    )
    async with api_client(api_settings, clock=clock) as client:
        yield client, path_of(url), data


async def test_the_whole_file_comes_with_its_length_validators_and_range_support(
    served: tuple[Client, str, bytes],
) -> None:
    client, path, data = served
    response = await client.get(path)
    assert response.status == 200 and response.content_type == "video/mp4"
    assert response.headers["Content-Length"] == str(SIZE)
    assert response.headers["Accept-Ranges"] == "bytes"
    assert response.headers["ETag"].startswith('"') and response.headers["Last-Modified"].endswith(" GMT")
    assert response.headers["X-Request-Id"]
    assert await response.read() == data


@pytest.mark.parametrize(
    ("header", "start", "stop"),
    [
        ("bytes=0-99", 0, 100),
        ("bytes=200000-600000", 200_000, 600_001),  # across chunk boundaries
        ("bytes=699900-", 699_900, SIZE),
        ("bytes=-50", SIZE - 50, SIZE),
        ("bytes=-900000", 0, SIZE),  # a suffix longer than the file is the whole file
        ("bytes=699990-800000", 699_990, SIZE),  # the end is clipped to the file
        ("bytes=0-", 0, SIZE),
        (f"bytes={SIZE - 1}-{SIZE - 1}", SIZE - 1, SIZE),
    ],
)
async def test_a_range_request_gets_206_and_just_those_bytes(
    served: tuple[Client, str, bytes], header: str, start: int, stop: int
) -> None:
    client, path, data = served
    response = await client.get(path, headers={"Range": header})
    assert response.status == 206 and response.content_type == "video/mp4"
    assert response.headers["Content-Range"] == f"bytes {start}-{stop - 1}/{SIZE}"
    assert response.headers["Content-Length"] == str(stop - start)
    assert await response.read() == data[start:stop]


@pytest.mark.parametrize("header", [f"bytes={SIZE}-", f"bytes={SIZE + 10}-{SIZE + 20}"])
async def test_a_range_past_the_end_is_416_with_the_size(
    served: tuple[Client, str, bytes], header: str
) -> None:
    client, path, _ = served
    response = await client.get(path, headers={"Range": header})
    assert response.status == 416 and response.content_type == "application/problem+json"
    assert response.headers["Content-Range"] == f"bytes */{SIZE}"
    assert (await response.json())["type"] == "urn:videogen:problem:range-not-satisfiable"


@pytest.mark.parametrize("header", ["bytes=0-1,5-6", "items=0-5", "bytes=9-2", "bytes=x-y"])
async def test_several_ranges_or_nonsense_are_ignored_and_the_whole_file_sent(
    served: tuple[Client, str, bytes], header: str
) -> None:
    client, path, data = served
    response = await client.get(path, headers={"Range": header})
    assert response.status == 200
    assert "Content-Range" not in response.headers
    assert await response.read() == data


async def test_a_range_does_not_open_a_forged_link(served: tuple[Client, str, bytes]) -> None:
    client, path, _ = served
    forged = await client.get(path[:-4] + "0000", headers={"Range": "bytes=0-9"})
    assert forged.status == 404 and forged.content_type == "application/problem+json"
    extended = await client.get(path.replace("exp=", "exp=1"), headers={"Range": "bytes=0-9"})
    assert extended.status == 404


async def test_conditional_get_answers_304_for_the_copy_the_client_has(
    served: tuple[Client, str, bytes],
) -> None:
    client, path, _ = served
    first = await client.get(path)
    await first.read()
    etag, modified = first.headers["ETag"], first.headers["Last-Modified"]

    same = await client.get(path, headers={"If-None-Match": etag})
    assert same.status == 304 and await same.read() == b""
    assert same.headers["ETag"] == etag
    listed = await client.get(path, headers={"If-None-Match": f'"other", W/{etag}'})
    assert listed.status == 304  # weak comparison, in a list
    other = await client.get(path, headers={"If-None-Match": '"other"'})
    assert other.status == 200 and len(await other.read()) == SIZE
    since = await client.get(path, headers={"If-Modified-Since": modified})
    assert since.status == 304
    older = await client.get(path, headers={"If-Modified-Since": "Mon, 01 Jan 2024 00:00:00 GMT"})
    assert older.status == 200
    await older.read()


async def test_if_range_serves_the_range_only_for_the_same_version(served: tuple[Client, str, bytes]) -> None:
    client, path, data = served
    first = await client.head(path)
    etag, modified = first.headers["ETag"], first.headers["Last-Modified"]

    for validator in (etag, modified):
        same = await client.get(path, headers={"Range": "bytes=10-19", "If-Range": validator})
        assert same.status == 206 and await same.read() == data[10:20]
    for validator in ('"changed"', f"W/{etag}", "Mon, 01 Jan 2024 00:00:00 GMT"):
        changed = await client.get(path, headers={"Range": "bytes=10-19", "If-Range": validator})
        assert changed.status == 200 and await changed.read() == data


async def test_head_answers_the_headers_without_the_body(served: tuple[Client, str, bytes]) -> None:
    client, path, _ = served
    whole = await client.head(path)
    assert whole.status == 200 and whole.headers["Content-Length"] == str(SIZE)
    assert await whole.read() == b""
    part = await client.head(path, headers={"Range": "bytes=5-9"})
    assert part.status == 206 and part.headers["Content-Range"] == f"bytes 5-9/{SIZE}"
    assert part.headers["Content-Length"] == "5"


async def test_a_replaced_file_is_served_whole_in_its_new_version(
    served: tuple[Client, str, bytes], api_settings: ApiSettings
) -> None:
    client, path, data = served
    before = await client.head(path)
    await LocalMediaStore(api_settings.media_dir).put("gen_1/video.mp4", data[:1000])
    after = await client.get(path)
    assert after.status == 200 and after.headers["Content-Length"] == "1000"
    assert after.headers["ETag"] != before.headers["ETag"]
    assert await after.read() == data[:1000]


class StaleStats(PassThroughMedia):
    """The api's real store, except that its first ``stale`` stats describe a version of the file that is no
    longer there: as if the file were replaced between the stat and the read."""

    def __init__(self, inner: MediaStore, stale: int) -> None:
        super().__init__(inner)
        self.stale = stale

    async def stat(self, key: str) -> MediaInfo | None:
        info = await self.inner.stat(key)
        if info is not None and self.stale > 0:
            self.stale -= 1
            return replace(info, etag="an-older-version")
        return info


@pytest.mark.parametrize(("stale", "status"), [(1, 200), (2, 200), (3, 503)])
async def test_a_file_replaced_between_stat_and_read_is_read_again(
    api_settings: ApiSettings, stale: int, status: int
) -> None:
    await LocalMediaStore(api_settings.media_dir).put("gen_1/video.mp4", b"the current version")
    clock = ManualClock()
    url = signed_media_url(
        api_settings.public_base_url,
        api_settings.media_signing_key.get_secret_value(),
        "gen_1/video.mp4",
        now=clock.now(),
        retention=timedelta(days=30),
    )
    app = create_app(api_settings, clock=clock)

    async def stale_stats(app: web.Application) -> AsyncIterator[None]:
        app[state.MEDIA] = StaleStats(app[state.MEDIA], stale)
        yield

    app.cleanup_ctx.append(stale_stats)
    async with TestClient(TestServer(app, host="127.0.0.1")) as client:
        response = await client.get(path_of(url))
        assert response.status == status
        if status == 200:
            assert await response.read() == b"the current version"
            assert response.headers["ETag"] != '"an-older-version"'
        else:
            assert (await response.json())["type"] == "urn:videogen:problem:media-changing"
            assert response.headers["Retry-After"] == "1"


class FailingMidway(StaleStats):
    """The api's real store, whose reads fail after their first chunk (a storage connection lost)."""

    @asynccontextmanager
    async def open_range(
        self, key: str, info: MediaInfo, start: int, stop: int
    ) -> AsyncIterator[AsyncIterator[bytes]]:
        async with self.inner.open_range(key, info, start, stop) as chunks:

            async def first_then_failure() -> AsyncIterator[bytes]:
                yield await anext(aiter(chunks))
                raise OSError("connection to the storage lost")

            yield first_then_failure()


async def test_a_read_failing_midway_cuts_the_response_short_and_is_logged(
    api_settings: ApiSettings, caplog: pytest.LogCaptureFixture
) -> None:
    await LocalMediaStore(api_settings.media_dir).put("gen_1/video.mp4", bytes(SIZE))
    clock = ManualClock()
    url = signed_media_url(
        api_settings.public_base_url,
        api_settings.media_signing_key.get_secret_value(),
        "gen_1/video.mp4",
        now=clock.now(),
        retention=timedelta(days=30),
    )
    app = create_app(api_settings, clock=clock)

    async def failing(app: web.Application) -> AsyncIterator[None]:
        app[state.MEDIA] = FailingMidway(app[state.MEDIA], stale=0)
        yield

    app.cleanup_ctx.append(failing)
    async with TestClient(TestServer(app, host="127.0.0.1")) as client:
        response = await client.get(path_of(url))
        # The status line went out before the failure: the client sees a body shorter than announced.
        assert response.status == 200 and response.headers["Content-Length"] == str(SIZE)
        with pytest.raises(ClientPayloadError):
            await response.read()
    assert any("media read failed mid-response" in r.getMessage() for r in caplog.records)
