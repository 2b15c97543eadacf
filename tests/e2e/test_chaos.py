"""The whole system under load while each of its processes is killed with SIGKILL in turn.

`videogen dev` runs the stack as separate processes and restarts whatever dies, as Kubernetes would. Two
accounts create generations steadily, each with a healthy and a flaky webhook receiver; the api, the
orchestrator, the notifier, the broker and then the store are killed one after another. Afterwards every
generation answered ``202`` exists and is ``completed``, and reached every endpoint of its own account —
correctly signed, under one ``webhook-id`` per (generation, endpoint) — and no endpoint of another account.

The broker keeps its topics in memory, so killing it loses every message on it, acknowledged or not: what
the system still delivers then is repaired from the store (the reconciler's dispatch of unleased generations
and its republishing of status events the notifier has not taken in)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
from collections import defaultdict
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest

from tests.support.chaos import Endpoint
from tests.support.devstack import DevStack
from tests.support.load import QUICK_REPAIRS, create_steadily
from tests.support.pipeline import verify
from tests.support.procs import processes_using
from tests.support.stack import subscribe
from videogen.engines import mongo_url
from videogen.keys import create_key
from videogen_common.store import connect

pytestmark = [pytest.mark.e2e, pytest.mark.chaos]

ACCOUNTS = ("dev", "tenant-b")
RATE_PER_ACCOUNT = 4.0  # creations a second
KILL_EVERY_S = 9.0
# In the order they die; each is found by what its command line holds.
VICTIMS = {
    "api": "videogen_api",
    "orchestrator": "videogen_orchestrator",
    "notifier": "videogen_notifier",
    "broker": "tansu",
    "store": "secantus",
}
CONVERGE_S = 240.0
STACK_ENV = QUICK_REPAIRS


@pytest.fixture
async def stack(tmp_path: Path) -> AsyncIterator[DevStack]:
    dev = DevStack(tmp_path / "var", env=STACK_ENV)
    try:
        await dev.start()
        yield dev
    finally:
        if dev.proc and dev.proc.returncode is None:
            dev.proc.kill()
            await dev.proc.wait()
        for pid in processes_using(dev.data_dir):  # never leave a process behind, even on failure
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def _pid_of(stack: DevStack, victim: str) -> int | None:
    marker = VICTIMS[victim]
    found = [pid for pid, cmd in processes_using(stack.data_dir).items() if marker in cmd]
    return found[0] if len(found) == 1 else None


async def _kill_and_await_restart(stack: DevStack, victim: str) -> None:
    old = _pid_of(stack, victim)
    assert old is not None, f"no single {victim} process to kill"
    os.kill(old, signal.SIGKILL)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 60
    while (new := _pid_of(stack, victim)) in (None, old):  # the supervisor restarts it; nothing to await
        assert loop.time() < deadline, f"{victim} was not restarted"
        await asyncio.sleep(0.2)
    assert new != old


async def test_no_acknowledged_generation_or_delivery_is_lost_while_every_process_is_killed_in_turn(
    stack: DevStack,
) -> None:
    assert stack.key is not None
    base = f"http://127.0.0.1:{stack.api_port}"
    client, store = connect(mongo_url(stack.mongo_port), "videogen", app_name="chaos-test")
    keys = {"dev": stack.key, "tenant-b": await create_key(store, "tenant-b")}
    rng = random.Random(20261124)
    endpoints = [Endpoint(account, flaky, rng) for account in ACCOUNTS for flaky in (False, True)]
    accepted: dict[str, list[str]] = {account: [] for account in ACCOUNTS}
    try:
        async with aiohttp.ClientSession() as session:
            for endpoint in endpoints:
                await endpoint.start()
                hook = await subscribe(
                    session, base, keys[endpoint.account], endpoint.url, ["video.completed", "video.failed"]
                )
                endpoint.secret = hook["secret"]

            stop = asyncio.Event()
            loads = [
                asyncio.create_task(
                    create_steadily(session, [base], keys[a], a, accepted[a], stop, rate=RATE_PER_ACCOUNT)
                )
                for a in ACCOUNTS
            ]
            for victim in VICTIMS:
                await asyncio.sleep(KILL_EVERY_S)  # load runs between the kills
                await _kill_and_await_restart(stack, victim)
            await asyncio.sleep(KILL_EVERY_S)
            stop.set()
            refused = sum(await asyncio.gather(*loads))

            ids = [gid for account in ACCOUNTS for gid in accepted[account]]
            loop = asyncio.get_running_loop()
            deadline = loop.time() + CONVERGE_S
            while True:  # everything is repaired in the background; the store and receivers are polled
                docs = {d["_id"]: d async for d in store.generations.find({"_id": {"$in": ids}})}
                finished = all(d["status"] in ("completed", "failed") for d in docs.values())
                owed = [
                    gid
                    for endpoint in endpoints
                    for gid in accepted[endpoint.account]
                    if gid not in endpoint.delivered()
                ]
                if (len(docs) == len(ids) and finished and not owed) or loop.time() > deadline:
                    break
                await asyncio.sleep(1)
    finally:
        for endpoint in endpoints:
            if endpoint.runner:
                await endpoint.runner.cleanup()
        await client.close()

    # Every generation answered 202 exists and completed.
    assert len(docs) == len(ids), f"{len(ids) - len(docs)} acknowledged generations are missing"
    statuses: defaultdict[str, int] = defaultdict(int)
    for doc in docs.values():
        statuses[doc["status"]] += 1
    assert statuses == {"completed": len(ids)}, dict(statuses)
    assert all(docs[gid]["account_id"] == account for account in ACCOUNTS for gid in accepted[account])

    # Each reached every endpoint of its own account, signed, under one webhook-id per (generation, endpoint).
    assert owed == [], f"{len(owed)} deliveries never arrived"
    requests = 0
    for endpoint in endpoints:
        ids_by_generation: dict[str, set[str]] = defaultdict(set)
        for headers, body, _ in endpoint.requests:
            verify(endpoint.secret, headers, body)
            payload: dict[str, Any] = orjson.loads(body)
            generation_id = payload["data"]["id"]
            ids_by_generation[generation_id].add(headers["webhook-id"])
            # Nothing of another account: every generation an endpoint heard of is its own account's.
            owner = docs.get(generation_id) or await _stored(stack, generation_id)
            assert owner["account_id"] == endpoint.account
            requests += 1
        assert all(len(seen) == 1 for seen in ids_by_generation.values())
    print(  # noqa: T201 — the counts this test checked
        f"chaos: {len(ids)} generations acknowledged ({refused} requests refused while a process was down), "
        f"all completed; {len(ids) * 2} (generation, endpoint) pairs delivered, {requests} signed requests "
        f"checked across {len(endpoints)} endpoints"
    )


async def _stored(stack: DevStack, generation_id: str) -> dict[str, Any]:
    """A generation the test was not told of (the api died after storing it, before answering)."""
    client, store = connect(mongo_url(stack.mongo_port), "videogen", app_name="chaos-test")
    try:
        doc = await store.generations.find_one({"_id": generation_id})
    finally:
        await client.close()
    assert doc is not None
    return doc
