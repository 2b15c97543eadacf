"""What the built images hold, read from the images themselves: exactly the hash-locked runtime pins and the
image's own two packages, no installer, a numeric non-root user, the entrypoint's whole import graph, the port
the service listens on, and one shared layer of third-party packages under four small ones of our code."""

from __future__ import annotations

import re
from typing import Any

import orjson
import pytest

from tests.support.containers import BUILD_AND_TEST_S, BuiltImages, client, python_in
from tests.support.manifests import ROOT
from videogen_api.settings import ApiSettings
from videogen_common.settings import CommonSettings
from videogen_notifier.settings import NotifierSettings
from videogen_orchestrator.settings import OrchestratorSettings

pytestmark = [pytest.mark.containers, pytest.mark.timeout(BUILD_AND_TEST_S)]

# image -> (the distribution of its own code beside videogen-common, its settings)
TARGETS: dict[str, tuple[str, type[CommonSettings]]] = {
    "api": ("videogen-api", ApiSettings),
    "orchestrator": ("videogen-orchestrator", OrchestratorSettings),
    "notifier": ("videogen-notifier", NotifierSettings),
    "migrate": ("videogen", CommonSettings),
}
# Run in each image, once: what it holds (every distribution, at its version), who it runs as, whether an
# installer is left, and how many modules loading the console script its entrypoint names brings in (its whole
# import graph must resolve from what the image holds).
FACTS = """
import importlib.metadata as m, importlib.util as u, json, os, sys
(entrypoint,) = [e for e in m.entry_points(group="console_scripts") if e.name == sys.argv[1]]
entrypoint.load()
print(json.dumps({
    "distributions": sorted(f"{d.metadata['Name']}=={d.version}" for d in m.distributions()),
    "uid": os.getuid(),
    "gid": os.getgid(),
    "installers": [n for n in ("pip", "setuptools", "wheel") if u.find_spec(n)],
    "modules": len(sys.modules),
}))
"""


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _runtime_pins() -> set[str]:
    text = (ROOT / "requirements" / "runtime.txt").read_text()
    return {f"{_normalize(n)}=={v}" for n, v in re.findall(r"^([A-Za-z0-9][\w.-]*)==(\S+)", text, re.M)}


def _inspect(image: str) -> dict[str, object]:
    engine = client()
    try:
        attrs: dict[str, object] = engine.images.get(image).attrs
        return attrs
    finally:
        engine.close()


@pytest.fixture(scope="module")
def facts(images: BuiltImages) -> dict[str, dict[str, Any]]:
    """Each image's configuration and what FACTS found in it."""
    found = {}
    for target in TARGETS:
        image = images.service(target)
        config = _inspect(image)["Config"]
        assert isinstance(config, dict)
        (script,) = config["Entrypoint"]
        found[target] = {"config": config, **orjson.loads(python_in(image, FACTS, script))}
    return found


@pytest.mark.parametrize("target", list(TARGETS))
def test_an_image_holds_the_runtime_pins_and_its_own_two_packages_only(
    facts: dict[str, dict[str, Any]], target: str
) -> None:
    own, _ = TARGETS[target]
    pins = {f"{_normalize(d.split('==')[0])}=={d.split('==')[1]}" for d in facts[target]["distributions"]}
    ours = {p for p in pins if p.startswith("videogen")}
    assert {p.split("==")[0] for p in ours} == {"videogen-common", _normalize(own)}
    # Every third-party package at its hash-locked version, and nothing else (no development or test package).
    assert pins - ours == _runtime_pins()


@pytest.mark.parametrize("target", list(TARGETS))
def test_an_image_runs_as_a_numeric_non_root_user_without_an_installer(
    facts: dict[str, dict[str, Any]], target: str
) -> None:
    assert facts[target]["config"]["User"] == "10001:10001"
    assert (facts[target]["uid"], facts[target]["gid"]) == (10001, 10001)
    assert facts[target]["installers"] == []


@pytest.mark.parametrize("target", list(TARGETS))
def test_the_entrypoint_loads_from_what_the_image_holds(
    facts: dict[str, dict[str, Any]], target: str
) -> None:
    assert facts[target]["modules"] > 100  # the script's module and all it imports, loaded
    if target == "migrate":
        config = facts[target]["config"]
        assert config["Entrypoint"] + config["Cmd"] == ["videogen", "migrate"]


@pytest.mark.parametrize("target", ["api", "orchestrator", "notifier"])
def test_a_service_listens_on_all_interfaces_on_the_port_it_exposes(images: BuiltImages, target: str) -> None:
    _, settings = TARGETS[target]
    config = _inspect(images.service(target))["Config"]
    assert isinstance(config, dict)
    env = dict(item.split("=", 1) for item in config["Env"])
    port = settings.model_fields[f"{target}_port"].default
    assert env[f"VIDEOGEN_{target.upper()}_HOST"] == "0.0.0.0"
    assert env[f"VIDEOGEN_{target.upper()}_PORT"] == str(port)
    assert config["ExposedPorts"] == {f"{port}/tcp": {}}
    assert env["VIDEOGEN_DATA_DIR"] == "/var/lib/videogen" and env["PYTHONDONTWRITEBYTECODE"] == "1"


def test_the_four_images_share_every_layer_but_their_own_code(images: BuiltImages) -> None:
    layers = {}
    for target in TARGETS:
        attrs = _inspect(images.service(target))
        root_fs = attrs["RootFS"]
        assert isinstance(root_fs, dict)
        layers[target] = root_fs["Layers"]
    shared = {tuple(found[:-1]) for found in layers.values()}
    assert len(shared) == 1, "the images differ below their own code's layer"
    assert len({found[-1] for found in layers.values()}) == len(TARGETS)
    engine = client()
    try:
        history = engine.api.history(images.service("api"))
    finally:
        engine.close()
    sized = [h["Size"] for h in history if h["Size"]]  # newest first: the api's own code, then what it shares
    own, venv = sized[0], max(sized)
    assert own * 20 < venv
    sizes = {t: _inspect(images.service(t))["Size"] for t in TARGETS}
    print(  # noqa: T201 — the figures the report quotes
        "\nimage sizes (MB): "
        + ", ".join(f"{t} {s / 1e6:.0f}" for t, s in sizes.items() if isinstance(s, int))
        + f"; the largest shared layer {venv / 1e6:.0f} MB, the api's own code {own / 1e6:.1f} MB"
    )
