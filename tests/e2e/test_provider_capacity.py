"""A provider's capacity shared by orchestrator processes over the real broker and store: a fake of Luma's API
that runs at most ``LIMIT`` tasks per key at once and answers 429 beyond (a real HTTP server on 127.0.0.1),
``VIDEOGEN_LUMA_MAX_CONCURRENCY`` set to the same number, and accounts of very different sizes.

What must hold: every generation completes, the provider never has more than ``LIMIT`` at once and almost
never refuses, the small accounts are served in fair turn with the big one that came first (they finish well
before it), the batch takes close to count x task time / limit, and an orchestrator killed with SIGKILL while
holding slots leaves them with its generations, which the other process resumes without running anything
twice. (The figures themselves are measured by ``bench.provider_capacity``.)"""

from __future__ import annotations

import asyncio
import logging
import math
import signal
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.support.fake_providers.luma import FakeLuma
from tests.support.pipeline import call
from tests.support.services import ServiceProcess, wait_http_ok
from tests.support.stack import running_stack
from tests.support.waiting import eventually
from videogen.engines import free_port
from videogen.keys import create_key
from videogen_common.records.admission import ProviderPool
from videogen_common.repositories.provider_pools import ProviderPoolRepository
from videogen_common.settings import CommonSettings
from videogen_common.store import Store

pytestmark = pytest.mark.e2e

log = logging.getLogger(__name__)

Doc = dict[str, Any]

LIMIT = 3
TASK_S = 1.0
LEASE_S = 4.0


@dataclass
class Stack:
    base: str
    env: dict[str, str]
    store: Store
    luma: FakeLuma
    logs: Path
    keys: dict[str, str] = field(default_factory=dict)
    processes: list[ServiceProcess] = field(default_factory=list)

    async def orchestrator(self, instance: str) -> ServiceProcess:
        """An orchestrator process named ``instance``, started and ready."""
        port = free_port()
        env = {
            **self.env,
            "VIDEOGEN_ORCHESTRATOR_INSTANCE": instance,
            "VIDEOGEN_ORCHESTRATOR_PORT": str(port),
        }
        process = ServiceProcess("orchestrator", env, self.logs / instance)
        self.processes.append(process)
        await process.start()
        await wait_http_ok(f"http://127.0.0.1:{port}/readyz", process, 60)
        return process

    async def create(self, session: aiohttp.ClientSession, account: str, count: int) -> list[str]:
        """``count`` generations of ``account`` at Luma, all at once."""

        async def one(i: int) -> str:
            body = {"prompt": f"{account} shot {i}", "provider": "luma", "duration": 5}
            status, created = await call(
                session, "POST", f"{self.base}/v1/generate", self.keys[account], body
            )
            assert status == 202, created
            generation_id: str = created["id"]
            return generation_id

        return list(await asyncio.gather(*(one(i) for i in range(count))))

    async def docs(self, ids: list[str]) -> list[Doc]:
        return await self.store.generations.find({"_id": {"$in": ids}}).to_list(None)

    async def all_terminal(self, ids: list[str]) -> bool:
        return all(d["status"] in ("completed", "failed") for d in await self.docs(ids))

    async def pool(self) -> ProviderPool:
        [pool] = await ProviderPoolRepository(self.store).of_provider("luma")
        return pool


@pytest.fixture
async def stack(
    base_env: dict[str, str], common_settings: CommonSettings, store: Store, tmp_path: Path
) -> AsyncIterator[Stack]:
    """Migrations, the fake Luma, the api as a process and a key per account; the test starts its
    orchestrators."""
    async with FakeLuma(task_seconds=TASK_S) as luma:
        luma.max_running = LIMIT
        env = {
            "VIDEOGEN_PROVIDERS": "mock,luma",
            "VIDEOGEN_LUMA_API_KEY": luma.api_key,
            "VIDEOGEN_LUMA_BASE_URL": luma.base_url,
            "VIDEOGEN_LUMA_MAX_CONCURRENCY": str(LIMIT),
            "VIDEOGEN_LEASE_SECONDS": str(LEASE_S),
            "VIDEOGEN_RECONCILE_INTERVAL_SECONDS": "0.5",
            "VIDEOGEN_POLL_INTERVAL_SECONDS": "0.1",
            "VIDEOGEN_ACCOUNT_MAX_IN_FLIGHT": "64",
            "VIDEOGEN_LOG_LEVEL": "INFO",
        }
        logs = tmp_path / "logs"
        async with running_stack(
            base_env, common_settings, store, logs / "api", services=["api"], env=env
        ) as api:
            s = Stack(api.base, api.env, store, luma, logs)
            for account in ("big", "small-a", "small-b"):
                s.keys[account] = await create_key(store, account)
            try:
                yield s
            finally:
                for process in s.processes:
                    await process.stop(signal.SIGKILL)


async def test_two_orchestrators_share_a_providers_limit_and_serve_accounts_in_fair_turn(
    stack: Stack,
) -> None:
    async with aiohttp.ClientSession() as session:
        # The big account's burst comes first; the small accounts' few arrive behind it. All are accepted
        # before the orchestrators start, so how long the api takes to accept the burst on a loaded machine
        # does not decide how much of it ran before the small accounts' work arrived.
        big = await stack.create(session, "big", 18)
        small = await stack.create(session, "small-a", 3) + await stack.create(session, "small-b", 3)
    ids = big + small
    # The first tasks run until every generation is at the provider or in line for it: how fast the
    # orchestrators read the requests on a loaded machine does not decide who is in line when a slot frees.
    stack.luma.task_seconds = math.inf
    await asyncio.gather(stack.orchestrator("orch-a"), stack.orchestrator("orch-b"))

    async def all_running_or_in_line() -> bool:
        docs = await stack.docs(ids)
        in_line = [d for d in docs if d["status"] == "queued" and d["queue_reason"] == "provider_capacity"]
        return len(stack.luma.tasks) == LIMIT and len(in_line) == len(ids) - LIMIT

    await eventually(all_running_or_in_line, 60, "every generation at the provider or in line")
    started = time.monotonic()
    stack.luma.task_seconds = (
        TASK_S  # from now on each task ends TASK_S after it was made (the first ones now)
    )
    for task in stack.luma.tasks.values():
        task.run_seconds = TASK_S
    await eventually(lambda: stack.all_terminal(ids), 90, "every generation finished")
    elapsed = time.monotonic() - started

    docs = {d["_id"]: d for d in await stack.docs(ids)}
    assert [docs[gid]["status"] for gid in ids] == ["completed"] * len(ids), [
        docs[gid]["error"] for gid in ids if docs[gid]["status"] != "completed"
    ]
    assert stack.luma.peak_running <= LIMIT
    assert len(stack.luma.submissions) == len(ids)  # one task each
    assert stack.luma.capacity_refusals <= 2, "admission, not the provider's 429s, kept the limit"

    finished = {gid: docs[gid]["updated_at"] for gid in ids}
    # In fair turn each freed slot goes to the account with the fewest running: the small accounts' six finish
    # in the rounds where the big one gets one slot a round, so at least a third of the big burst is still
    # to finish when they are done (in arrival order they would finish last, behind all 18).
    big_finished = sorted(finished[gid] for gid in big)
    assert max(finished[gid] for gid in small) < big_finished[len(big_finished) * 2 // 3], (
        "the small accounts were not served in fair turn"
    )
    ideal = len(ids) * TASK_S / LIMIT
    log.info("%d generations in %.1f s; ideal %.1f s; ratio %.2f", len(ids), elapsed, ideal, ideal / elapsed)
    assert elapsed < 2.5 * ideal, f"{elapsed:.1f} s for a batch that needs {ideal:.1f} s at the limit"


async def test_a_killed_orchestrators_slots_stay_with_its_generations_and_nothing_runs_twice(
    stack: Stack,
) -> None:
    stack.luma.task_seconds = math.inf  # none ends before the kill: the limit fills, however slow the submits
    first = await stack.orchestrator("orch-a")
    async with aiohttp.ClientSession() as session:
        ids = await stack.create(session, "big", 6)

    async def slots_full() -> bool:
        return len(stack.luma.tasks) == LIMIT and (await stack.pool()).running == LIMIT

    await eventually(slots_full, 30, "the limit's worth of tasks at the provider")
    assert await first.stop(signal.SIGKILL) == -signal.SIGKILL
    held = (await stack.pool()).holders
    assert len(held) == LIMIT  # the dead process's slots stay with its generations
    stack.luma.task_seconds = 3.0  # from now on each task ends three seconds after it was made
    for task in stack.luma.tasks.values():
        task.run_seconds = 3.0

    peak_held = LIMIT

    async def finished_watching_the_pool() -> bool:
        nonlocal peak_held
        peak_held = max(peak_held, (await stack.pool()).running)
        return await stack.all_terminal(ids)

    await stack.orchestrator("orch-b")
    await eventually(finished_watching_the_pool, 60, "every generation finished after the kill")

    docs = await stack.docs(ids)
    assert [d["status"] for d in docs] == ["completed"] * len(ids), [d["error"] for d in docs]
    assert peak_held == LIMIT  # never counted twice
    assert stack.luma.peak_running <= LIMIT
    prompts = [stack.luma.prompt_of(body) for body in stack.luma.submissions]
    assert len(prompts) == len(set(prompts)) == len(ids)  # each made once: resumed, not submitted again
    assert (await stack.pool()).holders == ()
