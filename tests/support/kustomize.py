"""Render a kustomization offline, for the manifest tests (no kustomize binary is installed here).

It implements exactly the kustomize features ``deploy/k8s`` uses and nothing more: ``resources`` (files and
directories), ``namespace``, ``images``, ``patches`` (strategic merge for maps and the name-keyed lists below,
or JSON 6902), and ``configMapGenerator`` (literals, with kustomize's content-hash name suffix and the
rewriting of references to it). Anything else (a field, a patch directive, a list without a known merge key, a
patch or image that matches nothing) raises ``UnsupportedKustomization``, so a manifest cannot quietly rely on
a feature these tests would not render.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonpatch
import yaml  # type: ignore[import-untyped]

Resource = dict[str, Any]

KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
SUPPORTED_FIELDS = {"apiVersion", "kind", "resources", "namespace", "images", "patches", "configMapGenerator"}

# Strategic merge: lists merged element by element on this key; any other list in a patch is refused.
MERGE_KEYS = {
    "containers": "name",
    "initContainers": "name",
    "volumes": "name",
    "env": "name",
    "volumeMounts": "mountPath",
}

# Where kustomize's namespace transformer applies (it leaves cluster-scoped kinds alone).
NAMESPACED_KINDS = {
    "ConfigMap", "Secret", "ServiceAccount", "Service", "Deployment", "Job", "PodDisruptionBudget",
    "HorizontalPodAutoscaler", "NetworkPolicy", "PersistentVolumeClaim", "ScaledObject", "ServiceMonitor",
    "PrometheusRule",
    "Kafka", "KafkaNodePool", "KafkaTopic", "MongoDBCommunity",
}  # fmt: skip
CLUSTER_KINDS = {"Namespace"}
WORKLOAD_KINDS = {"Deployment", "Job"}


class UnsupportedKustomization(ValueError):
    """The kustomization uses what this renderer does not implement, or a patch or image matches nothing."""


def render(directory: Path) -> list[Resource]:
    """Every object the kustomization in ``directory`` produces, as ``kubectl kustomize`` would print them."""
    objects, generated = _build(directory.resolve())
    _apply_name_hashes(objects, generated)
    return objects


def pod_spec(obj: Resource) -> Resource | None:
    """The pod template's spec of a Deployment or Job, else None."""
    if obj["kind"] in WORKLOAD_KINDS:
        spec: Resource = obj["spec"]["template"]["spec"]
        return spec
    return None


def load_yaml_documents(path: Path) -> list[Resource]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc is not None]


# ------------------------------------------------------------------------------------------------------------


def _build(directory: Path) -> tuple[list[Resource], set[str]]:
    kustomization = _load_kustomization(directory)
    objects: list[Resource] = []
    generated: set[str] = set()  # names of generated ConfigMaps (they get a hash suffix at the end)
    for entry in kustomization.get("resources", []):
        path = (directory / entry).resolve()
        if "://" in entry or not path.exists():
            raise UnsupportedKustomization(
                f"{directory}: resource {entry!r} is not a local file or directory"
            )
        if path.is_dir():
            sub_objects, sub_generated = _build(path)
            objects.extend(sub_objects)
            generated |= sub_generated
        else:
            objects.extend(load_yaml_documents(path))
    for generator in kustomization.get("configMapGenerator", []):
        _generate_config_map(directory, generator, objects, generated)
    for patch in kustomization.get("patches", []):
        _apply_patch(directory, patch, objects)
    for image in kustomization.get("images", []):
        _apply_image(directory, image, objects)
    if "namespace" in kustomization:
        _set_namespace(directory, kustomization["namespace"], objects)
    _check_unique(directory, objects)
    return objects, generated


def _load_kustomization(directory: Path) -> Resource:
    found = [directory / name for name in KUSTOMIZATION_FILES if (directory / name).is_file()]
    if len(found) != 1:
        raise UnsupportedKustomization(f"{directory}: expected exactly one kustomization file, found {found}")
    (kustomization,) = load_yaml_documents(found[0])
    if kustomization.get("apiVersion") != "kustomize.config.k8s.io/v1beta1" or (
        kustomization.get("kind") != "Kustomization"
    ):
        raise UnsupportedKustomization(f"{found[0]}: not a kustomize.config.k8s.io/v1beta1 Kustomization")
    unknown = set(kustomization) - SUPPORTED_FIELDS
    if unknown:
        raise UnsupportedKustomization(
            f"{found[0]}: fields this renderer does not implement: {sorted(unknown)}"
        )
    return kustomization


def _only(where: str, mapping: Resource, allowed: set[str]) -> None:
    unknown = set(mapping) - allowed
    if unknown:
        raise UnsupportedKustomization(f"{where}: unsupported fields {sorted(unknown)}")


def _generate_config_map(
    directory: Path, generator: Resource, objects: list[Resource], generated: set[str]
) -> None:
    where = f"{directory}: configMapGenerator {generator.get('name')!r}"
    _only(where, generator, {"name", "behavior", "literals", "options"})
    options = generator.get("options", {})
    _only(f"{where} options", options, {"labels", "annotations"})
    data: dict[str, str] = {}
    for literal in generator.get("literals", []):
        key, sep, value = literal.partition("=")
        if not sep or not key:
            raise UnsupportedKustomization(f"{where}: literal {literal!r} is not KEY=VALUE")
        data[key] = value
    name = generator["name"]
    behavior = generator.get("behavior", "create")
    existing = [o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"] == name]
    if behavior == "create":
        if existing:
            raise UnsupportedKustomization(f"{where}: already exists (use behavior: merge or replace)")
        metadata: Resource = {"name": name}
        if options.get("labels"):
            metadata["labels"] = dict(options["labels"])
        if options.get("annotations"):
            metadata["annotations"] = dict(options["annotations"])
        objects.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": data})
        generated.add(name)
        return
    if behavior not in ("merge", "replace") or len(existing) != 1 or name not in generated:
        raise UnsupportedKustomization(
            f"{where}: behavior {behavior!r} needs exactly one generated ConfigMap"
        )
    (target,) = existing
    target["data"] = {**target.get("data", {}), **data} if behavior == "merge" else data
    for field in ("labels", "annotations"):
        if options.get(field):
            target["metadata"].setdefault(field, {}).update(options[field])


def _apply_patch(directory: Path, entry: Resource, objects: list[Resource]) -> None:
    where = f"{directory}: patch {entry.get('path') or entry.get('target')}"
    _only(where, entry, {"path", "patch", "target"})
    if ("path" in entry) == ("patch" in entry):
        raise UnsupportedKustomization(f"{where}: give exactly one of path or patch")
    text = (directory / entry["path"]).read_text() if "path" in entry else entry["patch"]
    body = yaml.safe_load(text)
    target = entry.get("target")
    if target is not None:
        _only(f"{where} target", target, {"group", "version", "kind", "name"})
        matches = [o for o in objects if _matches(o, target)]
    elif isinstance(body, dict):
        matches = [
            o
            for o in objects
            if o["kind"] == body.get("kind") and o["metadata"]["name"] == body.get("metadata", {}).get("name")
        ]
    else:
        raise UnsupportedKustomization(f"{where}: a JSON 6902 patch needs a target")
    if not matches:
        raise UnsupportedKustomization(f"{where}: matches no object")
    for obj in matches:
        if isinstance(body, list):
            patched = jsonpatch.apply_patch(obj, body)
        elif isinstance(body, dict):
            patched = _strategic_merge(obj, body, where)
            if patched["metadata"]["name"] != obj["metadata"]["name"] or patched["kind"] != obj["kind"]:
                raise UnsupportedKustomization(f"{where}: a patch may not rename or re-kind its target")
        else:
            raise UnsupportedKustomization(f"{where}: patch is neither a map nor a list of operations")
        obj.clear()
        obj.update(patched)


def _matches(obj: Resource, target: Resource) -> bool:
    group, _, version = obj["apiVersion"].rpartition("/")
    checks = {"group": group, "version": version, "kind": obj["kind"], "name": obj["metadata"]["name"]}
    # kustomize reads target names (and the other fields) as anchored regular expressions.
    return all(re.fullmatch(str(wanted), checks[field]) for field, wanted in target.items())


def _strategic_merge(original: Any, patch: Any, where: str, path: str = "") -> Any:
    if isinstance(patch, dict):
        if not isinstance(original, dict):
            return copy.deepcopy(patch)
        merged = copy.deepcopy(original)
        for key, value in patch.items():
            if key.startswith("$"):
                raise UnsupportedKustomization(
                    f"{where}: directive {key!r} at {path or '/'} is not implemented"
                )
            if value is None:
                merged.pop(key, None)
            elif isinstance(value, list):
                merged[key] = _merge_list(key, merged.get(key), value, where, f"{path}/{key}")
            else:
                merged[key] = _strategic_merge(merged.get(key), value, where, f"{path}/{key}")
        return merged
    return copy.deepcopy(patch)


def _merge_list(field: str, original: Any, patch: list[Any], where: str, path: str) -> list[Any]:
    key = MERGE_KEYS.get(field)
    if key is None or not all(isinstance(item, dict) and key in item for item in patch):
        raise UnsupportedKustomization(f"{where}: list {path} has no merge key this renderer knows")
    merged: list[Any] = copy.deepcopy(original) if isinstance(original, list) else []
    for item in patch:
        for index, current in enumerate(merged):
            if current.get(key) == item[key]:
                merged[index] = _strategic_merge(current, item, where, f"{path}[{item[key]}]")
                break
        else:
            merged.append(_strategic_merge(None, item, where, f"{path}[{item[key]}]"))
    return merged


def _containers(obj: Resource) -> Iterator[Resource]:
    spec = pod_spec(obj)
    if spec is not None:
        yield from spec.get("initContainers", [])
        yield from spec.get("containers", [])


def _apply_image(directory: Path, image: Resource, objects: list[Resource]) -> None:
    where = f"{directory}: image {image.get('name')!r}"
    _only(where, image, {"name", "newName", "newTag", "digest"})
    if "newTag" in image and "digest" in image:
        raise UnsupportedKustomization(f"{where}: give newTag or digest, not both")
    hits = 0
    for obj in objects:
        for container in _containers(obj):
            name, suffix = split_image(container["image"])
            if name != image["name"]:
                continue
            hits += 1
            name = image.get("newName", name)
            if "newTag" in image:
                suffix = f":{image['newTag']}"
            elif "digest" in image:
                suffix = f"@{image['digest']}"
            container["image"] = name + suffix
    if hits == 0:
        raise UnsupportedKustomization(f"{where}: matches no container image")


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


def _set_namespace(directory: Path, namespace: str, objects: list[Resource]) -> None:
    for obj in objects:
        kind = obj["kind"]
        if kind in CLUSTER_KINDS:
            if kind == "Namespace" and obj["metadata"]["name"] != namespace:
                raise UnsupportedKustomization(
                    f"{directory}: Namespace {obj['metadata']['name']!r} differs from namespace {namespace!r}"
                )
        elif kind in NAMESPACED_KINDS:
            obj["metadata"]["namespace"] = namespace
        else:
            raise UnsupportedKustomization(
                f"{directory}: unknown scope for kind {kind!r}; add it to the renderer"
            )


def _check_unique(directory: Path, objects: list[Resource]) -> None:
    seen: set[tuple[str, str, str, str]] = set()
    for obj in objects:
        ident = (
            obj["apiVersion"],
            obj["kind"],
            obj["metadata"].get("namespace", ""),
            obj["metadata"]["name"],
        )
        if ident in seen:
            raise UnsupportedKustomization(f"{directory}: {ident} appears twice")
        seen.add(ident)


# ------------------------------------------------------------------------------------------------------------
# configMapGenerator's name suffix, computed as kustomize does (api/hasher): the first ten hex digits of the
# SHA-256 of the JSON {"data", "kind", "name"} (keys sorted, Go's HTML escaping), with 0 1 3 a e swapped for
# g h k m t so the suffix never spells a word.


def config_map_hash(config_map: Resource) -> str:
    encoded = json.dumps(
        {"data": config_map.get("data", {}), "kind": "ConfigMap", "name": config_map["metadata"]["name"]},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    encoded = encoded.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    digest = hashlib.sha256(encoded.encode()).hexdigest()[:10]
    return digest.translate(str.maketrans("013ae", "ghkmt"))


def _apply_name_hashes(objects: list[Resource], generated: set[str]) -> None:
    renamed: dict[str, str] = {}
    for obj in objects:
        name = obj["metadata"]["name"]
        if obj["kind"] == "ConfigMap" and name in generated:
            renamed[name] = f"{name}-{config_map_hash(obj)}"
            obj["metadata"]["name"] = renamed[name]
    for obj in objects:
        spec = pod_spec(obj)
        if spec is None:
            continue
        for volume in spec.get("volumes", []):
            _rename(volume.get("configMap"), renamed)
        for container in _containers(obj):
            for source in container.get("envFrom", []):
                _rename(source.get("configMapRef"), renamed)
            for var in container.get("env", []):
                _rename(var.get("valueFrom", {}).get("configMapKeyRef"), renamed)


def _rename(ref: Resource | None, renamed: dict[str, str]) -> None:
    if ref is not None and ref.get("name") in renamed:
        ref["name"] = renamed[ref["name"]]
