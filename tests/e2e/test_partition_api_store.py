"""The api cut off from the store (issue 36, scenario 4), as a process whose only way to the store is a link
the test cuts — silently (black-hole: bytes held, delivered on the heal) or with resets (refuse): a creation
answers 503 store-unavailable (problem+json) within its bound, readiness goes false, and after the heal both
recover, with nothing half-written: the creation retried under its Idempotency-Key makes one generation,
whatever became of the insert the cut held (it reaches the store on the heal)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.support.partition import Link, Mode, through
from tests.support.stack import Stack, running_stack
from tests.support.waiting import eventually
from videogen_api.idempotency import scoped
from videogen_common.settings import CommonSettings
from videogen_common.store import Store

pytestmark = pytest.mark.e2e

STORE_TIMEOUT_S = 5.0  # VIDEOGEN_API_STORE_TIMEOUT_SECONDS, its default
CREATE_BOUND_S = 2 * STORE_TIMEOUT_S + 2  # docs/guarantees.md: a creation's 503 comes within this
READY_BOUND_S = 2.0 + 2  # a readiness check's own bound (probes.CHECK_TIMEOUT_SECONDS), and the machine's
RECOVERY_BOUND_S = 15.0  # after the heal: readiness true again, creations accepted
BODY = {"prompt": "a harbour at dusk", "provider": "mock", "duration": 3}


@pytest.fixture
async def api(
    base_env: dict[str, str], common_settings: CommonSettings, store: Store, tmp_path: Path, store_link: Link
) -> AsyncIterator[Stack]:
    """The api alone, reaching the store through ``store_link`` only."""
    env = {
        "VIDEOGEN_MONGO_URL": through(store_link, base_env["VIDEOGEN_MONGO_URL"]),
        "VIDEOGEN_API_STORE_TIMEOUT_SECONDS": str(STORE_TIMEOUT_S),
    }
    async with running_stack(
        base_env, common_settings, store, tmp_path / "logs", services=["api"], env=env
    ) as stack:
        yield stack


async def _create(
    session: aiohttp.ClientSession, stack: Stack, idempotency_key: str
) -> tuple[int, str, dict[str, str], Any]:
    headers = {"Authorization": f"Bearer {stack.key}", "Idempotency-Key": idempotency_key}
    async with session.post(f"{stack.base}/v1/generate", json=BODY, headers=headers) as response:
        return response.status, response.content_type, dict(response.headers), await response.json()


async def _ready(session: aiohttp.ClientSession, stack: Stack) -> int:
    async with session.get(f"{stack.base}/readyz") as response:
        return response.status


@pytest.mark.parametrize("mode", [Mode.BLACK_HOLE, Mode.REFUSE])
async def test_the_api_cut_off_from_the_store_answers_503_in_time_and_recovers_with_one_generation(
    api: Stack, store_link: Link, store: Store, mode: Mode
) -> None:
    loop = asyncio.get_running_loop()
    timeout = aiohttp.ClientTimeout(total=3 * CREATE_BOUND_S)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        status, _, _, before = await _create(session, api, "before-the-cut")
        assert status == 202, before

        store_link.cut() if mode is Mode.BLACK_HOLE else store_link.refuse()
        asked = loop.time()
        status, content_type, headers, answer = await _create(session, api, "during-the-cut")
        took = loop.time() - asked
        assert status == 503, answer
        assert content_type == "application/problem+json"
        assert answer["type"] == "urn:videogen:problem:store-unavailable"
        assert int(headers["Retry-After"]) > 0
        assert took <= CREATE_BOUND_S, f"the 503 took {took:.1f} s"

        asked = loop.time()
        assert await _ready(session, api) == 503
        assert loop.time() - asked <= READY_BOUND_S

        store_link.heal()
        await eventually(
            lambda: _is(_ready(session, api), 200), RECOVERY_BOUND_S, "the api ready again after the heal"
        )
        status, _, _, again = await _create(session, api, "during-the-cut")
        assert status == 202, again

    # Whatever the cut held (an insert the api gave up on) has reached the store and been answered.
    await store_link.until(
        lambda link: link.held() == 0 and link.leftover() == 0, RECOVERY_BOUND_S, "the held bytes delivered"
    )
    made = await store.generations.find({"idem": scoped("acme", "during-the-cut")}).to_list()
    assert [doc["_id"] for doc in made] == [again["id"]]
    assert await store.generations.count_documents({}) == 2  # and nothing else was written


async def _is(status: Any, expected: int) -> bool:
    return bool(await status == expected)
