"""Network partitions for tests: a TCP proxy per link (``Link``), on 127.0.0.1, in front of one peer — the
store, the broker, a provider, a webhook receiver. A process is given the proxy's port instead of the peer's,
and the test cuts and heals the link while the process runs:

- ``pass``: bytes flow both ways, as if there were no proxy;
- ``black-hole`` (``cut``): connections stay open and bytes stop in both directions, with no reset. What is
  sent meanwhile is *held*, not dropped, and delivered when the link heals, as TCP does across a short
  partition: a request a process gave up on during the cut still reaches the peer after the heal, and a
  client that closed its end meanwhile has its close delivered after its last bytes. A new connection is
  accepted (the proxy's kernel answers the handshake) but reaches the peer only on the heal;
- ``refuse``: every connection open is reset (RST, both sides), and each new one is reset as soon as it is
  accepted, until the link heals.

Several processes may share one link (the broker's: a Kafka broker advertises one address, its own, in the
metadata its clients reconnect to, so ``partitioned_broker`` starts a broker whose advertised address *is* its
proxy's, and every client's traffic goes through it). Each connection is told apart by the process it comes
from: ``Link.name(pid, party)`` names a process (its sockets are found in /proc), and ``cut``, ``refuse`` and
``heal`` take a party to act on only its connections; without one they act on every connection.

Tests await what the link saw instead of sleeping: ``Link.until(...)`` with a condition on its counts (bytes
held for a party, connections open). Each change of state is kept with its wall-clock time (``history``;
``outages`` gives the spans a party's bytes did not pass), to compare with what the processes recorded."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import struct
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from urllib.parse import urlsplit

from tests.support.engines import EngineProcess
from videogen.engines import EngineSpec, free_port, tansu_spec

CHUNK = 64 * 1024


class Mode(StrEnum):
    PASS = "pass"
    BLACK_HOLE = "black-hole"
    REFUSE = "refuse"


@dataclass(eq=False)
class _Connection:
    party: str | None
    client: asyncio.StreamWriter
    client_port: int
    gate: asyncio.Event = field(default_factory=asyncio.Event)  # set: bytes may pass
    upstream: asyncio.StreamWriter | None = None
    reset: bool = False
    held: int = 0  # chunks read and waiting for the gate
    client_gone: bool = False  # the client closed or reset its end

    def was_reset(self) -> bool:
        return self.reset


def _reset(writer: asyncio.StreamWriter | None) -> None:
    """Close with an RST, not a FIN (SO_LINGER 0)."""
    if writer is None:
        return
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


def _inode_of(local_port: int, remote_port: int) -> str | None:
    """The inode of the 127.0.0.1 socket bound to ``local_port`` and connected to ``remote_port``."""
    want_local = f"0100007F:{local_port:04X}"
    want_remote = f"0100007F:{remote_port:04X}"
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        parts = line.split()
        if parts[1] == want_local and parts[2] == want_remote:
            return parts[9]
    return None


def _owner(inode: str, pids: Iterable[int]) -> int | None:
    """Which of ``pids`` holds the socket ``inode`` open."""
    target = f"socket:[{inode}]"
    for pid in pids:
        fds = Path(f"/proc/{pid}/fd")
        with contextlib.suppress(OSError):
            for fd in fds.iterdir():
                with contextlib.suppress(OSError):
                    if os.readlink(fd) == target:
                        return pid
    return None


class Link:
    """A TCP proxy from ``127.0.0.1:port`` to ``127.0.0.1:target_port`` that can be cut, refused and
    healed, for every connection or for one party's."""

    def __init__(self, target_port: int, *, name: str = "link", port: int | None = None) -> None:
        self.label = name
        self.target_port = target_port
        self.port = port if port is not None else free_port()
        self._modes: dict[str | None, Mode] = {None: Mode.PASS}
        self._pids: dict[int, str] = {}
        self._connections: set[_Connection] = set()
        self._server: asyncio.Server | None = None
        self._handlers: set[asyncio.Task[None]] = set()
        self._changed = asyncio.Event()
        self.accepted: Counter[str | None] = Counter()  # connections accepted, by party
        self.reset_count: Counter[str | None] = Counter()  # connections reset by ``refuse``, by party
        # Every change of state: when (wall clock, UTC), for which party (None: all), to what.
        self.history: list[tuple[datetime, str | None, Mode]] = []

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def mode_of(self, party: str | None) -> Mode:
        return self._modes.get(party, self._modes[None]) if party is not None else self._modes[None]

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", self.port)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for connection in list(self._connections):
            connection.reset = True
            _reset(connection.client)
            _reset(connection.upstream)
            connection.gate.set()
        for task in list(self._handlers):
            task.cancel()
        await asyncio.gather(*self._handlers, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    # Who is who.

    async def name(self, pid: int, party: str) -> None:
        """Tell the connections of process ``pid`` apart as ``party``: those open now and every later one."""
        self._pids[pid] = party
        for connection in [c for c in self._connections if c.party is None]:
            connection.party = await self._party_of(connection.client_port)
            self._apply(connection)

    async def _party_of(self, client_port: int) -> str | None:
        if not self._pids:
            return None
        pids = dict(self._pids)

        def lookup() -> str | None:
            inode = _inode_of(client_port, self.port)
            owner = _owner(inode, pids) if inode is not None else None
            return pids[owner] if owner is not None else None

        return await asyncio.to_thread(lookup)

    # The three states.

    def cut(self, party: str | None = None) -> None:
        """Black-hole: bytes stop both ways and are held; connections stay open."""
        self._set(Mode.BLACK_HOLE, party)

    def refuse(self, party: str | None = None) -> None:
        """Reset every connection open and each new one."""
        self._set(Mode.REFUSE, party)

    def heal(self, party: str | None = None) -> None:
        """Let bytes pass again: what was held goes on its way."""
        self._set(Mode.PASS, party)

    def _set(self, mode: Mode, party: str | None) -> None:
        self.history.append((datetime.now(UTC), party, mode))
        if party is None:
            self._modes = {None: mode}
        else:
            self._modes[party] = mode
        for connection in list(self._connections):
            self._apply(connection)
        self._notify()

    def _apply(self, connection: _Connection) -> None:
        mode = self.mode_of(connection.party)
        if mode is Mode.PASS:
            connection.gate.set()
        elif mode is Mode.BLACK_HOLE:
            connection.gate.clear()
        elif not connection.reset:
            connection.reset = True
            self.reset_count[connection.party] += 1
            _reset(connection.client)
            _reset(connection.upstream)
            connection.gate.set()  # let its pumps see the reset and end

    # What the link saw, to await.

    def held(self, party: str | None = None) -> int:
        """Chunks of bytes held now (read from one side, not yet passed on), of ``party``'s connections or
        of all."""
        return sum(c.held for c in self._connections if party is None or c.party == party)

    def outages(self, party: str | None = None) -> list[tuple[datetime, datetime | None, Mode]]:
        """The spans during which ``party``'s bytes (any party's, for None) did not pass: from a cut or a
        refusal that applied to it to the heal that ended it (None: not healed yet), with the mode."""
        spans: list[tuple[datetime, datetime | None, Mode]] = []
        current: tuple[datetime, Mode] | None = None
        for at, whom, mode in self.history:
            if whom is not None and party is not None and whom != party:
                continue
            if current is not None and mode is not current[1]:
                spans.append((current[0], at, current[1]))
                current = None
            if mode is not Mode.PASS and current is None:
                current = (at, mode)
        if current is not None:
            spans.append((current[0], None, current[1]))
        return spans

    def open_connections(self, party: str | None = None) -> int:
        return sum(1 for c in self._connections if party is None or c.party == party)

    def leftover(self) -> int:
        """Connections whose client has gone but whose held bytes or close have not reached the peer yet."""
        return sum(1 for c in self._connections if c.client_gone)

    async def until(self, condition: Callable[[Link], bool], timeout: float, what: str) -> None:
        """Return once ``condition(self)`` holds (checked at each change the link sees); an
        ``AssertionError`` naming ``what`` after ``timeout`` seconds."""
        try:
            async with asyncio.timeout(timeout):
                while not condition(self):
                    self._changed.clear()
                    await self._changed.wait()
        except TimeoutError:
            raise AssertionError(f"{self.label}: not true after {timeout:g} s: {what}") from None

    def _notify(self) -> None:
        self._changed.set()

    # The proxy.

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        try:
            await self._serve(reader, writer)
        except asyncio.CancelledError:
            _reset(writer)  # the link is stopping
        finally:
            self._handlers.discard(task)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        client_port = int(writer.get_extra_info("peername")[1])
        party = await self._party_of(client_port)
        self.accepted[party] += 1
        if self.mode_of(party) is Mode.REFUSE:
            self.reset_count[party] += 1
            _reset(writer)
            self._notify()
            return
        connection = _Connection(party, writer, client_port)
        self._connections.add(connection)
        self._apply(connection)
        self._notify()
        # The client's bytes are read (and held) at once; the peer is connected to only once the link passes.
        upstream: asyncio.Future[asyncio.StreamWriter] = asyncio.get_running_loop().create_future()
        to_peer = asyncio.ensure_future(self._pump(connection, reader, upstream, from_client=True))
        try:
            await connection.gate.wait()
            if connection.reset:
                return
            try:
                up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
            except OSError:
                _reset(writer)
                return
            connection.upstream = up_writer
            if connection.was_reset():  # refused while connecting
                _reset(up_writer)
                return
            upstream.set_result(up_writer)
            await self._pump(connection, up_reader, writer, from_client=False)
            await to_peer
        finally:
            to_peer.cancel()
            await asyncio.gather(to_peer, return_exceptions=True)
            self._connections.discard(connection)
            for end in (writer, connection.upstream):
                if end is not None and not end.is_closing():
                    end.close()
            self._notify()

    async def _pump(
        self,
        connection: _Connection,
        source: asyncio.StreamReader,
        sink: asyncio.StreamWriter | asyncio.Future[asyncio.StreamWriter],
        *,
        from_client: bool,
    ) -> None:
        """Copy ``source`` to ``sink``: what ``source`` sends is read at once, and each chunk (and the close,
        or a reset) waits at the gate while the link is cut."""
        queue: asyncio.Queue[bytes | None] = asyncio.Queue()  # None: a reset

        async def read() -> None:
            while True:
                data: bytes | None
                try:
                    data = await source.read(CHUNK)
                except OSError:  # a reset: it too crosses only when the link passes
                    data = None
                if from_client and not data:
                    connection.client_gone = True
                connection.held += 1
                queue.put_nowait(data)
                self._notify()
                if not data:
                    return

        reading = asyncio.ensure_future(read())
        try:
            while True:
                data = await queue.get()
                await connection.gate.wait()
                connection.held -= 1
                self._notify()
                if connection.reset:
                    return
                out = sink if isinstance(sink, asyncio.StreamWriter) else await sink
                if data is None:
                    _reset(out)
                    return
                if not data:
                    if out.can_write_eof():
                        out.write_eof()
                    return
                out.write(data)
                await out.drain()
        except OSError:
            return
        finally:
            reading.cancel()
            await asyncio.gather(reading, return_exceptions=True)


@asynccontextmanager
async def link_to(target_port: int, *, name: str = "link") -> AsyncIterator[Link]:
    """A started ``Link`` in front of ``target_port``, stopped (every connection through it reset) on exit."""
    link = Link(target_port, name=name)
    await link.start()
    try:
        yield link
    finally:
        await link.stop()


def advertised_broker_spec(port: int, advertised_port: int) -> EngineSpec:
    """Tansu listening on ``port`` and naming ``advertised_port`` (its proxy's) in the metadata it answers."""
    spec = tansu_spec(port)
    argv = list(spec.argv)
    argv[argv.index("--advertised-listener-url") + 1] = f"tcp://127.0.0.1:{advertised_port}"
    return EngineSpec(spec.name, argv, port)


@asynccontextmanager
async def partitioned_broker(workdir: Path) -> AsyncIterator[Link]:
    """A broker of the test's own whose only address its clients know is its ``Link``'s: bootstrap with
    ``link.address``. Without that, a client bootstrapping through a proxy would be handed the broker's own
    port in the metadata and reconnect there, past the proxy."""
    workdir.mkdir(parents=True, exist_ok=True)
    async with link_to(free_port(), name="broker") as link:
        # In a thread: finding the broker's binary looks at files.
        spec = await asyncio.to_thread(advertised_broker_spec, link.target_port, link.port)
        broker = EngineProcess(spec, workdir / "broker.log")
        await asyncio.to_thread(broker.start)
        try:
            yield link
        finally:
            await link.stop()  # first: a client still connected must not hold the broker's stop up
            await asyncio.to_thread(broker.stop)


def port_of(url: str) -> int:
    """The port a ``mongodb://`` URL or a ``host:port`` bootstrap names."""
    netloc = urlsplit(url).netloc if "//" in url else url
    return int(netloc.rsplit(":", 1)[1])


def through(link: Link, url: str) -> str:
    """``url`` (a ``mongodb://`` URL or a ``host:port``) with the link's address in place of the peer's."""
    return url.replace(f"127.0.0.1:{link.target_port}", link.address, 1)
