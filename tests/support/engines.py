"""The real engines the tests run against: the embedded Tansu broker and SecantusDB server (started from the
project's own install, on 127.0.0.1), or — with VIDEOGEN_TEST_ENGINES=containers and a Docker engine —
testcontainers' Kafka and MongoDB. The tests are the same either way; only the URLs change."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from videogen.engines import EngineSpec, free_port, kafka_bootstrap, mongo_url, secantus_spec, tansu_spec


@dataclass(frozen=True)
class Engines:
    kafka_bootstrap: str
    mongo_url: str
    kind: str


class EngineProcess:
    """One engine as a child process in its own process group; ``stop`` leaves nothing behind."""

    def __init__(self, spec: EngineSpec, log: Path) -> None:
        self.spec = spec
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 30.0) -> None:
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                self.spec.argv,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"{self.spec.name} exited with {self.proc.returncode}: {self.log.read_text()}"
                )
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.spec.port), 0.2):
                return
            time.sleep(0.02)
        raise RuntimeError(f"{self.spec.name} not listening on {self.spec.port} after {timeout}s")

    def stop(self, *, kill: bool = False) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL if kill else signal.SIGTERM)
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


def impatient_mongo_url(store: EngineProcess) -> str:
    """The store's URL for a client that gives up on a store that is gone in 2 s, not the driver's 30."""
    return mongo_url(store.spec.port) + "&serverSelectionTimeoutMS=2000&connectTimeoutMS=2000"


def docker_available() -> bool:
    if not shutil.which("docker"):
        return False
    try:
        return (
            subprocess.run(["docker", "info"], capture_output=True, timeout=10, check=False).returncode == 0
        )
    except (OSError, subprocess.TimeoutExpired):
        return False


@contextlib.contextmanager
def embedded_engines(workdir: Path) -> Iterator[tuple[Engines, EngineProcess]]:
    broker = EngineProcess(tansu_spec(free_port()), workdir / "broker.log")
    store = EngineProcess(secantus_spec(free_port(), workdir / "store"), workdir / "store.log")
    try:
        broker.start()
        store.start()
        yield Engines(kafka_bootstrap(broker.spec.port), mongo_url(store.spec.port), "embedded"), broker
    finally:
        broker.stop()
        store.stop()


@contextlib.contextmanager
def container_engines() -> Iterator[Engines]:
    from testcontainers.kafka import KafkaContainer  # noqa: PLC0415 — only with Docker
    from testcontainers.mongodb import MongoDbContainer  # noqa: PLC0415

    with KafkaContainer() as kafka, MongoDbContainer() as mongo:
        yield Engines(kafka.get_bootstrap_server(), mongo.get_connection_url(), "containers")
