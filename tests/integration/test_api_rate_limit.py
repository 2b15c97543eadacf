"""Per-account rate limits through the real api and store: the headers on every authenticated answer, 429
with Retry-After beyond the quota, budgets per account and per policy, and one global limit for two api
instances sharing the store (within the documented overshoot). The clock is frozen inside one window, so no
window ends during a test unless the test moves the clock."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from aiohttp import ClientResponse, web
from aiohttp.test_utils import TestClient

from tests.support.api import api_client, bearer
from tests.support.env import settings_for
from tests.support.fakes import ManualClock
from tests.support.ratelimit import MemoryCounts
from videogen_api import state
from videogen_api.ratelimit import MongoCounts, SharedCounts, WindowKey
from videogen_api.settings import ApiSettings
from videogen_common.store import Store
from videogen_common.topics import Topics

Client = TestClient[web.Request, web.Application]
VALID = {"prompt": "a red fox running through snow", "provider": "mock", "duration": 5}
# 12.3 s into a minute: a 60-second window has 47.7 s left, which the headers round up to 48.
NOW = datetime(2026, 11, 21, 8, 47, 12, 300000, tzinfo=UTC)
LEFT = 48


@pytest.fixture
def limited(base_env: dict[str, str]) -> ApiSettings:
    return settings_for(
        ApiSettings,
        base_env,
        api_port=0,
        rate_limit_generate_quota=5,
        rate_limit_generate_window_seconds=60,
        rate_limit_default_quota=8,
        rate_limit_default_window_seconds=60,
        rate_limit_local_share=0.1,
    )


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(NOW)


@pytest.fixture
async def client(
    limited: ApiSettings, clock: ManualClock, store: Store, topics: Topics
) -> AsyncIterator[Client]:
    async with api_client(limited, clock) as client:
        yield client


async def generate(client: Client, key: str) -> ClientResponse:
    response = await client.post("/v1/generate", json=VALID, headers=bearer(key))
    await response.read()
    return response


def remaining(response: ClientResponse, policy: str) -> int:
    match = re.fullmatch(rf'"{policy}";r=(\d+);t={LEFT}', response.headers["RateLimit"])
    assert match, response.headers["RateLimit"]
    return int(match.group(1))


async def test_every_authenticated_answer_carries_the_policy_and_the_remaining_quota_counting_down(
    client: Client, key: str
) -> None:
    answers = [
        await client.get("/v1/generations", headers=bearer(key)),
        await client.get("/v1/generations/gen_unknown", headers=bearer(key)),  # 404
        await client.get("/v1/generations?limit=0", headers=bearer(key)),  # 422
        await client.post("/v1/generations/gen_unknown/cancel", headers=bearer(key)),  # 404
    ]

    assert [a.status for a in answers] == [200, 404, 422, 404]
    assert {a.headers["RateLimit-Policy"] for a in answers} == {'"default";q=8;w=60'}
    assert [remaining(a, "default") for a in answers] == [7, 6, 5, 4]
    created = await generate(client, key)
    assert created.status == 202
    assert created.headers["RateLimit-Policy"] == '"generate";q=5;w=60'
    assert remaining(created, "generate") == 4


async def test_unauthenticated_and_public_answers_carry_no_rate_limit_headers(
    client: Client, key: str
) -> None:
    for response in (
        await client.get("/v1/generations"),
        await client.get("/v1/generations", headers=bearer("vg_not_a_key")),
        await client.get("/healthz"),
        await client.get("/openapi.json"),
    ):
        assert "RateLimit" not in response.headers and "RateLimit-Policy" not in response.headers


async def test_beyond_the_quota_429_with_retry_after_writes_nothing_and_spares_other_budgets(
    client: Client, key: str, other_key: str, store: Store, clock: ManualClock
) -> None:
    created = [await generate(client, key) for _ in range(5)]
    refused = await client.post("/v1/generate", json=VALID, headers=bearer(key))

    assert [c.status for c in created] == [202] * 5
    assert refused.status == 429
    assert refused.content_type == "application/problem+json"
    problem = await refused.json()
    assert problem["type"] == "urn:videogen:problem:rate-limited"
    assert (problem["status"], problem["instance"]) == (429, "/v1/generate")
    assert refused.headers["Retry-After"] == str(LEFT)
    assert refused.headers["RateLimit"] == f'"generate";r=0;t={LEFT}'
    assert refused.headers["RateLimit-Policy"] == '"generate";q=5;w=60'
    assert "X-Request-Id" in refused.headers
    assert await store.generations.count_documents({}) == 5
    # Another account, and this account's other budget, are untouched.
    assert (await generate(client, other_key)).status == 202
    listed = await client.get("/v1/generations", headers=bearer(key))
    assert listed.status == 200 and remaining(listed, "default") == 7

    # The next window opens the budget again.
    clock.advance(timedelta(seconds=LEFT))
    assert (await generate(client, key)).status == 202


async def test_two_api_instances_sharing_one_store_enforce_one_global_limit(
    base_env: dict[str, str], clock: ManualClock, key: str, store: Store, topics: Topics
) -> None:
    quota = 20
    settings = settings_for(
        ApiSettings,
        base_env,
        api_port=0,
        rate_limit_generate_quota=quota,
        rate_limit_generate_window_seconds=60,
        rate_limit_local_share=0.1,
    )
    share = 2  # a tenth of 20
    async with api_client(settings, clock) as first, api_client(settings, clock) as second:
        # Thirty at once to each: a limiter per process would admit forty.
        answers = await asyncio.gather(*(generate(c, key) for _ in range(30) for c in (first, second)))
        admitted = sum(a.status == 202 for a in answers)

        assert {a.status for a in answers} == {202, 429}
        assert quota <= admitted <= quota + (2 - 1) * share
        assert await store.generations.count_documents({}) == admitted
        # Once both have synced, both know the quota is spent.
        for c in (first, second):
            await c.app[state.RATE_LIMITER].sync()
        for c in (first, second):
            late = await generate(c, key)
            assert late.status == 429 and late.headers["RateLimit"] == f'"generate";r=0;t={LEFT}'


# --- The shared counts' contract, on MongoDB and on the in-memory double the unit tests use --------------


@pytest.fixture(params=["mongo", "memory"])
def counts(request: pytest.FixtureRequest, store: Store) -> SharedCounts:
    return MongoCounts(store) if request.param == "mongo" else MemoryCounts()


async def test_shared_counts_add_atomically_even_when_replicas_create_a_key_at_once(
    counts: SharedCounts,
) -> None:
    first, second, absent = (WindowKey("default", 60, 29_000_000, a) for a in ("acme", "a:b\nc", "globex"))
    await asyncio.gather(*(counts.add({first: 1, second: 2}) for _ in range(10)))
    await counts.add({first: 5})

    assert await counts.totals([first, second, absent]) == {first: 15, second: 20}
    assert await counts.totals([]) == {}


async def test_mongo_counts_expire_after_their_window(store: Store) -> None:
    key = WindowKey("generate", 60, 29_000_000, "acme")
    await MongoCounts(store).add({key: 1})
    doc = await store.rate_limits.find_one({"_id": key.id})
    assert doc is not None and doc["count"] == 1 and doc["account_id"] == "acme"
    assert doc["expires_at"] == datetime.fromtimestamp((29_000_000 + 1) * 60, UTC) + timedelta(minutes=5)
    indexes = await store.rate_limits.index_information()
    assert indexes["expire"]["expireAfterSeconds"] == 0
