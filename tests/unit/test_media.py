"""videogen_common.media: signed links, key checks, the on-disk store, and the choice of store."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from videogen_common.media import (
    CHUNK_BYTES,
    CONTENT_TYPES,
    LocalMediaStore,
    MediaChanged,
    check_key,
    open_media_store,
    signed_media_url,
    verify_media_link,
)
from videogen_common.settings import CommonSettings, SettingsError, load_settings

NOW = datetime(2026, 11, 21, 8, 47, 0, tzinfo=UTC)
RETENTION = timedelta(days=30)
SIGNING_KEY = "test-signing-key"
KEY = "gen_01/video.mp4"


def _link(key: str = KEY, base_url: str = "https://api.example.com") -> tuple[str, str, int, str]:
    url = signed_media_url(base_url, SIGNING_KEY, key, now=NOW, retention=RETENTION)
    parts = urlsplit(url)
    query = parse_qs(parts.query, strict_parsing=True)
    return url, parts.path, int(query["exp"][0]), query["sig"][0]


def test_signed_url_shape() -> None:
    url, path, expires, sig = _link()
    assert url.startswith("https://api.example.com/v1/media/gen_01/video.mp4?")
    assert path == "/v1/media/gen_01/video.mp4"
    assert expires == int((NOW + RETENTION).timestamp())
    assert len(sig) == 64


def test_signed_url_base_trailing_slash() -> None:
    url, path, _, _ = _link(base_url="http://127.0.0.1:8080/")
    assert url.startswith("http://127.0.0.1:8080/v1/media/")
    assert path == "/v1/media/gen_01/video.mp4"


def test_valid_link_verifies() -> None:
    _, _, expires, sig = _link()
    assert verify_media_link(SIGNING_KEY, KEY, expires, sig, now=NOW)
    assert verify_media_link(SIGNING_KEY, KEY, expires, sig, now=NOW + RETENTION - timedelta(seconds=1))


def test_tampered_signature() -> None:
    _, _, expires, sig = _link()
    flipped = ("0" if sig[0] != "0" else "1") + sig[1:]
    assert not verify_media_link(SIGNING_KEY, KEY, expires, flipped, now=NOW)
    assert not verify_media_link(SIGNING_KEY, KEY, expires, "", now=NOW)
    assert not verify_media_link(SIGNING_KEY, KEY, expires, sig.upper(), now=NOW)


@pytest.mark.parametrize(
    "sig", ["é", "5û\x12\x14", "\udcff", "\uff10" * 64], ids=["accent", "controls", "surrogate", "fullwidth"]
)
def test_a_non_ascii_signature_is_refused_not_an_error(sig: str) -> None:
    # Found by the API fuzz run: hmac.compare_digest raises TypeError on such a str, which was a 500.
    _, _, expires, _ = _link()
    assert not verify_media_link(SIGNING_KEY, KEY, expires, sig, now=NOW)


def test_other_signing_key() -> None:
    _, _, expires, sig = _link()
    assert not verify_media_link("another-key", KEY, expires, sig, now=NOW)


def test_signature_is_bound_to_the_media_key_and_expiry() -> None:
    _, _, expires, sig = _link()
    assert not verify_media_link(SIGNING_KEY, "gen_01/thumbnail.jpg", expires, sig, now=NOW)
    assert not verify_media_link(SIGNING_KEY, "gen_02/video.mp4", expires, sig, now=NOW)
    # Extending the expiry invalidates the signature.
    assert not verify_media_link(SIGNING_KEY, KEY, expires + 86_400, sig, now=NOW)


def test_expired_link() -> None:
    _, _, expires, sig = _link()
    later = NOW + RETENTION + timedelta(seconds=1)
    assert not verify_media_link(SIGNING_KEY, KEY, expires, sig, now=later)
    assert not verify_media_link(SIGNING_KEY, KEY, expires, sig, now=NOW + timedelta(days=365))


@pytest.mark.parametrize("key", ["gen_01/video.mp4", "gen_01/thumbnail.jpg", "gen-01_x/a.b.c", "A/b"])
def test_check_key_accepts(key: str) -> None:
    assert check_key(key) == key


@pytest.mark.parametrize(
    "key",
    [
        "../x",
        "a/../b",
        "a/b/c",
        "a/..",
        "../../etc/passwd",
        "a/..b",
        "/a/b",
        "a/",
        "/a",
        "a",
        "",
        "a\\b",
        "a/b c",
        "a/b%2f",
        "a//b",
        "..\\x",
        "a/b\x00",
    ],
    ids=repr,
)
def test_check_key_rejects(key: str) -> None:
    with pytest.raises(ValueError, match="bad media key"):
        check_key(key)


def test_check_key_rejects_trailing_newline() -> None:
    with pytest.raises(ValueError, match="bad media key"):
        check_key("gen_01/video.mp4\n")


def test_check_key_rejects_dot_file_name() -> None:
    with pytest.raises(ValueError, match="bad media key"):
        check_key("gen_01/.")


def test_signed_url_refuses_a_bad_key() -> None:
    with pytest.raises(ValueError, match="bad media key"):
        signed_media_url("http://x", SIGNING_KEY, "../x", now=NOW, retention=RETENTION)


async def test_local_store_round_trip(tmp_path: Path) -> None:
    store = LocalMediaStore(tmp_path)
    await store.put(KEY, b"\x00\x01video")
    assert await store.get(KEY) == b"\x00\x01video"
    assert (tmp_path / "gen_01" / "video.mp4").read_bytes() == b"\x00\x01video"
    # Atomic write: no temporary file is left behind.
    assert sorted(p.name for p in (tmp_path / "gen_01").iterdir()) == ["video.mp4"]


async def test_local_store_overwrites(tmp_path: Path) -> None:
    store = LocalMediaStore(tmp_path)
    await store.put(KEY, b"first")
    await store.put(KEY, b"second")
    assert await store.get(KEY) == b"second"


async def test_local_store_missing_is_none(tmp_path: Path) -> None:
    store = LocalMediaStore(tmp_path)
    assert await store.get("gen_01/video.mp4") is None
    await store.put("gen_01/video.mp4", b"x")
    assert await store.get("gen_01/thumbnail.jpg") is None


@pytest.mark.parametrize("key", ["../x", "a/../b", "a/b/c"])
async def test_local_store_refuses_bad_keys(tmp_path: Path, key: str) -> None:
    store = LocalMediaStore(tmp_path / "root")
    with pytest.raises(ValueError, match="bad media key"):
        await store.put(key, b"x")
    with pytest.raises(ValueError, match="bad media key"):
        await store.get(key)
    assert not (tmp_path / "x").exists()


def test_content_types() -> None:
    assert CONTENT_TYPES == {
        ".mp4": "video/mp4",
        ".jpg": "image/jpeg",
        ".png": "image/png",  # first frames
        ".webp": "image/webp",
    }


async def test_local_store_stat_describes_the_file(tmp_path: Path) -> None:
    store = LocalMediaStore(tmp_path)
    assert await store.stat(KEY) is None
    await store.put(KEY, b"0123456789")
    info = await store.stat(KEY)
    assert info is not None and info.size == 10
    st = (tmp_path / KEY).stat()
    assert info.modified.timestamp() == pytest.approx(st.st_mtime)
    await store.put(KEY, b"0123456789")  # same bytes, a new version: a new validator
    again = await store.stat(KEY)
    assert again is not None and again.etag != info.etag


@pytest.mark.parametrize(("start", "stop"), [(0, 10), (3, 7), (9, 10), (5, 5)])
async def test_local_store_reads_a_range(tmp_path: Path, start: int, stop: int) -> None:
    store = LocalMediaStore(tmp_path)
    await store.put(KEY, b"0123456789")
    info = await store.stat(KEY)
    assert info is not None
    async with store.open_range(KEY, info, start, stop) as chunks:
        assert b"".join([chunk async for chunk in chunks]) == b"0123456789"[start:stop]


async def test_local_store_reads_a_large_range_in_chunks(tmp_path: Path) -> None:
    data = bytes(range(256)) * (CHUNK_BYTES // 256 * 2 + 3)
    store = LocalMediaStore(tmp_path)
    await store.put(KEY, data)
    info = await store.stat(KEY)
    assert info is not None
    async with store.open_range(KEY, info, 1, info.size) as chunks:
        got = [chunk async for chunk in chunks]
    assert len(got) == 3 and max(map(len, got)) == CHUNK_BYTES
    assert b"".join(got) == data[1:]


async def test_local_store_refuses_to_read_a_version_it_did_not_describe(tmp_path: Path) -> None:
    store = LocalMediaStore(tmp_path)
    await store.put(KEY, b"first")
    stale = await store.stat(KEY)
    assert stale is not None
    await store.put(KEY, b"second version")
    with pytest.raises(MediaChanged):
        async with store.open_range(KEY, stale, 0, stale.size):
            pass
    (tmp_path / KEY).unlink()
    with pytest.raises(MediaChanged):
        async with store.open_range(KEY, stale, 0, stale.size):
            pass


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("VIDEOGEN_"):
            monkeypatch.delenv(name)


@pytest.mark.usefixtures("clean_env")
async def test_the_local_folder_is_the_default_store(tmp_path: Path) -> None:
    settings = load_settings(CommonSettings, data_dir=tmp_path)
    assert settings.media_backend == "local"
    async with open_media_store(settings) as store:
        assert isinstance(store, LocalMediaStore)
        assert store.root == tmp_path / "media"


@pytest.mark.usefixtures("clean_env")
def test_the_s3_backend_needs_a_bucket() -> None:
    with pytest.raises(SettingsError, match=r"VIDEOGEN_S3_BUCKET: .*required when VIDEOGEN_MEDIA_BACKEND"):
        load_settings(CommonSettings, media_backend="s3")
    assert load_settings(CommonSettings, media_backend="s3", s3_bucket="media").s3_bucket == "media"


@pytest.mark.usefixtures("clean_env")
def test_s3_keys_come_in_pairs() -> None:
    with pytest.raises(SettingsError, match="VIDEOGEN_S3_SECRET_ACCESS_KEY"):
        load_settings(CommonSettings, s3_access_key_id="id")
    with pytest.raises(SettingsError, match="VIDEOGEN_S3_SECRET_ACCESS_KEY"):
        load_settings(CommonSettings, s3_secret_access_key="secret")
    settings = load_settings(CommonSettings, s3_access_key_id="id", s3_secret_access_key="s3cr3t-value")
    assert "s3cr3t-value" not in repr(settings)


@pytest.mark.usefixtures("clean_env")
def test_an_s3_key_prefix_is_plain() -> None:
    with pytest.raises(SettingsError, match="VIDEOGEN_S3_KEY_PREFIX"):
        load_settings(CommonSettings, s3_key_prefix="../x y")
    assert load_settings(CommonSettings, s3_key_prefix="videogen/prod/").s3_key_prefix == "videogen/prod/"
