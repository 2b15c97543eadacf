"""The container tests' session: a Docker engine (started here if none answers, and stopped after), and the
images `make images engine-images` builds, tagged as the dev overlay deploys them. Every container a test
starts is removed by the test; whatever this session left is swept at its end."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.containers import BuiltImages, build_images, docker_engine, remove_leftovers
from tests.support.kustomize import split_image
from tests.support.manifests import rendered
from tests.support.pods import Workload, workloads


@pytest.fixture(scope="session")
def dev_workloads() -> dict[str, Workload]:
    """The dev overlay's containers (api, orchestrator, notifier, migrate), which the container tests run."""
    return workloads(rendered("dev"))


@pytest.fixture(scope="session")
def docker_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with docker_engine(tmp_path_factory.mktemp("docker") / "dockerd.log"):
        try:
            yield
        finally:
            left = remove_leftovers()
            assert not left, f"containers left behind by a test: {left}"


@pytest.fixture(scope="session")
def images(
    docker_session: None, dev_workloads: dict[str, Workload], tmp_path_factory: pytest.TempPathFactory
) -> BuiltImages:
    """The images, built by `make images engine-images` with the dev overlay's tag: what it deploys is what
    the tests run."""
    (tag,) = {split_image(w.image)[1].removeprefix(":") for w in dev_workloads.values()}
    log = tmp_path_factory.mktemp("images") / "make-images.log"
    built = build_images(tag, log)
    print(f"\nmake images engine-images: {built.seconds:.1f} s")  # noqa: T201 — the build's cost, in the log
    for workload in dev_workloads.values():
        assert workload.image == built.service(workload.image_name.removeprefix("videogen-"))
    return built


@pytest.fixture
def media_dir(tmp_path: Path) -> Path:
    """A PersistentVolumeClaim's directory: written by the containers' user (uid 10001)."""
    path = tmp_path / "media"
    path.mkdir()
    path.chmod(0o777)
    return path
