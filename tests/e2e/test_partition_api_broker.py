"""The api cut off from the broker (issue 36, scenario 3) while the orchestrator keeps it: the api and the
orchestrator run as processes against a broker of the test's own reached only through a link, and the link
is cut — silently (black-hole: bytes held, delivered on the heal) or with resets (refuse) — for the api's
connections alone. Creations keep being acknowledged (the store first; readiness stays true), the
orchestrator's reconciler dispatches what never reached the broker, and every one completes within the bound
while the cut lasts. After the heal the request messages the cut held arrive late, and change nothing: each
generation ran and completed once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiokafka import AIOKafkaConsumer, TopicPartition

from tests.support.engines import Engines
from tests.support.env import isolated_env
from tests.support.partition import Link, Mode
from tests.support.stack import Stack, generate, running_stack
from tests.support.waiting import eventually
from videogen_common.settings import CommonSettings
from videogen_common.store import Store
from videogen_common.topics import Topics

pytestmark = pytest.mark.e2e

GRACE_S = 2.0  # VIDEOGEN_DISPATCH_GRACE_SECONDS
RECONCILE_S = 0.5  # VIDEOGEN_RECONCILE_INTERVAL_SECONDS
RUN_S = 30.0  # a mock generation's own time on a loaded machine, from dispatch to completed
PROCESSED_BOUND_S = GRACE_S + 2 * RECONCILE_S + RUN_S  # docs/guarantees.md
ACK_BOUND_S = 5.0  # a creation's 202 while the broker is cut off: it waits for the store only
CREATIONS = 4
# What a second run of a generation would change.
RESULT = ("status", "provider_task_id", "video_key", "submit_started_at", "timeline", "attempts")


@pytest.fixture
def base_env(engines: Engines, tmp_path: Path, broker_link: Link) -> dict[str, str]:
    """The services' environment, with the test's own broker, reached through ``broker_link``."""
    return {**isolated_env(engines, tmp_path / "data"), "VIDEOGEN_KAFKA_BOOTSTRAP": broker_link.address}


@pytest.fixture
async def stack(
    base_env: dict[str, str],
    common_settings: CommonSettings,
    store: Store,
    tmp_path: Path,
    broker_link: Link,
) -> AsyncIterator[Stack]:
    env = {
        "VIDEOGEN_DISPATCH_GRACE_SECONDS": str(GRACE_S),
        "VIDEOGEN_RECONCILE_INTERVAL_SECONDS": str(RECONCILE_S),
    }
    async with running_stack(
        base_env, common_settings, store, tmp_path / "logs", services=["api", "orchestrator"], env=env
    ) as stack:
        api = stack.services["api"].proc
        assert api is not None
        await broker_link.name(api.pid, "api")
        yield stack


async def _completed(store: Store, ids: list[str]) -> bool:
    found = await store.generations.count_documents({"_id": {"$in": ids}, "status": "completed"})
    return bool(found == len(ids))


async def _results(store: Store, ids: list[str]) -> dict[str, dict[str, Any]]:
    docs = await store.generations.find({"_id": {"$in": ids}}).to_list()
    return {doc["_id"]: {field: doc.get(field) for field in RESULT} for doc in docs}


async def _consumed(bootstrap: str, group: str, topic: str) -> bool:
    """Whether ``group`` has committed every message on ``topic`` there is now (read as a member of no
    group's: the consumer asks for the group's offsets, it never joins)."""
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    await consumer.start()
    try:
        await consumer.topics()
        partitions = [TopicPartition(topic, p) for p in consumer.partitions_for_topic(topic) or ()]
        ends = await consumer.end_offsets(partitions)
        for tp, end in ends.items():
            if end and (await consumer.committed(tp) or 0) < end:
                return False
        return bool(partitions)
    finally:
        await consumer.stop()


@pytest.mark.parametrize("mode", [Mode.BLACK_HOLE, Mode.REFUSE])
async def test_the_api_cut_off_from_the_broker_keeps_accepting_and_each_generation_completes_once(
    stack: Stack, broker_link: Link, store: Store, mode: Mode
) -> None:
    loop = asyncio.get_running_loop()
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as session:
        status, first = await generate(session, stack.base, stack.key, "before the cut", duration=3)
        assert status == 202, first
        await eventually(lambda: _completed(store, [first["id"]]), RUN_S, "the first generation completed")
        assert broker_link.open_connections("api") > 0, "the api reaches the broker through the link"

        broker_link.cut("api") if mode is Mode.BLACK_HOLE else broker_link.refuse("api")
        ids = []
        for n in range(CREATIONS):
            asked = loop.time()
            status, created = await generate(session, stack.base, stack.key, f"cut off {n}", duration=3)
            assert status == 202, created
            assert loop.time() - asked <= ACK_BOUND_S
            ids.append(created["id"])
        async with session.get(stack.url("api", "/readyz")) as ready:
            assert ready.status == 200, await ready.text()  # the store gates readiness, not the broker

        await eventually(
            lambda: _completed(store, ids), PROCESSED_BOUND_S, "every generation accepted while cut completed"
        )
        results = await _results(store, ids)
        if mode is Mode.BLACK_HOLE:
            # The api's request messages were held, not lost: they arrive once the link heals.
            assert broker_link.held("api") > 0

        broker_link.heal("api")
        await broker_link.until(lambda link: link.held() == 0, 30, "the held bytes delivered")
        status, last = await generate(session, stack.base, stack.key, "after the heal", duration=3)
        assert status == 202, last
        await eventually(lambda: _completed(store, [last["id"]]), PROCESSED_BOUND_S, "after the heal")

    # The orchestrator has taken in every request message, the late ones included, and ran nothing again.
    group = stack.env["VIDEOGEN_ORCHESTRATOR_GROUP"]
    topic = Topics(stack.env["VIDEOGEN_TOPIC_PREFIX"]).requested
    await eventually(
        lambda: _consumed(broker_link.address, group, topic), 60, "the orchestrator consumed every request"
    )
    assert await _results(store, ids) == results
