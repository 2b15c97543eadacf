"""The partition harness (tests/support/partition.py) against a small echo server on 127.0.0.1: each state of
a link — pass, black-hole, refuse — does what the tests that use it rely on, for every connection or for one
process's."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import pytest

from tests.support.partition import Link, Mode, link_to
from videogen.engines import free_port

WAIT_S = 10.0


@dataclass
class Echo:
    """Answers every byte with itself; keeps what it received and counts the connections it accepted."""

    port: int = 0
    received: bytearray = field(default_factory=bytearray)
    accepted: int = 0
    resets: int = 0
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        self.changed.set()
        try:
            while data := await reader.read(1024):
                self.received += data
                self.changed.set()
                writer.write(data)
                await writer.drain()
        except ConnectionResetError:
            self.resets += 1
            self.changed.set()
        finally:
            writer.close()

    async def wait_for(self, what: str, check: Callable[[], bool]) -> None:
        try:
            async with asyncio.timeout(WAIT_S):
                while not check():
                    self.changed.clear()
                    await self.changed.wait()
        except TimeoutError:
            raise AssertionError(f"the echo server: not true after {WAIT_S:g} s: {what}") from None


@pytest.fixture
async def echo() -> AsyncIterator[Echo]:
    echo = Echo(port=free_port())
    server = await asyncio.start_server(echo.handle, "127.0.0.1", echo.port)
    try:
        yield echo
    finally:
        server.close()
        await server.wait_closed()


@pytest.fixture
async def link(echo: Echo) -> AsyncIterator[Link]:
    async with link_to(echo.port, name="echo") as link:
        yield link


async def _open(link: Link) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection("127.0.0.1", link.port)


async def _echoed(reader: asyncio.StreamReader, expected: bytes) -> None:
    assert await asyncio.wait_for(reader.readexactly(len(expected)), WAIT_S) == expected


async def test_a_passing_link_carries_bytes_both_ways(echo: Echo, link: Link) -> None:
    reader, writer = await _open(link)
    writer.write(b"ping")
    await _echoed(reader, b"ping")
    assert echo.accepted == 1
    writer.close()


async def test_a_black_hole_holds_bytes_both_ways_without_a_reset_and_delivers_them_on_the_heal(
    echo: Echo, link: Link
) -> None:
    reader, writer = await _open(link)
    writer.write(b"before")
    await _echoed(reader, b"before")

    link.cut()
    writer.write(b"during")
    await link.until(lambda it: it.held() >= 1, WAIT_S, "the bytes sent during the cut held")
    assert bytes(echo.received) == b"before"  # held at the link, not at the peer
    # A connection made during the cut is accepted, and reaches the peer only on the heal.
    late_reader, late_writer = await _open(link)
    late_writer.write(b"new")
    await link.until(lambda it: it.held() >= 2, WAIT_S, "the new connection's bytes held")
    assert echo.accepted == 1
    # A client that gives up during the cut: what it sent, and its close, still cross on the heal.
    _, quitter = await _open(link)
    quitter.write(b"given-up")
    await link.until(lambda it: it.held() >= 3, WAIT_S, "the quitter's bytes held")
    quitter.close()
    await link.until(lambda it: it.leftover() == 1, WAIT_S, "the quitter's close seen and held")
    assert not writer.is_closing() and not late_writer.is_closing()

    link.heal()
    await _echoed(reader, b"during")
    await _echoed(late_reader, b"new")
    await echo.wait_for("the late bytes", lambda: b"given-up" in echo.received)
    assert echo.accepted == 3
    await link.until(lambda it: it.leftover() == 0 and it.held() == 0, WAIT_S, "everything delivered")
    writer.close()
    late_writer.close()


async def test_a_refused_link_resets_open_connections_and_each_new_one_until_the_heal(
    echo: Echo, link: Link
) -> None:
    reader, writer = await _open(link)
    writer.write(b"ping")
    await _echoed(reader, b"ping")

    link.refuse()
    with pytest.raises(ConnectionResetError):
        await asyncio.wait_for(reader.read(1), WAIT_S)
    await echo.wait_for("the peer's end reset", lambda: echo.resets == 1)
    new_reader, _ = await _open(link)  # accepted by the kernel, then reset
    with pytest.raises(ConnectionResetError):
        await asyncio.wait_for(new_reader.read(1), WAIT_S)
    assert echo.accepted == 1
    assert link.reset_count[None] == 2

    link.heal()
    reader, writer = await _open(link)
    writer.write(b"again")
    await _echoed(reader, b"again")
    writer.close()


CLIENT = """
import socket, sys
sock = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
print("connected", flush=True)
for line in sys.stdin:
    sock.sendall(line.encode())
    print(sock.recv(1024).decode().strip(), flush=True)
"""


async def test_a_cut_for_one_process_leaves_another_processs_connections_passing(
    echo: Echo, link: Link
) -> None:
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        CLIENT,
        str(link.port),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    assert child.stdin is not None and child.stdout is not None
    try:
        assert await asyncio.wait_for(child.stdout.readline(), WAIT_S) == b"connected\n"
        await link.name(child.pid, "child")
        assert link.open_connections("child") == 1
        reader, writer = await _open(link)  # this process's own connection

        link.cut("child")
        child.stdin.write(b"held\n")
        await link.until(lambda it: it.held("child") == 1, WAIT_S, "the child's bytes held")
        writer.write(b"mine")
        await _echoed(reader, b"mine")  # the test's own connection still passes
        assert b"held" not in echo.received

        link.heal("child")
        assert await asyncio.wait_for(child.stdout.readline(), WAIT_S) == b"held\n"
        writer.close()
    finally:
        child.kill()
        await child.wait()


async def test_a_link_keeps_when_each_party_was_cut_off_and_how(link: Link) -> None:
    link.cut("api")
    link.heal("api")
    link.refuse()
    assert [(mode, end is not None) for _, end, mode in link.outages("api")] == [
        (Mode.BLACK_HOLE, True),
        (Mode.REFUSE, False),
    ]
    assert [(mode, end is not None) for _, end, mode in link.outages("notifier")] == [(Mode.REFUSE, False)]
    link.heal()
    spans = link.outages("api")
    assert all(end is not None and start <= end for start, end, _ in spans)
    assert spans[0][1] is not None and spans[0][1] <= spans[1][0]
    # Without a party: when any party's bytes stopped.
    assert [mode for _, _, mode in link.outages()] == [Mode.BLACK_HOLE, Mode.REFUSE]
