"""Keys and budgets on two api processes sharing one store, as a scaled deployment runs them: fifty parallel
creations split between the two against a budget worth ten admit exactly ten, the rest refused with
budget-exceeded and nothing written; a key revoked through one stops working on the other within the key
cache's bound, and an expired one at its expiry."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import aiohttp
import pytest

from tests.support.services import ServiceProcess, wait_http_ok
from videogen.engines import free_port
from videogen.keys import create_key
from videogen_common.clock import isoformat
from videogen_common.store import Store

pytestmark = pytest.mark.e2e

# The bound on revocation (VIDEOGEN_API_KEY_CACHE_SECONDS), shortened for the test.
CACHE_SECONDS = 2.0
# What a request's round trip and a loaded machine may add to it.
SLACK_SECONDS = 1.5


@pytest.fixture
async def apis(base_env: dict[str, str], store: Store, tmp_path: Path) -> AsyncIterator[tuple[str, str]]:
    env = {
        **base_env,
        "VIDEOGEN_API_KEY_CACHE_SECONDS": str(CACHE_SECONDS),
        # Fifty creations at once would also meet the per-second rate limit: this is about budgets.
        "VIDEOGEN_RATE_LIMIT_ENABLED": "false",
    }
    processes = []
    try:
        for name in ("first", "second"):
            port = free_port()
            process = ServiceProcess("api", {**env, "VIDEOGEN_API_PORT": str(port)}, tmp_path / name)
            processes.append(process)
            await process.start()
            await wait_http_ok(f"http://127.0.0.1:{port}/readyz", process)
        yield tuple(f"http://127.0.0.1:{p.env['VIDEOGEN_API_PORT']}" for p in processes)  # type: ignore[misc]
    finally:
        for process in processes:
            assert await process.stop() == 0


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def test_fifty_parallel_creations_on_two_apis_admit_exactly_the_budget(
    apis: tuple[str, str], store: Store
) -> None:
    key = await create_key(store, "acme")
    first, second = apis
    body = {"prompt": "a red fox running through snow", "provider": "mock", "duration": 5}
    async with aiohttp.ClientSession() as session:
        async with session.put(
            f"{first}/v1/budgets", json={"daily_video_seconds": 50}, headers=auth(key)
        ) as put:
            assert put.status == 200  # ten generations' worth

        async def create(base: str) -> tuple[int, str]:
            async with session.post(f"{base}/v1/generate", json=body, headers=auth(key)) as response:
                return response.status, (await response.json())["type" if response.status >= 400 else "id"]

        answers = await asyncio.gather(*(create(base) for _ in range(25) for base in apis))
        async with session.get(f"{second}/v1/budgets", headers=auth(key)) as response:
            left = (await response.json())["remaining"]
    admitted = [value for status, value in answers if status == 202]
    refused = [value for status, value in answers if status != 202]
    assert len(admitted) == 10
    assert refused == ["urn:videogen:problem:budget-exceeded"] * 40
    stored = [doc["_id"] async for doc in store.generations.find({}, {"_id": 1})]
    assert sorted(stored) == sorted(admitted)
    assert [(r["used"], r["remaining"]) for r in left] == [(50, 0)]


async def test_a_key_revoked_on_one_api_stops_on_the_other_within_the_bound_and_one_expired_at_expiry(
    apis: tuple[str, str], store: Store
) -> None:
    admin = await create_key(store, "acme")
    first, second = apis
    loop = asyncio.get_running_loop()
    async with aiohttp.ClientSession() as session:

        async def make(**extra: str) -> dict[str, str]:
            body = {"name": "short-lived", "scopes": ["generations:read"], **extra}
            async with session.post(f"{first}/v1/api-keys", json=body, headers=auth(admin)) as response:
                assert response.status == 201
                made: dict[str, str] = await response.json()
                return made

        async def status(base: str, key: str) -> int:
            async with session.get(f"{base}/v1/generations", headers=auth(key)) as response:
                return response.status

        async def refused_after(key: str) -> float:
            """Seconds until the second api refuses ``key``, asking every 50 ms."""
            started = loop.time()
            while await status(second, key) == 200:
                assert loop.time() - started < 30, "never refused"
                await asyncio.sleep(0.05)
            return loop.time() - started

        revocable = await make()
        assert await status(second, revocable["secret"]) == 200  # the second api has it cached now
        async with session.delete(f"{first}/v1/api-keys/{revocable['id']}", headers=auth(admin)) as response:
            assert response.status == 200
        assert await status(first, revocable["secret"]) == 401  # at once where it was revoked
        assert await refused_after(revocable["secret"]) <= CACHE_SECONDS + SLACK_SECONDS

        expires = datetime.now(UTC) + timedelta(seconds=3)
        expiring = await make(expires_at=isoformat(expires))
        assert await status(second, expiring["secret"]) == 200
        await refused_after(expiring["secret"])
        late = (datetime.now(UTC) - expires).total_seconds()
        assert 0 <= late <= SLACK_SECONDS  # at its expiry, not a cache's lifetime later
        assert await status(first, expiring["secret"]) == 401
