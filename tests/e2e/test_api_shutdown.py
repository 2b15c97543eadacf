"""The api process on SIGTERM, as Kubernetes stops a pod: it drains (``/readyz`` 503 while it keeps serving,
``/healthz`` stays 200), then stops accepting connections, finishes the request in flight, and exits 0 — and a
request that would outlast the bound is cut off so the exit still comes within it."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import orjson
import pytest

from tests.support.services import ServiceProcess
from tests.support.stack import running_stack
from videogen_common.settings import CommonSettings
from videogen_common.store import Store

pytestmark = pytest.mark.e2e

# Long enough for a loaded machine: the test sees the drain (a fresh connection for each probe) and finishes
# its upload (a store write) within these, each the service's own bound.
DRAIN_S = 3.0
TIMEOUT_S = 5.0
# Beyond drain + timeout: flushing the producer and closing the store client, and the interpreter's exit.
RELEASE_MARGIN_S = 5.0
BODY = orjson.dumps({"prompt": "a slow upload", "provider": "mock", "duration": 3})


@dataclass
class Api:
    process: ServiceProcess
    port: int
    key: str

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def terminate(self) -> None:
        assert self.process.proc is not None
        self.process.proc.send_signal(signal.SIGTERM)

    def running(self) -> bool:
        return self.process.proc is not None and self.process.proc.returncode is None


@pytest.fixture
async def api(
    base_env: dict[str, str], common_settings: CommonSettings, store: Store, tmp_path: Path
) -> AsyncIterator[Api]:
    env = {
        "VIDEOGEN_SHUTDOWN_DRAIN_SECONDS": str(DRAIN_S),
        "VIDEOGEN_SHUTDOWN_TIMEOUT_SECONDS": str(TIMEOUT_S),
    }
    async with running_stack(
        base_env,
        common_settings,
        store,
        tmp_path / "logs",
        services=["api"],
        env=env,
        stop_signal=signal.SIGKILL,  # the tests stop it themselves; this is only the cleanup
        clean_exit=False,
    ) as stack:
        yield Api(stack.services["api"], stack.ports["api"], stack.key)


async def begin_upload(api: Api) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A create whose body is only half sent: the request is in flight until the test sends the rest."""
    reader, writer = await asyncio.open_connection("127.0.0.1", api.port)
    head = (
        f"POST /v1/generate HTTP/1.1\r\nHost: 127.0.0.1:{api.port}\r\n"
        f"Authorization: Bearer {api.key}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(BODY)}\r\n\r\n"
    )
    writer.write(head.encode() + BODY[:10])
    await writer.drain()
    return reader, writer


async def finish_upload(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> tuple[int, bytes]:
    """Send the rest of the body; the status and the whole answer (the server closes the connection)."""
    writer.write(BODY[10:])
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return int(answer.split(b" ", 2)[1]), answer


async def accepts_connections(port: int) -> bool:
    try:
        _, writer = await asyncio.open_connection("127.0.0.1", port)
    except ConnectionRefusedError:
        return False
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return True


async def until_refused(api: Api, timeout: float) -> None:
    """Poll: the listener closing has no event a client could await."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while await accepts_connections(api.port):
        assert loop.time() < deadline, f"the api still accepted connections {timeout}s after SIGTERM"
        await asyncio.sleep(0.05)


async def test_sigterm_drains_then_finishes_the_request_in_flight_and_exits_0(api: Api, store: Store) -> None:
    loop = asyncio.get_running_loop()
    fresh = aiohttp.TCPConnector(force_close=True)
    async with aiohttp.ClientSession() as kept, aiohttp.ClientSession(connector=fresh) as probe:
        async with kept.get(f"{api.base}/healthz") as before:
            assert before.status == 200 and before.headers.get("Connection", "").lower() != "close"
        reader, writer = await begin_upload(api)

        api.terminate()
        signalled = loop.time()

        # Draining: not ready (polled — the signal's arrival has no event to await), yet alive and serving.
        while True:
            async with probe.get(f"{api.base}/readyz") as ready:
                if ready.status == 503:
                    assert (await ready.json())["status"] == "draining"
                    break
                assert ready.status == 200 and loop.time() - signalled < 5
            await asyncio.sleep(0.02)
        async with probe.get(f"{api.base}/healthz") as alive:
            assert alive.status == 200
        # The keep-alive connection opened before SIGTERM is still served, and told to close.
        async with kept.get(f"{api.base}/healthz") as during:
            assert during.status == 200 and during.headers["Connection"].lower() == "close"

        # After the drain the listener closes, while the request in flight keeps the process running.
        await until_refused(api, DRAIN_S + 5)
        assert loop.time() - signalled >= DRAIN_S
        assert api.running()

        status, answer = await finish_upload(reader, writer)
        assert status == 202, answer
        assert b"\r\nconnection: close\r\n" in answer.lower()
        created = orjson.loads(answer.split(b"\r\n\r\n", 1)[1])
        assert await store.generations.find_one({"_id": created["id"]}) is not None

    assert api.process.proc is not None
    code = await asyncio.wait_for(api.process.proc.wait(), DRAIN_S + TIMEOUT_S + RELEASE_MARGIN_S)
    assert code == 0, await api.process.output()
    assert loop.time() - signalled <= DRAIN_S + TIMEOUT_S + RELEASE_MARGIN_S
    log = await api.process.output()
    assert "draining" in log and '"in_flight":1' in log and '"msg":"stopped"' in log


async def test_a_request_outlasting_the_bound_is_cut_off_and_the_process_still_exits_0_within_it(
    api: Api,
) -> None:
    loop = asyncio.get_running_loop()
    reader, writer = await begin_upload(api)  # never finished

    api.terminate()
    signalled = loop.time()
    assert api.process.proc is not None
    code = await asyncio.wait_for(api.process.proc.wait(), DRAIN_S + TIMEOUT_S + RELEASE_MARGIN_S)
    elapsed = loop.time() - signalled

    assert code == 0, await api.process.output()
    # It waited out the drain and then the in-flight bound for the request, no longer.
    assert DRAIN_S + TIMEOUT_S <= elapsed <= DRAIN_S + TIMEOUT_S + RELEASE_MARGIN_S
    assert await asyncio.wait_for(reader.read(), 5) == b""  # the connection closed, no answer
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
