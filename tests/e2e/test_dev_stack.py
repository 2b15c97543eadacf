"""`videogen dev` (what `make dev` runs): the whole stack from one command, used as the README says, and
stopped by SIGTERM with nothing left behind. A killed service is restarted by the supervisor."""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from tests.support.pipeline import Receiver, call, verify
from tests.support.procs import processes_using
from tests.support.stack import generate, subscribe
from videogen.engines import free_port

pytestmark = pytest.mark.e2e


class DevStack:
    def __init__(self, data_dir: Path, *, fixed_key: bool = True) -> None:
        self.data_dir = data_dir
        self.api_port = free_port()
        # Without a fixed key the stack reuses the one it kept in the data folder.
        self.key: str | None = "vg_test_" + secrets.token_hex(16) if fixed_key else None
        self.proc: asyncio.subprocess.Process | None = None
        self.log = data_dir.parent / "dev-stack.log"

    async def start(self) -> None:
        env = {
            **os.environ,
            "VIDEOGEN_DATA_DIR": str(self.data_dir),
            "VIDEOGEN_API_PORT": str(self.api_port),
            "VIDEOGEN_DEV_KAFKA_PORT": str(free_port()),
            "VIDEOGEN_DEV_MONGO_PORT": str(free_port()),
            "VIDEOGEN_ORCHESTRATOR_PORT": str(free_port()),
            "VIDEOGEN_NOTIFIER_PORT": str(free_port()),
            **({"VIDEOGEN_DEV_API_KEY": self.key} if self.key else {}),
        }
        errors = await asyncio.to_thread(self.log.open, "ab")
        try:
            self.proc = await asyncio.create_subprocess_exec(
                str(Path(sys.executable).parent / "videogen"),
                "dev",
                env=env,
                stdout=asyncio.subprocess.PIPE,
                stderr=errors,
                stdin=asyncio.subprocess.DEVNULL,
                start_new_session=True,
            )
        finally:
            await asyncio.to_thread(errors.close)
        assert self.proc.stdout is not None
        banner = ""
        while "Ctrl-C stops everything" not in banner:
            line = await asyncio.wait_for(self.proc.stdout.readline(), 120)
            if not line:
                raise AssertionError(f"videogen dev exited early:\n{banner}\n{self.log.read_text()}")
            banner += line.decode()
        self.banner = banner

    async def stop(self) -> int:
        assert self.proc is not None
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
        return await asyncio.wait_for(self.proc.wait(), 60)


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
    assert f"API key:      {key}" in dev.banner
    receiver = Receiver()
    await receiver.start()
    try:
        async with aiohttp.ClientSession() as session:
            hook = await subscribe(session, base, key, receiver.url, ["video.completed"])
            status, first = await generate(session, base, key, "dev stack smoke")
            assert status == 202
            headers, body = await asyncio.wait_for(receiver.expect(first["id"]), 90)
            verify(hook["secret"], headers, body)

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
