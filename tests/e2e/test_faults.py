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
from tests.support.services import ServiceProcess, wait_http_ok
from videogen.engines import free_port
from videogen.keys import create_key
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
    await migrate(common_settings)
    key = await create_key(store, "acme")
    port = free_port()
    env = {
        **base_env,
        "VIDEOGEN_API_PORT": str(port),
        "VIDEOGEN_PUBLIC_BASE_URL": f"http://127.0.0.1:{port}",
        "VIDEOGEN_PUBLISH_TIMEOUT_SECONDS": "1",
        "VIDEOGEN_DISPATCH_GRACE_SECONDS": "2",
        "VIDEOGEN_RECONCILE_INTERVAL_SECONDS": "0.5",
        "VIDEOGEN_MOCK_LATENCY_MS": "1500",
    }
    services = [ServiceProcess(name, env, tmp_path / "logs") for name in ("api", "orchestrator", "notifier")]
    base = f"http://127.0.0.1:{port}"
    try:
        for service in services:
            await service.start()
        await wait_http_ok(f"{base}/healthz", services[0])
        async with aiohttp.ClientSession() as session:
            status, hook = await call(
                session,
                "POST",
                f"{base}/v1/webhooks",
                key,
                {"url": receiver.url, "events": ["video.completed"]},
            )
            assert status == 201
            # Warm-up: one delivery proves both workers have joined their groups and run.
            _, warm = await call(
                session,
                "POST",
                f"{base}/v1/generate",
                key,
                {"prompt": "warm-up", "provider": "mock", "duration": 3},
            )
            await asyncio.wait_for(receiver.expect(warm["id"]), 60)

            # In flight when the broker dies: requested, still rendering (1.5 s of mock latency).
            before = [
                await call(
                    session,
                    "POST",
                    f"{base}/v1/generate",
                    key,
                    {"prompt": f"before {i}", "provider": "mock", "duration": 3},
                )
                for i in range(3)
            ]

            await asyncio.to_thread(broker_process.stop)
            during = [
                await call(
                    session,
                    "POST",
                    f"{base}/v1/generate",
                    key,
                    {"prompt": f"during {i}", "provider": "mock", "duration": 3},
                )
                for i in range(3)
            ]
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
                assert final["status"] == "completed"
    finally:
        await asyncio.gather(*(s.stop() for s in services))
        if broker_process.proc is None or broker_process.proc.poll() is not None:
            await asyncio.to_thread(broker_process.start)
