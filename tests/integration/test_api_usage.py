"""GET /v1/usage against the real store: generations and seconds of video by UTC day, provider and status, in
total and per API key, each generation counted once — also after its status event was taken in twice by the
notifier's intake; the range and key filters; one 422 naming every bad parameter; tenancy."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from datetime import timedelta
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from tests.support.api import api_client, bearer
from tests.support.env import settings_for
from tests.support.fakes import ManualClock
from tests.support.notifier import NotifierHarness
from videogen.keys import create_key
from videogen_api.schemas.usage import Usage
from videogen_api.settings import ApiSettings
from videogen_common.domain import Status
from videogen_common.generations import terminal_event
from videogen_common.records.generation import GenerationRecord
from videogen_common.repositories.generations import GenerationRepository
from videogen_common.signing import hash_api_key
from videogen_common.store import Store
from videogen_notifier.intake import take_in
from videogen_notifier.settings import NotifierSettings

Client = TestClient[web.Request, web.Application]
Doc = dict[str, Any]


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()  # 2026-11-21T08:47:00.123Z


@pytest.fixture
async def client(base_env: dict[str, str], store: Store, clock: ManualClock) -> AsyncIterator[Client]:
    settings = settings_for(ApiSettings, {**base_env, "VIDEOGEN_PROVIDERS": "mock,runway"}, api_port=0)
    async with api_client(settings, clock) as client:
        yield client


async def key_id(store: Store, key: str) -> str:
    doc = await store.api_keys.find_one({"key_hash": hash_api_key(key)})
    assert doc is not None
    return str(doc["_id"])


async def generate(client: Client, key: str, provider: str, duration: int) -> str:
    body = {"prompt": "a lantern on a pier", "provider": provider, "duration": duration}
    response = await client.post("/v1/generate", json=body, headers=bearer(key))
    assert response.status == 202, await response.text()
    return str((await response.json())["id"])


async def finish(store: Store, generation_id: str, status: Status, clock: ManualClock) -> Doc:
    """Move a generation as the orchestrator would, from processing to ``status`` (compare-and-set)."""
    doc = await store.generations.find_one({"_id": generation_id})
    assert doc is not None
    fields = {"error": {"code": "mock_failure", "message": "asked"}} if status is Status.FAILED else None
    final = await GenerationRepository(store).transition(doc, status, now=clock.now(), fields=fields)
    assert final is not None
    return final


async def usage(client: Client, key: str, **params: str) -> Doc:
    response = await client.get("/v1/usage", params=params, headers=bearer(key))
    text = await response.text()
    assert response.status == 200, text
    Usage.model_validate_json(text, strict=True)
    body: Doc = await response.json()
    return body


async def test_usage_counts_each_generation_once_by_day_provider_status_and_key(
    client: Client, store: Store, clock: ManualClock, base_env: dict[str, str]
) -> None:
    key_a, key_b = await create_key(store, "acme"), await create_key(store, "acme")
    globex = await create_key(store, "globex")
    id_a, id_b = await key_id(store, key_a), await key_id(store, key_b)

    completed = await generate(client, key_a, "mock", 5)
    failed = await generate(client, key_a, "mock", 5)
    runway = await generate(client, key_b, "runway", 8)
    await generate(client, globex, "mock", 10)  # another account's: never counted for acme
    final = await finish(store, completed, Status.COMPLETED, clock)
    await finish(store, failed, Status.FAILED, clock)
    await finish(store, runway, Status.COMPLETED, clock)
    clock.advance(timedelta(days=1))
    await generate(client, key_a, "mock", 3)  # the next day, still processing

    # The completed generation's event taken in twice (a redelivery): still one generation.
    async with AsyncExitStack() as stack, aiohttp.ClientSession() as session:
        harness = NotifierHarness(base_env, store, clock, stack)
        dispatcher = harness.dispatcher_with(settings_for(NotifierSettings, base_env), session)
        for _ in range(2):
            await take_in(dispatcher, [terminal_event(GenerationRecord.from_doc(final))])

    clock.advance(timedelta(seconds=1))  # the range ends now, exclusive
    body = await usage(client, key_a)
    assert body["total"] == {"generations": 4, "seconds": 21, "video_seconds": 13, "cost": 0.0}
    assert body["data"] == [
        {"date": "2026-11-21", "provider": "mock", "status": "completed", "generations": 1, "seconds": 5,
         "video_seconds": 5, "cost": 0.0},
        {"date": "2026-11-21", "provider": "mock", "status": "failed", "generations": 1, "seconds": 5,
         "video_seconds": 0, "cost": 0.0},
        {"date": "2026-11-21", "provider": "runway", "status": "completed", "generations": 1, "seconds": 8,
         "video_seconds": 8, "cost": 0.0},
        {"date": "2026-11-22", "provider": "mock", "status": "processing", "generations": 1, "seconds": 3,
         "video_seconds": 0, "cost": 0.0},
    ]  # fmt: skip
    per_key = {k["api_key_id"]: k for k in body["api_keys"]}
    assert per_key == {
        id_a: {"api_key_id": id_a, "generations": 3, "seconds": 13, "video_seconds": 5, "cost": 0.0},
        id_b: {"api_key_id": id_b, "generations": 1, "seconds": 8, "video_seconds": 8, "cost": 0.0},
    }
    assert [k["api_key_id"] for k in body["api_keys"]] == sorted(per_key)
    # The default range: the 30 days up to now.
    assert (body["start"], body["end"], body["api_key_id"]) == (
        "2026-10-23T08:47:01.123Z",
        "2026-11-22T08:47:01.123Z",
        None,
    )

    # One key's usage, whichever of the account's keys asks.
    only_b = await usage(client, key_a, api_key_id=id_b)
    assert only_b["total"] == {"generations": 1, "seconds": 8, "video_seconds": 8, "cost": 0.0}
    assert [row["provider"] for row in only_b["data"]] == ["runway"]
    assert only_b["api_keys"] == [
        {"api_key_id": id_b, "generations": 1, "seconds": 8, "video_seconds": 8, "cost": 0.0}
    ]

    # A range: dates are their midnight UTC; start inclusive, end exclusive.
    day_two = await usage(client, key_b, start="2026-11-22", end="2026-11-23")
    assert day_two["total"] == {"generations": 1, "seconds": 3, "video_seconds": 0, "cost": 0.0}
    day_one = await usage(client, key_b, start="2026-11-21T00:00:00Z", end="2026-11-22T00:00:00+00:00")
    assert day_one["total"] == {"generations": 3, "seconds": 18, "video_seconds": 13, "cost": 0.0}

    # Another account sees only its own; another account's key id selects nothing.
    assert (await usage(client, globex))["total"] == {
        "generations": 1,
        "seconds": 10,
        "video_seconds": 0,
        "cost": 0.0,
    }
    assert (await usage(client, globex, api_key_id=id_a))["total"]["generations"] == 0


@pytest.mark.parametrize(
    ("params", "fields"),
    [
        ({"start": "yesterday"}, ["start"]),
        ({"start": "2026-11-21T08:00:00"}, ["start"]),  # no time zone
        ({"start": "2026-11-22", "end": "2026-11-21"}, ["start"]),
        ({"start": "2026-11-21", "end": "2026-11-21"}, ["start"]),
        ({"start": "2024-01-01", "end": "2026-01-01"}, ["start"]),  # over 366 days
        ({"start": "2026-13-01", "end": "later"}, ["start", "end"]),
    ],
)
async def test_a_bad_range_is_one_422_naming_each_parameter(
    client: Client, store: Store, params: dict[str, str], fields: list[str]
) -> None:
    key = await create_key(store, "acme")
    response = await client.get("/v1/usage", params=params, headers=bearer(key))
    assert response.status == 422
    assert response.content_type == "application/problem+json"
    assert [error["field"] for error in (await response.json())["errors"]] == fields


async def test_a_repeated_parameter_is_refused(client: Client, store: Store) -> None:
    key = await create_key(store, "acme")
    response = await client.get("/v1/usage?api_key_id=a&api_key_id=b", headers=bearer(key))
    assert response.status == 422
    assert [e["field"] for e in (await response.json())["errors"]] == ["api_key_id"]


async def test_usage_needs_a_key(client: Client) -> None:
    assert (await client.get("/v1/usage")).status == 401


async def test_a_range_at_the_edge_of_time_is_answered_not_a_crash(client: Client, store: Store) -> None:
    key = await create_key(store, "acme")
    response = await client.get("/v1/usage", params={"end": "0001-01-05"}, headers=bearer(key))
    assert response.status == 200, await response.text()
    body = await response.json()
    assert (body["start"], body["total"]["generations"]) == ("0001-01-01T00:00:00.000Z", 0)
