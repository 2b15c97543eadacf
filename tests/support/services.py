"""The three services as separate OS processes, exactly as deployed: started from their entry points with an
environment, stopped (SIGTERM) or killed (SIGKILL) by the test."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from pathlib import Path

import aiohttp

MODULES = {
    "api": "videogen_api.main",
    "orchestrator": "videogen_orchestrator.main",
    "notifier": "videogen_notifier.main",
}


class ServiceProcess:
    def __init__(self, name: str, env: dict[str, str], log_dir: Path) -> None:
        self.name = name
        self.env = env
        self.log = log_dir / f"{name}.log"
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        out = await asyncio.to_thread(self.log.open, "ab")
        try:
            self.proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                MODULES[self.name],
                stdout=out,
                stderr=asyncio.subprocess.STDOUT,
                stdin=asyncio.subprocess.DEVNULL,
                env={**os.environ, **self.env},
                start_new_session=True,
            )
        finally:
            await asyncio.to_thread(out.close)

    async def stop(self, sig: int = signal.SIGTERM, timeout: float = 20.0) -> int | None:
        if self.proc is None or self.proc.returncode is not None:
            return self.proc.returncode if self.proc else None
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, sig)
        try:
            return await asyncio.wait_for(self.proc.wait(), timeout)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            return await self.proc.wait()

    async def output(self) -> str:
        return await asyncio.to_thread(self.log.read_text, errors="replace")


async def wait_http_ok(url: str, proc: ServiceProcess, timeout: float = 30.0) -> None:
    """Poll a health endpoint until it answers 200 (a process start has no event to await)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    async with aiohttp.ClientSession() as session:
        while loop.time() < deadline:
            if proc.proc is not None and proc.proc.returncode is not None:
                raise RuntimeError(f"{proc.name} exited with {proc.proc.returncode}:\n{await proc.output()}")
            with contextlib.suppress(aiohttp.ClientError, OSError):
                async with session.get(url) as response:
                    if response.status == 200:
                        return
            await asyncio.sleep(0.1)
    raise RuntimeError(f"{url} not healthy after {timeout}s:\n{await proc.output()}")
