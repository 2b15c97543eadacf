"""POST /v1/uploads and a first frame on POST /v1/generate, at the api on the real store and media folder:
an image is taken by its content (raw or as a form's file part), anything else is refused with nothing
stored; an upload is its account's alone and expires; an image URL naming an address we refuse is a 422
before anything is fetched or written."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import aiohttp
import orjson
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from tests.support.api import api_client, bearer
from tests.support.env import settings_for
from tests.support.fakes import ManualClock
from tests.support.images import solid_image
from videogen_api.schemas.common import ValidationProblem
from videogen_api.schemas.generations import Generation
from videogen_api.schemas.uploads import Upload
from videogen_api.settings import ApiSettings
from videogen_common.media import LocalMediaStore
from videogen_common.store import Store
from videogen_common.topics import Topics

Client = TestClient[web.Request, web.Application]
BODY = {"prompt": "a kite over a beach", "provider": "mock", "duration": 3}
LIMIT = 16 * 1024


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def api_settings(base_env: dict[str, str]) -> ApiSettings:
    return settings_for(ApiSettings, base_env, api_port=0, image_max_bytes=LIMIT)


@pytest.fixture
async def api(
    api_settings: ApiSettings, store: Store, topics: Topics, clock: ManualClock
) -> AsyncIterator[Client]:
    async with api_client(api_settings, clock=clock) as client:
        yield client


async def _upload(
    api: Client, key: str, data: bytes, content_type: str = "image/png"
) -> aiohttp.ClientResponse:
    return await api.post("/v1/uploads", data=data, headers={**bearer(key), "Content-Type": content_type})


async def _problem(response: aiohttp.ClientResponse, status: int) -> dict[str, Any]:
    assert response.status == status, await response.text()
    assert response.content_type == "application/problem+json"
    problem: dict[str, Any] = await response.json()
    return problem


async def test_a_raw_png_is_stored_and_described(
    api: Client, key: str, store: Store, api_settings: ApiSettings
) -> None:
    image = solid_image((200, 10, 10), size=(40, 30))
    response = await _upload(api, key, image)

    assert response.status == 201
    upload = await response.json()
    Upload.model_validate_json(orjson.dumps(upload))
    assert (upload["content_type"], upload["bytes"], upload["width"], upload["height"]) == (
        "image/png",
        len(image),
        40,
        30,
    )
    stored = await store.uploads.find_one({"_id": upload["id"]})
    assert stored is not None and stored["account_id"] == "acme"
    assert await LocalMediaStore(api_settings.media_dir).get(stored["key"]) == image


async def test_a_form_file_part_is_taken_and_its_type_comes_from_its_content(api: Client, key: str) -> None:
    form = aiohttp.FormData()
    form.add_field("note", "ignored")
    form.add_field("file", solid_image((0, 0, 0), kind="JPEG"), filename="x.png", content_type="image/png")
    response = await api.post("/v1/uploads", data=form, headers=bearer(key))

    assert response.status == 201
    assert (await response.json())["content_type"] == "image/jpeg"


@pytest.mark.parametrize(
    ("data", "content_type", "status", "field"),
    [
        (b"plain text", "text/plain", 415, None),
        (b"<svg/>", "image/svg+xml", 415, None),
        (b"\x89PNG\r\n\x1a\n not really", "image/png", 422, "file"),
        (solid_image((1, 2, 3), kind="GIF"), "image/png", 422, "file"),
        (b"", "image/png", 422, "file"),
        (os.urandom(LIMIT + 1), "image/png", 413, None),
    ],
)
async def test_what_is_not_a_usable_image_is_refused_and_nothing_is_stored(
    api: Client, key: str, store: Store, data: bytes, content_type: str, status: int, field: str | None
) -> None:
    problem = await _problem(await _upload(api, key, data, content_type), status)

    if field is not None:
        ValidationProblem.model_validate_json(orjson.dumps(problem))
        assert [e["field"] for e in problem["errors"]] == [field]
    assert await store.uploads.count_documents({}) == 0


async def test_a_form_without_a_file_part_is_a_422(api: Client, key: str) -> None:
    form = aiohttp.FormData()
    form.add_field("image", solid_image((0, 0, 0)), filename="x.png", content_type="image/png")
    problem = await _problem(await api.post("/v1/uploads", data=form, headers=bearer(key)), 422)
    assert [e["field"] for e in problem["errors"]] == ["file"]


async def test_an_upload_becomes_the_first_frame_of_a_generation(api: Client, key: str, store: Store) -> None:
    upload = await (await _upload(api, key, solid_image((9, 9, 9)))).json()
    body = {**BODY, "image": {"upload_id": upload["id"]}}
    response = await api.post("/v1/generate", json=body, headers=bearer(key))

    assert response.status == 202
    created = await response.json()
    Generation.model_validate_json(orjson.dumps(created))
    assert created["image"] == {"url": None, "upload_id": upload["id"]}
    stored = await store.generations.find_one({"_id": created["id"]})
    assert stored is not None
    assert (stored["image_key"], stored["image_type"]) == (f"{upload['id']}/image.png", "image/png")


async def test_another_accounts_upload_and_an_unknown_one_are_404s_that_write_nothing(
    api: Client, key: str, other_key: str, store: Store
) -> None:
    theirs = await (await _upload(api, other_key, solid_image((9, 9, 9)))).json()
    for upload_id in (theirs["id"], "upl_00000000000000000000000000"):
        body = {**BODY, "image": {"upload_id": upload_id}}
        problem = await _problem(await api.post("/v1/generate", json=body, headers=bearer(key)), 404)
        assert upload_id in problem["detail"]
    assert await store.generations.count_documents({}) == 0


async def test_an_expired_upload_is_a_422(api: Client, key: str, store: Store, clock: ManualClock) -> None:
    upload = await (await _upload(api, key, solid_image((9, 9, 9)))).json()
    clock.advance(timedelta(days=1, seconds=1))

    body = {**BODY, "image": {"upload_id": upload["id"]}}
    problem = await _problem(await api.post("/v1/generate", json=body, headers=bearer(key)), 422)
    assert [(e["field"], e["code"]) for e in problem["errors"]] == [("image.upload_id", "expired")]
    assert await store.generations.count_documents({}) == 0


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080/frame.png",
        "http://169.254.169.254/latest/meta-data",
        "http://10.1.2.3/x.png",
        "http://localhost/x.png",
        "http://[::1]/x.png",
        "http://2130706433/x.png",
    ],
)
async def test_an_image_url_on_an_address_we_refuse_is_a_422_before_anything_is_fetched(
    api: Client, key: str, store: Store, url: str
) -> None:
    body = {**BODY, "image": {"url": url}}
    problem = await _problem(await api.post("/v1/generate", json=body, headers=bearer(key)), 422)

    assert [(e["field"], e["code"]) for e in problem["errors"]] == [("image.url", "destination_not_allowed")]
    assert await store.generations.count_documents({}) == 0


@pytest.mark.parametrize(
    "image",
    [
        {},
        {"url": "https://example.test/a.png", "upload_id": "upl_00000000000000000000000000"},
        {"url": None},
        {"url": "ftp://example.test/a.png"},
        {"url": "https://user:pw@example.test/a.png"},
        {"upload_id": "x"},
    ],
)
async def test_an_image_must_be_exactly_one_good_url_or_upload_id(
    api: Client, key: str, store: Store, image: dict[str, Any]
) -> None:
    response = await api.post("/v1/generate", json={**BODY, "image": image}, headers=bearer(key))
    problem = await _problem(response, 422)

    assert all(e["field"].startswith("image") for e in problem["errors"]), problem
    assert await store.generations.count_documents({}) == 0


async def test_a_public_image_url_is_accepted_and_shown_as_given(api: Client, key: str) -> None:
    body = {**BODY, "image": {"url": "https://images.example.test/frame.png"}}
    response = await api.post("/v1/generate", json=body, headers=bearer(key))

    assert response.status == 202
    assert (await response.json())["image"] == {
        "url": "https://images.example.test/frame.png",
        "upload_id": None,
    }


@pytest.mark.parametrize(
    "content_type",
    ["multipart/form-data", "multipart/form-data; boundary=b0undary"],
)
async def test_a_form_that_does_not_parse_is_a_400(
    api: Client, key: str, store: Store, content_type: str
) -> None:
    body = b"--b0undary\r\n-broken header--b0undary--\r\n"
    response = await api.post("/v1/uploads", data=body, headers={**bearer(key), "Content-Type": content_type})

    problem = await _problem(response, 400)
    assert problem["type"] == "urn:videogen:problem:malformed-form"
    assert await store.uploads.count_documents({}) == 0


async def test_a_repeat_of_an_accepted_request_replays_after_its_upload_expired(
    api: Client, key: str, store: Store, clock: ManualClock
) -> None:
    upload = await (await _upload(api, key, solid_image((9, 9, 9)))).json()
    body = {**BODY, "image": {"upload_id": upload["id"]}}
    headers = {**bearer(key), "Idempotency-Key": "order-7"}
    first = await api.post("/v1/generate", json=body, headers=headers)
    assert first.status == 202
    clock.advance(timedelta(days=2))

    again = await api.post("/v1/generate", json=body, headers=headers)

    assert again.status == 202
    assert again.headers["Idempotent-Replayed"] == "true"
    assert (await again.json())["id"] == (await first.json())["id"]
    assert await store.generations.count_documents({}) == 1
    # Without the key, the expired upload is refused.
    refused = await api.post("/v1/generate", json=body, headers=bearer(key))
    assert refused.status == 422
