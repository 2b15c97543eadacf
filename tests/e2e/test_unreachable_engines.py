"""Every service started with its broker or its store unreachable still stops on SIGTERM within its
shutdown bound: nothing it waits for (a server selection, a bootstrap, a batch being recorded) can hold the
process past the bound, so Kubernetes never has to kill it. The api serves without a broker (creation is
durable in the store; the reconciler dispatches), so it is up, and stops cleanly."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import aiohttp
import pytest

from tests.support.services import ServiceProcess
from videogen.engines import free_port

pytestmark = pytest.mark.e2e

BOUND_S = 3.0  # VIDEOGEN_SHUTDOWN_TIMEOUT_SECONDS for this test
MARGIN_S = 4.0  # interpreter exit, and the machine being busy
OVERRAN = 70  # the exit code of a stop that reached the bound


async def _answers(url: str, proc: ServiceProcess, within: float) -> bool:
    """True once ``url`` answers 200; False if the process exits first (a worker without a broker does)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    async with aiohttp.ClientSession() as session:
        while loop.time() < deadline:
            assert proc.proc is not None
            if proc.proc.returncode is not None:
                return False
            try:
                async with session.get(url) as response:
                    if response.status == 200:
                        return True
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.1)  # a process start has no event to await
    raise AssertionError(f"{url} did not answer within {within}s:\n{await proc.output()}")


@pytest.mark.parametrize("unreachable", ["broker", "store"])
@pytest.mark.parametrize("service", ["api", "orchestrator", "notifier"])
async def test_a_service_whose_engine_is_unreachable_stops_on_sigterm_within_its_bound(
    base_env: dict[str, str], tmp_path: Path, service: str, unreachable: str
) -> None:
    dead = f"127.0.0.1:{free_port()}"  # nothing listens there
    port = free_port()
    env = {
        **base_env,
        f"VIDEOGEN_{service.upper()}_PORT": str(port),
        "VIDEOGEN_SHUTDOWN_TIMEOUT_SECONDS": str(BOUND_S),
        "VIDEOGEN_SWEEP_INTERVAL_SECONDS": "0.2",
        "VIDEOGEN_RECONCILE_INTERVAL_SECONDS": "0.2",
        "VIDEOGEN_METRICS_REFRESH_SECONDS": "0.2",
    }
    if unreachable == "broker":
        env["VIDEOGEN_KAFKA_BOOTSTRAP"] = dead
    else:
        env["VIDEOGEN_MONGO_URL"] = f"mongodb://{dead}/?directConnection=true&serverSelectionTimeoutMS=60000"
    process = ServiceProcess(service, env, tmp_path / "logs")
    await process.start()
    try:
        up = await _answers(f"http://127.0.0.1:{port}/healthz", process, within=60)
        if service == "api":
            assert up, "the api must serve without its broker or store"
        if up:
            # Let its loops run into the engine that is not there (a server selection waits 60 s).
            await asyncio.sleep(1.5)
        assert process.proc is not None
        # A worker whose broker is not there stops by itself (faust); once it has, its signal handlers are
        # gone, and a SIGTERM arriving before the interpreter is done exiting ends it by the signal itself.
        stopped_by_itself = "stopped" in await process.output()
        loop = asyncio.get_running_loop()
        asked = loop.time()
        if process.proc.returncode is None:
            process.proc.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(process.proc.wait(), BOUND_S + MARGIN_S)
        took = loop.time() - asked
    finally:
        await process.stop(signal.SIGKILL)
    assert took <= BOUND_S + MARGIN_S
    ended = (0, 1, OVERRAN, -signal.SIGTERM) if stopped_by_itself else (0, 1, OVERRAN)
    assert code in ended, await process.output()
