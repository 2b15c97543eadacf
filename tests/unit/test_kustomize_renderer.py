"""tests/support/kustomize.py: renders what it supports as kustomize does, and refuses everything else."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.support.kustomize import UnsupportedKustomization, config_map_hash, render

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: registry.example:5000/team/web
          args: ["--serve"]
          envFrom:
            - configMapRef:
                name: settings
          volumeMounts:
            - name: tmp
              mountPath: /tmp
        - name: sidecar
          image: sidecar:1.0
      volumes:
        - name: tmp
          emptyDir: {}
"""

BASE = """\
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - deployment.yaml
configMapGenerator:
  - name: settings
    literals:
      - A=1
      - B=2
"""


def _write(directory: Path, files: dict[str, str]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (directory / name).write_text(textwrap.dedent(text))
    return directory


def _overlay(tmp_path: Path, kustomization: str) -> Path:
    _write(tmp_path / "base", {"kustomization.yaml": BASE, "deployment.yaml": DEPLOYMENT})
    header = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - ../base\n"
    return _write(tmp_path / "overlay", {"kustomization.yaml": header + textwrap.dedent(kustomization)})


def test_config_map_hash_is_kustomizes() -> None:
    # The example in kustomize's own documentation of configMapGenerator.
    config_map = {
        "metadata": {"name": "my-java-server-env-vars"},
        "data": {"JAVA_HOME": "/opt/java/jdk", "JAVA_TOOL_OPTIONS": "-agentlib:hprof"},
    }
    assert config_map_hash(config_map) == "44k658k8gk"


def test_generated_config_map_is_merged_hashed_and_referenced(tmp_path: Path) -> None:
    overlay = _overlay(
        tmp_path,
        """
        configMapGenerator:
          - name: settings
            behavior: merge
            literals:
              - B=3
        """,
    )
    objects = render(overlay)
    (config_map,) = [o for o in objects if o["kind"] == "ConfigMap"]
    assert config_map["data"] == {"A": "1", "B": "3"}
    assert (
        config_map["metadata"]["name"]
        == f"settings-{config_map_hash({**config_map, 'metadata': {'name': 'settings'}})}"
    )
    (deployment,) = [o for o in objects if o["kind"] == "Deployment"]
    web = deployment["spec"]["template"]["spec"]["containers"][0]
    assert web["envFrom"][0]["configMapRef"]["name"] == config_map["metadata"]["name"]


def test_strategic_merge_merges_named_lists_and_keeps_the_rest(tmp_path: Path) -> None:
    overlay = _overlay(
        tmp_path,
        """
        patches:
          - target: {kind: Deployment, name: web}
            patch: |-
              apiVersion: apps/v1
              kind: Deployment
              metadata:
                name: web
              spec:
                template:
                  spec:
                    containers:
                      - name: web
                        resources: {limits: {cpu: "1"}}
                        volumeMounts:
                          - name: data
                            mountPath: /data
                    volumes:
                      - name: data
                        emptyDir: {}
        """,
    )
    (deployment,) = [o for o in render(overlay) if o["kind"] == "Deployment"]
    spec = deployment["spec"]["template"]["spec"]
    assert [c["name"] for c in spec["containers"]] == ["web", "sidecar"]
    web = spec["containers"][0]
    assert web["args"] == ["--serve"] and web["resources"] == {"limits": {"cpu": "1"}}
    assert [m["mountPath"] for m in web["volumeMounts"]] == ["/tmp", "/data"]
    assert [v["name"] for v in spec["volumes"]] == ["tmp", "data"]


def test_json6902_patch_namespace_and_images(tmp_path: Path) -> None:
    overlay = _overlay(
        tmp_path,
        """
        namespace: team
        images:
          - name: registry.example:5000/team/web
            newTag: "1.2.3"
        patches:
          - target: {group: apps, kind: Deployment, name: "w.b"}
            patch: |-
              - op: add
                path: /spec/replicas
                value: 3
        """,
    )
    objects = render(overlay)
    (deployment,) = [o for o in objects if o["kind"] == "Deployment"]
    assert deployment["spec"]["replicas"] == 3
    assert (
        deployment["spec"]["template"]["spec"]["containers"][0]["image"]
        == "registry.example:5000/team/web:1.2.3"
    )
    assert deployment["spec"]["template"]["spec"]["containers"][1]["image"] == "sidecar:1.0"
    assert {o["metadata"]["namespace"] for o in objects} == {"team"}


@pytest.mark.parametrize(
    ("kustomization", "complaint"),
    [
        ("namePrefix: x-\n", "does not implement"),
        ("replicas:\n  - name: web\n    count: 2\n", "does not implement"),
        ("images:\n  - name: nothing-uses-me\n    newTag: '1'\n", "matches no container"),
        (
            "patches:\n  - target: {kind: Deployment, name: absent}\n"
            "    patch: '[{op: remove, path: /spec}]'\n",
            "matches no object",
        ),
        (
            "patches:\n  - target: {kind: Deployment, name: web}\n"
            "    patch: '{spec: {template: {spec: {containers: [{name: web, args: [x]}]}}}}'\n",
            "no merge key",
        ),
        (
            "patches:\n  - target: {kind: Deployment, name: web}\n"
            "    patch: '{spec: {template: {spec: {containers: [{name: web, $patch: delete}]}}}}'\n",
            "directive",
        ),
        (
            "patches:\n  - target: {kind: Deployment, labelSelector: a=b}\n    patch: '[]'\n",
            "unsupported fields",
        ),
        (
            "configMapGenerator:\n  - name: settings\n    behavior: merge\n    envs: [a.env]\n",
            "unsupported fields",
        ),
    ],
)
def test_anything_unsupported_fails_loudly(tmp_path: Path, kustomization: str, complaint: str) -> None:
    with pytest.raises(UnsupportedKustomization, match=complaint):
        render(_overlay(tmp_path, kustomization))


def test_a_kind_of_unknown_scope_fails_loudly(tmp_path: Path) -> None:
    role = "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: r\nrules: []\n"
    directory = _write(
        tmp_path,
        {
            "kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
            "namespace: team\nresources:\n  - role.yaml\n",
            "role.yaml": role,
        },
    )
    with pytest.raises(UnsupportedKustomization, match="unknown scope"):
        render(directory)
