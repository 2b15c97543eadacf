"""Faults lose nothing that was acknowledged: generations accepted before and during a broker outage (the
embedded broker keeps everything in memory, so a restart loses every message and topic) still finish and are
delivered."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp
import pytest

from tests.support.engines import EngineProcess
from tests.support.pipeline import Receiver, call, verify
from tests.support.stack import generate, running_stack, subscribe
from videogen.migrate import migrate
from videogen_common.settings import CommonSettings
from videogen_common.store import Store

pytestmark = pytest.mark.e2e


async def test_generations_accepted_around_a_broker_restart_all_finish(
    base_env: dict[str, str],
    common_settings: CommonSettings,
    store: Store,
    broker_process: EngineProcess,
    receiver: Receiver,
    tmp_path: Path,
) -> None:
    env = {
        "VIDEOGEN_PUBLISH_TIMEOUT_SECONDS": "1",
        "VIDEOGEN_DISPATCH_GRACE_SECONDS": "2",
        "VIDEOGEN_RECONCILE_INTERVAL_SECONDS": "0.5",
        "VIDEOGEN_MOCK_LATENCY_MS": "1500",
    }
    try:
        async with (
            running_stack(
                base_env, common_settings, store, tmp_path / "logs", env=env, clean_exit=False
            ) as stack,
            aiohttp.ClientSession() as session,
        ):
            base, key = stack.base, stack.key
            hook = await subscribe(session, base, key, receiver.url, ["video.completed"])
            # Warm-up: one delivery proves both workers have joined their groups and run.
            _, warm = await generate(session, base, key, "warm-up")
            await asyncio.wait_for(receiver.expect(warm["id"]), 60)

            # In flight when the broker dies: requested, still rendering (1.5 s of mock latency).
            before = [await generate(session, base, key, f"before {i}") for i in range(3)]

            await asyncio.to_thread(broker_process.stop)
            during = [await generate(session, base, key, f"during {i}") for i in range(3)]
            assert [s for s, _ in before + during] == [202] * 6, (
                "the api must accept while the broker is down"
            )

            await asyncio.to_thread(broker_process.start)
            await migrate(common_settings)  # the memory broker came back empty
            for _, created in before + during:
                headers, body = await asyncio.wait_for(receiver.expect(created["id"]), 120)
                verify(hook["secret"], headers, body)
            for _, created in before + during:
                status, final = await call(session, "GET", f"{base}/v1/generations/{created['id']}", key)
                assert status == 200 and final["status"] == "completed"
    finally:
        if broker_process.proc is None or broker_process.proc.poll() is not None:
            await asyncio.to_thread(broker_process.start)
