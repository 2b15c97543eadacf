"""Reading the rendered Kubernetes manifests: which kustomizations there are, label selectors, resource
quantities, and the environment (hence the settings) each container would start with."""

from __future__ import annotations

import copy
import functools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic_settings import BaseSettings

from tests.support.env import settings_for
from tests.support.kustomize import Resource, load_yaml_documents, pod_spec, render
from videogen_api.settings import ApiSettings
from videogen_common.settings import ENV_PREFIX, CommonSettings
from videogen_notifier.settings import NotifierSettings
from videogen_orchestrator.settings import OrchestratorSettings

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "deploy" / "k8s"
KUSTOMIZATIONS = {
    "base": K8S / "base",
    "dev": K8S / "overlays" / "dev",
    "prod": K8S / "overlays" / "prod",
    "engines": K8S / "engines",
    "monitoring": K8S / "monitoring",
}
# The ones that deploy videogen itself (engines and monitoring are optional add-ons).
APPS = ("base", "dev", "prod")
SECRET_EXAMPLES = K8S / "base" / "secret.example.yaml"

# Each container runs one program, configured by one settings class.
SETTINGS_BY_CONTAINER: dict[str, type[CommonSettings]] = {
    "api": ApiSettings,
    "orchestrator": OrchestratorSettings,
    "notifier": NotifierSettings,
    "migrate": CommonSettings,
}
SERVICES = ("api", "orchestrator", "notifier")
ALL_SETTINGS = (CommonSettings, ApiSettings, OrchestratorSettings, NotifierSettings)


@functools.cache
def _rendered(name: str) -> tuple[Resource, ...]:
    return tuple(render(KUSTOMIZATIONS[name]))


def rendered(name: str) -> list[Resource]:
    """The objects kustomization ``name`` produces (a fresh copy: tests may not disturb each other)."""
    return copy.deepcopy(list(_rendered(name)))


def objects_of(objects: list[Resource], kind: str) -> list[Resource]:
    return [o for o in objects if o["kind"] == kind]


def one(objects: list[Resource], kind: str, name: str) -> Resource:
    found = [o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name]
    assert len(found) == 1, f"expected one {kind} {name}, found {len(found)}"
    return found[0]


def config_map(objects: list[Resource]) -> dict[str, str]:
    """The data of the generated ``videogen-config`` ConfigMap."""
    (found,) = [
        o for o in objects_of(objects, "ConfigMap") if o["metadata"]["name"].startswith("videogen-config")
    ]
    data: dict[str, str] = found["data"]
    return data


def secret_examples() -> dict[str, dict[str, str]]:
    return {doc["metadata"]["name"]: doc["stringData"] for doc in load_yaml_documents(SECRET_EXAMPLES)}


def containers(obj: Resource) -> Iterator[Resource]:
    spec = pod_spec(obj)
    if spec is not None:
        yield from spec.get("initContainers", [])
        yield from spec.get("containers", [])


def workloads(objects: list[Resource]) -> Iterator[tuple[Resource, Resource]]:
    """(workload, container) for every container of every Deployment and Job."""
    for obj in objects:
        for container in containers(obj):
            yield obj, container


def container_env(objects: list[Resource], container: Resource) -> dict[str, str]:
    """The environment the container starts with (envFrom in order, then env), Secrets from the examples."""
    secrets = secret_examples()
    env: dict[str, str] = {}
    for source in container.get("envFrom", []):
        if "configMapRef" in source:
            name = source["configMapRef"]["name"]
            env.update(one(objects, "ConfigMap", name)["data"])
        else:
            env.update(secrets[source["secretRef"]["name"]])
    for var in container.get("env", []):
        env[var["name"]] = var["value"]
    return env


def settings_of(objects: list[Resource], container: Resource) -> CommonSettings:
    """The settings the container's program would build at start-up from its environment."""
    cls = SETTINGS_BY_CONTAINER[container["name"]]
    return settings_for(cls, container_env(objects, container))


def env_names(cls: type[BaseSettings]) -> set[str]:
    """The environment variables a settings class reads."""
    return {ENV_PREFIX + name.upper() for name in cls.model_fields}


def matches(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    """Whether a label selector (matchLabels and matchExpressions) selects these labels."""
    for key, value in selector.get("matchLabels", {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions", []):
        key, operator, values = expr["key"], expr["operator"], expr.get("values", [])
        ok = {
            "In": key in labels and labels[key] in values,
            "NotIn": key not in labels or labels[key] not in values,
            "Exists": key in labels,
            "DoesNotExist": key not in labels,
        }[operator]
        if not ok:
            return False
    return True


_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
_DECIMAL = {"k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}


def cpu_millicores(quantity: str | int | float) -> float:
    text = str(quantity)
    return float(text[:-1]) if text.endswith("m") else float(text) * 1000


def memory_bytes(quantity: str | int) -> float:
    text = str(quantity)
    for suffix, factor in {**_BINARY, **_DECIMAL}.items():
        if text.endswith(suffix):
            return float(text[: -len(suffix)]) * factor
    return float(text)
