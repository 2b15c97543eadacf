"""The rendered manifests' containers as Docker runs them.

``workloads`` reads each container of a rendered Deployment or Job the way the kubelet would start it:
image, command and args, environment (envFrom then env; the Secrets from the committed examples), security
context and volumes; and what is called on it: its ports, its startup/liveness/readiness probes and its scrape
target. ``pod_container`` turns one into a testcontainers container: command → entrypoint and args → command
(as Kubernetes overrides an image's ENTRYPOINT and CMD), runAsUser/runAsGroup → user,
readOnlyRootFilesystem → read_only, dropped capabilities, allowPrivilegeEscalation: false →
no-new-privileges, an emptyDir → a tmpfs of its size limit, a PersistentVolumeClaim → a directory of the
host that every container claiming it shares. ``Pod`` gives containers one network namespace of their own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from testcontainers.core.container import DockerContainer

from tests.support.containers import container
from tests.support.kustomize import Resource, pod_spec, split_image
from tests.support.manifests import container_env, containers

PROBES = ("startupProbe", "livenessProbe", "readinessProbe")


@dataclass(frozen=True)
class Call:
    """An HTTP GET the cluster makes to a container: a probe, or Prometheus' scrape."""

    kind: str  # startupProbe, livenessProbe, readinessProbe or scrape
    path: str
    port: int


@dataclass(frozen=True)
class Mount:
    path: str
    source: str  # emptyDir or persistentVolumeClaim
    size: str | None = None  # an emptyDir's sizeLimit
    claim: str | None = None


@dataclass(frozen=True)
class Workload:
    kind: str  # Deployment or Job
    container: str  # the container's name: api, orchestrator, notifier, migrate
    image: str  # as the manifest names it
    command: tuple[str, ...] | None
    args: tuple[str, ...] | None
    ports: dict[str, int]
    calls: tuple[Call, ...]
    env: dict[str, str] = field(repr=False)
    user: str | None  # uid:gid
    fs_group: int | None
    run_as_non_root: bool
    read_only: bool
    cap_drop: tuple[str, ...]
    no_new_privileges: bool
    mounts: tuple[Mount, ...]

    @property
    def image_name(self) -> str:
        return split_image(self.image)[0].rsplit("/", 1)[-1]

    def surface(self) -> tuple[Any, ...]:
        """What the image must hold and answer: its name, the command, the ports and the calls."""
        return (
            self.container,
            self.image_name,
            self.command,
            self.args,
            tuple(sorted(self.ports.items())),
            self.calls,
        )

    def call(self, kind: str) -> Call:
        (found,) = [c for c in self.calls if c.kind == kind]
        return found


def workloads(objects: list[Resource]) -> dict[str, Workload]:
    """Every container of the rendered Deployments and Jobs, by container name."""
    found: dict[str, Workload] = {}
    for obj in objects:
        spec = pod_spec(obj)
        if spec is None:
            continue
        annotations = obj["spec"]["template"]["metadata"].get("annotations", {})
        for item in containers(obj):
            assert item["name"] not in found, f"two containers named {item['name']}"
            found[item["name"]] = _workload(objects, obj, spec, annotations, item)
    return found


def _workload(
    objects: list[Resource], obj: Resource, spec: Resource, annotations: dict[str, str], item: Resource
) -> Workload:
    ports = {p.get("name", str(p["containerPort"])): int(p["containerPort"]) for p in item.get("ports", [])}

    def port_of(value: str | int) -> int:
        return ports[value] if isinstance(value, str) else int(value)

    calls = [
        Call(kind, item[kind]["httpGet"]["path"], port_of(item[kind]["httpGet"]["port"]))
        for kind in PROBES
        if kind in item
    ]
    if annotations.get("prometheus.io/scrape") == "true":
        calls.append(
            Call("scrape", annotations["prometheus.io/path"], int(annotations["prometheus.io/port"]))
        )
    pod_security = spec.get("securityContext", {})
    security = {**pod_security, **item.get("securityContext", {})}
    user = security.get("runAsUser")
    group = security.get("runAsGroup")
    volumes = {v["name"]: v for v in spec.get("volumes", [])}
    return Workload(
        kind=obj["kind"],
        container=item["name"],
        image=item["image"],
        command=tuple(item["command"]) if "command" in item else None,
        args=tuple(item["args"]) if "args" in item else None,
        ports=ports,
        calls=tuple(calls),
        env=container_env(objects, item),
        user=None if user is None else f"{user}:{group if group is not None else user}",
        fs_group=pod_security.get("fsGroup"),
        run_as_non_root=bool(security.get("runAsNonRoot")),
        read_only=bool(security.get("readOnlyRootFilesystem")),
        cap_drop=tuple(security.get("capabilities", {}).get("drop", [])),
        no_new_privileges=security.get("allowPrivilegeEscalation") is False,
        mounts=tuple(_mount(m["mountPath"], volumes[m["name"]]) for m in item.get("volumeMounts", [])),
    )


def _mount(path: str, volume: Resource) -> Mount:
    if "emptyDir" in volume:
        return Mount(path, "emptyDir", size=volume["emptyDir"].get("sizeLimit"))
    if "persistentVolumeClaim" in volume:
        return Mount(path, "persistentVolumeClaim", claim=volume["persistentVolumeClaim"]["claimName"])
    raise NotImplementedError(
        f"volume {volume['name']}: only emptyDir and persistentVolumeClaim are run here"
    )


def _tmpfs_size(quantity: str) -> str:
    """A Kubernetes quantity (64Mi, 1Gi) as tmpfs' size option (64m, 1g)."""
    match = re.fullmatch(r"(\d+)([KMG])i", quantity)
    assert match, f"size limit {quantity}: not understood"
    return f"{match.group(1)}{match.group(2).lower()}"


def pod_container(
    workload: Workload,
    image: str,
    *,
    env: dict[str, str],
    claims: dict[str, Path],
    network_mode: str = "host",
    hostname: str | None = None,
) -> DockerContainer:
    """``workload`` as a container of ``image`` with environment ``env``, each claimed volume at its
    directory in ``claims``. Give replicas on the host's network a ``hostname`` each, as a pod has its own
    (its name): the orchestrator tells its leases from another instance's by host name and pid."""
    kwargs: dict[str, Any] = {}
    if hostname is not None:
        kwargs["hostname"] = hostname
    if workload.command is not None:  # Kubernetes' command replaces the ENTRYPOINT, and the CMD goes with it
        kwargs["entrypoint"] = list(workload.command)
    if workload.user is not None:
        kwargs["user"] = workload.user
    tmpfs, volumes = {}, {}
    for mount in workload.mounts:
        if mount.source == "emptyDir":
            # Writable by the pod's user, as an emptyDir is. (Docker gives a tmpfs the mode of the image's
            # directory it covers, so a mode option would not do: the owner does.)
            uid, _, gid = (workload.user or "0:0").partition(":")
            owner = f"uid={uid},gid={workload.fs_group if workload.fs_group is not None else gid}"
            size = f",size={_tmpfs_size(mount.size)}" if mount.size else ""
            tmpfs[mount.path] = owner + size
        else:
            assert mount.claim is not None
            volumes[claims[mount.claim]] = mount.path
    return container(
        image,
        command=list(workload.args) if workload.args is not None else ([] if workload.command else None),
        env=env,
        tmpfs=tmpfs,
        volumes=volumes,
        network_mode=network_mode,
        read_only=workload.read_only,
        cap_drop=list(workload.cap_drop),
        security_opt=["no-new-privileges"] if workload.no_new_privileges else [],
        **kwargs,
    )


# Run in the pod's own namespace by its first container: the status an HTTP GET gets (0: no answer), or
# whether something listens on a port.
_GET = """
import sys, urllib.error, urllib.request
try:
    print(urllib.request.urlopen(sys.argv[1], timeout=3).status)
except urllib.error.HTTPError as error:
    print(error.code)
except OSError:
    print(0)
"""
_LISTENING = """
import socket, sys
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()
    print(1)
except OSError:
    print(0)
"""


class Pod:
    """Containers sharing one network namespace that only they use, as a Kubernetes pod's containers do:
    the first (``sleep``, from ``image``) holds it, with no interface but its loopback; ``hosts`` resolve to
    127.0.0.1 there. So the manifests' own ports and host names serve, and nothing outside can reach them."""

    def __init__(self, image: str, hosts: list[str]) -> None:
        self.holder = container(
            image,
            entrypoint=["sleep", "infinity"],
            network_mode="none",
            extra_hosts=dict.fromkeys(hosts, "127.0.0.1"),
        )

    @property
    def network_mode(self) -> str:
        return f"container:{self.holder.get_container_id()}"

    def _python(self, code: str, *args: str) -> str:
        result = self.holder.exec(["python3", "-c", code, *args])
        assert result.exit_code == 0, result.output
        return result.output.decode().strip()

    def get(self, port: int, path: str) -> int:
        """The status of GET http://127.0.0.1:port/path in the pod, as the kubelet's probe would see it."""
        return int(self._python(_GET, f"http://127.0.0.1:{port}{path}"))

    def listening(self, port: int) -> bool:
        return self._python(_LISTENING, str(port)) == "1"
