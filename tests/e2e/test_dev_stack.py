"""`videogen dev` (what `make dev` runs): the whole stack from one command, used as the README says, and
stopped by SIGTERM with nothing left behind. A killed service is restarted by the supervisor."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from tests.support.devstack import DevStack
from tests.support.pipeline import Receiver, call, verify
from tests.support.procs import processes_using
from tests.support.stack import generate, subscribe

pytestmark = pytest.mark.e2e


async def videogen_beside(dev: DevStack, *args: str) -> tuple[int, str]:
    """Run ``videogen *args`` as a user would beside `make dev`: from the folder holding its data folder, with
    no VIDEOGEN_* settings; returns its exit code and output."""
    assert dev.data_dir.name == "var"
    env = {name: value for name, value in os.environ.items() if not name.startswith("VIDEOGEN_")}
    process = await asyncio.create_subprocess_exec(
        str(Path(sys.executable).parent / "videogen"),
        *args,
        cwd=dev.data_dir.parent,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode is not None
    return process.returncode, out.decode()


@pytest.fixture
async def dev(tmp_path: Path) -> AsyncIterator[DevStack]:
    stack = DevStack(tmp_path / "var")
    try:
        await stack.start()
        yield stack
    finally:
        if stack.proc and stack.proc.returncode is None:
            stack.proc.kill()
            await stack.proc.wait()
        for pid in processes_using(stack.data_dir):  # never leave a process behind, even on failure
            os.kill(pid, signal.SIGKILL)


async def test_dev_stack_runs_the_path_restarts_a_killed_service_stops_cleanly_and_keeps_its_data(
    dev: DevStack,
) -> None:
    assert dev.key is not None
    key = dev.key
    base = f"http://127.0.0.1:{dev.api_port}"
    assert f"API base URL: {base}/v1" in dev.banner
    assert f"console:      {base}/console" in dev.banner
    assert f"API key:      {key}" in dev.banner
    assert f"export VIDEOGEN_BASE_URL={base}/v1 VIDEOGEN_API_KEY={key}" in dev.banner  # for the SDK
    receiver = Receiver()
    await receiver.start()
    try:
        async with aiohttp.ClientSession() as session:
            async with session.get(f"{base}/console") as page:  # the console, out of the box, no key
                assert page.status == 200 and "/console/js/app.js" in await page.text()
            hook = await subscribe(session, base, key, receiver.url, ["video.completed"])
            status, first = await generate(session, base, key, "dev stack smoke")
            assert status == 202
            headers, body = await asyncio.wait_for(receiver.expect(first["id"]), 90)
            verify(hook["secret"], headers, body)

            # An operator's key, made beside the running stack from the same folder with no settings.
            code, out = await videogen_beside(dev, "keys", "create", "--account", "globex")
            assert code == 0, out
            status, _ = await call(session, "GET", f"{base}/v1/generations", out.strip())
            assert status == 200

            # Kill -9 the orchestrator: the supervisor restarts it and the next generation still completes.
            orchestrators = [
                pid for pid, cmd in processes_using(dev.data_dir).items() if "videogen_orchestrator" in cmd
            ]
            assert len(orchestrators) == 1
            os.kill(orchestrators[0], signal.SIGKILL)
            status, second = await generate(session, base, key, "after the crash")
            assert status == 202
            await asyncio.wait_for(receiver.expect(second["id"]), 120)
            restarted = [
                pid for pid, cmd in processes_using(dev.data_dir).items() if "videogen_orchestrator" in cmd
            ]
            assert restarted and restarted != orchestrators
    finally:
        await receiver.stop()

    assert await dev.stop() == 0
    assert processes_using(dev.data_dir) == {}
    assert "orchestrator exited with code -9" in dev.log.read_text()
    # With no stack running, the same command says in one line what to set.
    code, out = await videogen_beside(dev, "keys", "create", "--account", "globex")
    assert code == 1 and "VIDEOGEN_MONGO_URL" in out and "Traceback" not in out, out

    # Started again on the same data folder: the key and the generations are still there.
    again = DevStack(dev.data_dir, fixed_key=False)
    try:
        await again.start()
        assert f"API key:      {key}" in again.banner
        async with aiohttp.ClientSession() as session:
            status, kept = await call(
                session, "GET", f"http://127.0.0.1:{again.api_port}/v1/generations/{first['id']}", key
            )
        assert status == 200 and kept["status"] == "completed"
    finally:
        assert await again.stop() == 0
    assert processes_using(dev.data_dir) == {}
