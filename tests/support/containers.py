"""A Docker engine for the container tests, the images `make images` builds, and containers through
testcontainers.

- ``docker_engine``: uses the engine that answers; where none does and ``dockerd`` is installed (``make
  install`` does, as root), starts it and stops it afterwards.
- ``build_images``: ``make images engine-images``, the commands an operator runs.
- ``container``/``started``: testcontainers' ``DockerContainer`` on the host's network (every server the tests
  start listens on 127.0.0.1), removed when the ``started`` block ends, whatever happened in it.
  Testcontainers' reaper (Ryuk) is off: its image cannot be pulled here, and nothing needs it when every
  container is removed by the code that started it (``remove_leftovers`` sweeps the session's label at the
  end, and the session fails if it finds any).
- ``broker``/``store``/``engine_containers``: the Tansu and SecantusDB engines as containers, from the
  test-only engine images.
"""

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
from typing import Any

import docker  # type: ignore[import-untyped]
from testcontainers.core.config import testcontainers_config
from testcontainers.core.container import DockerContainer
from testcontainers.core.labels import LABEL_SESSION_ID, SESSION_ID

from tests.support.engines import docker_available
from videogen.engines import free_port, kafka_bootstrap, mongo_url

ROOT = Path(__file__).resolve().parents[2]
# A container test's time limit: the suite's five minutes per test, with room for the images' build that the
# first one waits for (1.5 to 3 minutes from nothing: no base, no wheelhouse, no layers; seconds when cached).
BUILD_AND_TEST_S = 600
testcontainers_config.ryuk_disabled = True


@contextlib.contextmanager
def docker_engine(log: Path, *, timeout: float = 60.0) -> Iterator[None]:
    """A Docker engine that answers for the duration: the running one, or ``dockerd`` started here (as root)
    and stopped on exit, with its output in ``log``."""
    if docker_available():
        yield
        return
    dockerd = shutil.which("dockerd")
    if dockerd is None or os.geteuid() != 0:
        raise RuntimeError(
            "no Docker engine answers, and none can be started here: `make install` as root installs "
            "Debian's docker.io (the container tests start dockerd themselves), or start your own engine"
        )
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [dockerd], stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
        )
    try:
        deadline = time.monotonic() + timeout
        while not docker_available():  # a daemon's start has no event to await: poll its socket
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"dockerd did not answer (exit {proc.poll()}):\n{_tail(log)}")
            time.sleep(0.2)
        yield
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _tail(log: Path, lines: int = 40) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])


@dataclass(frozen=True)
class BuiltImages:
    tag: str
    seconds: float  # what `make images engine-images` took

    def service(self, name: str) -> str:
        return f"videogen-{name}:{self.tag}"

    @property
    def broker(self) -> str:
        return f"videogen-test-tansu:{self.tag}"

    @property
    def store(self) -> str:
        return f"videogen-test-secantusdb:{self.tag}"


def build_images(tag: str, log: Path) -> BuiltImages:
    """``make images engine-images IMAGE_TAG=tag``: the four service images and the two test-engine images,
    built offline from the wheelhouse, on whatever base this machine can have."""
    started = time.monotonic()
    with log.open("ab") as out:
        # -j: the wheelhouses fill while the base is made, and the two builds overlap.
        make = ["make", "-j3", "--no-print-directory", "-C", str(ROOT)]
        result = subprocess.run(
            [*make, "images", "engine-images", f"IMAGE_TAG={tag}"],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            check=False,
            timeout=1200,
        )
    if result.returncode != 0:
        raise RuntimeError(f"make images failed ({result.returncode}):\n{_tail(log)}")
    return BuiltImages(tag, time.monotonic() - started)


def client() -> docker.DockerClient:
    return docker.from_env()


def remove_leftovers() -> list[str]:
    """Remove every container this test session created that is still there; returns their names."""
    engine = client()
    try:
        found = engine.containers.list(all=True, filters={"label": f"{LABEL_SESSION_ID}={SESSION_ID}"})
        for container in found:
            with contextlib.suppress(docker.errors.NotFound):
                container.remove(force=True)
        return [c.name for c in found]
    finally:
        engine.close()


def container(
    image: str,
    *,
    command: list[str] | None = None,
    env: dict[str, str] | None = None,
    tmpfs: dict[str, str] | None = None,
    volumes: dict[Path, str] | None = None,
    **kwargs: Any,
) -> DockerContainer:
    """A container of ``image`` on the host's network (``network_mode`` may join another's namespace
    instead); ``tmpfs`` maps a path to its mount options, ``volumes`` a host directory to the path it is
    mounted at (read and write); other ``kwargs`` go to Docker's create as they are (``entrypoint``, ``user``,
    ``read_only``...)."""
    kwargs.setdefault("network_mode", "host")
    item = DockerContainer(image, command=command, env=env).with_kwargs(**kwargs)  # type: ignore[arg-type]
    item.tmpfs.update(tmpfs or {})
    for host, path in (volumes or {}).items():
        item.with_volume_mapping(host, path, "rw")
    return item


@contextlib.contextmanager
def started(*items: DockerContainer) -> Iterator[tuple[DockerContainer, ...]]:
    """Start each container in turn; on leaving, remove every one that was created, even if a start or the
    block failed."""
    with contextlib.ExitStack() as stack:
        for item in items:
            stack.callback(remove, item)
            item.start()
        yield items


def remove(item: DockerContainer) -> None:
    """Remove the container (killing it if it runs), if it was created and is still there."""
    with contextlib.suppress(docker.errors.NotFound):
        item.stop()


def output(item: DockerContainer, lines: int = 60) -> str:
    """The container's last lines of output, for a failure's message."""
    with contextlib.suppress(Exception):
        wrapped = item.get_wrapped_container()
        return str(wrapped.logs(tail=lines).decode(errors="replace"))
    return "(no output)"


# --- the engines --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EngineContainers:
    kafka_bootstrap: str
    mongo_url: str


def broker(image: str, port: int, *, host: str = "127.0.0.1", **kwargs: Any) -> DockerContainer:
    """Tansu on ``port``, advertising ``host`` (a name the clients resolve to 127.0.0.1, in a pod)."""
    return container(
        image,
        command=[
            "broker",
            "--listener-url",
            f"tcp://127.0.0.1:{port}",
            "--advertised-listener-url",
            f"tcp://{host}:{port}",
            "--storage-engine",
            "memory://tansu/",
        ],
        **kwargs,
    )


def store(image: str, port: int, **kwargs: Any) -> DockerContainer:
    """SecantusDB on ``port``, its data in the container (gone with it)."""
    return container(
        image,
        command=[
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--storage-path",
            "/var/lib/secantus",
            "--log-level",
            "WARNING",
        ],
        **kwargs,
    )


@contextlib.contextmanager
def engine_containers(images: BuiltImages) -> Iterator[EngineContainers]:
    """The broker and the store as containers on the host's network, on free ports of 127.0.0.1."""
    broker_port, store_port = free_port(), free_port()
    the_broker, the_store = broker(images.broker, broker_port), store(images.store, store_port)
    with started(the_broker, the_store):
        wait_for_port(broker_port, the_broker)
        wait_for_port(store_port, the_store)
        yield EngineContainers(kafka_bootstrap(broker_port), mongo_url(store_port))


def wait_for_port(port: int, item: DockerContainer, timeout: float = 30.0) -> None:
    """Until something listens on 127.0.0.1:``port`` (the container's server, on the host's network)."""
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        item.reload()
        if item.status == "exited" or time.monotonic() > deadline:
            raise RuntimeError(f"{item.image} not listening on {port} ({item.status}):\n{output(item)}")
        time.sleep(0.05)


def run_to_end(item: DockerContainer, timeout: float = 120.0) -> tuple[int, str]:
    """Start ``item``, wait for it to exit, and remove it: (exit code, output)."""
    with started(item):
        code = int(item.get_wrapped_container().wait(timeout=timeout)["StatusCode"])
        return code, item.get_wrapped_container().logs().decode(errors="replace")


def python_in(image: str, code: str, *args: str) -> str:
    """What ``python -c code args...`` prints in a container of ``image`` (which must exit 0)."""
    exit_code, out = run_to_end(container(image, entrypoint=["python", "-c", code], command=list(args)))
    assert exit_code == 0, f"python in {image} exited {exit_code}:\n{out}"
    return out
