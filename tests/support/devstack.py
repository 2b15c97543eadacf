"""`videogen dev` (what `make dev` runs) as a process of a test: started on free ports, its banner read,
stopped with SIGTERM."""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import sys
from collections.abc import Mapping
from pathlib import Path

from videogen.engines import free_port


class DevStack:
    """`videogen dev` as a user runs it, on free ports and its own data folder; ``env`` is added to its
    environment (the supervisor passes it on to every process it starts)."""

    def __init__(
        self, data_dir: Path, *, fixed_key: bool = True, env: Mapping[str, str] | None = None
    ) -> None:
        self.data_dir = data_dir
        self.extra_env = dict(env or {})
        self.api_port = free_port()
        self.mongo_port = free_port()
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
            "VIDEOGEN_DEV_MONGO_PORT": str(self.mongo_port),
            "VIDEOGEN_ORCHESTRATOR_PORT": str(free_port()),
            "VIDEOGEN_NOTIFIER_PORT": str(free_port()),
            **({"VIDEOGEN_DEV_API_KEY": self.key} if self.key else {}),
            **self.extra_env,
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
