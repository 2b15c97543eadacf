"""GET /v1/media/{key}: signed links serve the stored file without an API key; forged or expired links
are 404."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

from aiohttp import web
from aiohttp.test_utils import TestClient

from tests.support.api import api_client
from tests.support.fakes import ManualClock
from videogen_api.settings import ApiSettings
from videogen_common.media import LocalMediaStore, signed_media_url

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
