"""The three services as separate OS processes, exactly as deployed: started from their entry points with an
environment, stopped (SIGTERM) or killed (SIGKILL) by the test."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from pathlib import Path

from videogen.engines import EngineError, wait_for_http

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
    """Wait until the service's health endpoint answers 200; on failure, show what the service printed."""
    try:
        await wait_for_http(url, timeout=timeout, exited=lambda: proc.proc.returncode if proc.proc else None)
    except EngineError as exc:
        raise RuntimeError(f"{proc.name}: {exc}:\n{await proc.output()}") from None
