"""The manifests held to the images: every container of the rendered kustomizations (base, dev and prod)
runs from the built image as the kubelet would run it — the manifest's command and args (or the image's
entrypoint), its user, read-only root, dropped capabilities and volumes, the dev overlay's environment — and
answers every probe and Prometheus' scrape on the port and path the manifest names.

Each runs in a pod of its own making (``tests.support.pods.Pod``): one network namespace, shared with the
broker and the store and used by nothing else, where the manifests' own ports (8080, 8081, 8082, 9092,
27017) and host names (``kafka``, ``mongodb``) serve. The migration Job runs first and must exit 0, as a
rollout waits for it."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from testcontainers.core.container import DockerContainer

from tests.support.containers import (
    BUILD_AND_TEST_S,
    BuiltImages,
    broker,
    client,
    output,
    run_to_end,
    started,
    store,
)
from tests.support.manifests import APPS, rendered
from tests.support.pods import Call, Pod, Workload, pod_container, workloads

pytestmark = [pytest.mark.containers, pytest.mark.timeout(BUILD_AND_TEST_S)]

# How long a call may take to answer 200: the startup probe's budget in the manifests (30 of 2 s) and more.
ANSWER_WITHIN_S = 90.0
CALLS = {"startupProbe", "livenessProbe", "readinessProbe", "scrape"}


def _plans() -> Iterator[tuple[list[str], dict[str, Workload]]]:
    """Each distinct set of containers (by what their images must hold and answer), with the kustomizations
    that render it: usually all three render the same."""
    seen: dict[tuple[object, ...], tuple[list[str], dict[str, Workload]]] = {}
    for app in APPS:
        found = workloads(rendered(app))
        key = tuple(sorted(w.surface() for w in found.values()))
        seen.setdefault(key, ([], found))[0].append(app)
    yield from seen.values()


def _host_port(address: str) -> tuple[str, int]:
    parts = urlsplit(address if "//" in address else f"//{address}")
    assert parts.hostname and parts.port, address
    return parts.hostname, parts.port


def _running(item: DockerContainer) -> bool:
    wrapped = item.get_wrapped_container()
    wrapped.reload()
    return bool(wrapped.status == "running")


def _until(condition: str, check: object, item: DockerContainer | None = None) -> None:
    """Poll ``check`` until it holds (a start has no event to await: poll, as the kubelet does)."""
    assert callable(check)
    deadline = time.monotonic() + ANSWER_WITHIN_S
    while not check():
        assert item is None or _running(item), f"exited before {condition}:\n{output(item)}"
        assert time.monotonic() < deadline, f"{condition}: not within {ANSWER_WITHIN_S} s"
        time.sleep(0.5)


def _config(image: str) -> dict[str, Any]:
    engine = client()
    try:
        config: dict[str, Any] = engine.images.get(image).attrs["Config"]
        return config
    finally:
        engine.close()


def _check_image(workload: Workload, image: str) -> None:
    """What the kubelet checks before it starts the container, and the ports the image says it listens on."""
    config = _config(image)
    if workload.run_as_non_root:  # the kubelet refuses root, and a user it cannot tell is not root
        user = workload.user or config["User"]
        assert re.fullmatch(r"[1-9]\d*(:\d+)?", user), f"{workload.container}: runAsNonRoot, user {user!r}"
    exposed = {int(port.split("/")[0]) for port in config.get("ExposedPorts") or {}}
    assert set(workload.ports.values()) <= exposed, f"{workload.container}: port not exposed by {image}"


def _check_service(pod: Pod, apps: list[str], workload: Workload, item: DockerContainer) -> None:
    assert {c.kind for c in workload.calls} >= CALLS, (
        f"{workload.container}: a probe or the scrape is missing"
    )
    for call in workload.calls:  # the startup probe first, as the kubelet runs them
        where = f"{apps} {workload.container}: {call.kind} GET {call.path} on port {call.port}"

        def answered(call: Call = call, where: str = where) -> bool:
            status = pod.get(call.port, call.path)
            # Only "no answer yet" (0) and "not ready yet" (503) are worth waiting out: anything else (a 404,
            # or the api's 401 for a path it does not serve) says the image does not serve it.
            assert status in (0, 200, 503), f"{where}: {status}, the image does not serve it\n{output(item)}"
            return status == 200

        _until(where, answered, item)


def _run(
    images: BuiltImages,
    apps: list[str],
    plan: dict[str, Workload],
    env: dict[str, dict[str, str]],
    broker_at: tuple[str, int],
    store_at: tuple[str, int],
    media_dir: Path,
) -> None:
    """The plan's containers in one pod with the engines: the Job to its end, then each Deployment's container
    through all its calls."""
    pod = Pod(images.broker, [broker_at[0], store_at[0]])
    with started(pod.holder):
        engines = (
            broker(images.broker, broker_at[1], host=broker_at[0], network_mode=pod.network_mode),
            store(images.store, store_at[1], network_mode=pod.network_mode),
        )
        with started(*engines):
            for (_, port), item in zip((broker_at, store_at), engines, strict=True):
                _until(f"an engine on {port}", lambda port=port: pod.listening(port), item)

            def image_of(workload: Workload) -> str:
                return images.service(workload.image_name.removeprefix("videogen-"))

            def container_of(workload: Workload) -> DockerContainer:
                return pod_container(
                    workload,
                    image_of(workload),
                    env=env[workload.container],
                    claims={"videogen-media": media_dir},
                    network_mode=pod.network_mode,
                )

            for workload in plan.values():
                _check_image(workload, image_of(workload))
            for job in (w for w in plan.values() if w.kind == "Job"):
                code, out = run_to_end(container_of(job))
                assert code == 0, f"{apps}: the {job.container} job exited {code}:\n{out}"
            services = [w for w in plan.values() if w.kind == "Deployment"]
            assert {w.container for w in services} == {"api", "orchestrator", "notifier"}
            items = [container_of(w) for w in services]
            with started(*items):
                for workload, item in zip(services, items, strict=True):
                    _check_service(pod, apps, workload, item)


def test_every_manifest_container_runs_from_its_image_and_answers_its_probes(
    images: BuiltImages, dev_workloads: dict[str, Workload], media_dir: Path
) -> None:
    env = {name: dict(w.env) for name, w in dev_workloads.items()}
    broker_at = _host_port(env["api"]["VIDEOGEN_KAFKA_BOOTSTRAP"])
    store_at = _host_port(env["api"]["VIDEOGEN_MONGO_URL"])
    for values in env.values():  # the Secret is made out of band: here it names the pod's store
        values["VIDEOGEN_MONGO_URL"] = (
            f"mongodb://{store_at[0]}:{store_at[1]}/?directConnection=true&retryWrites=false"
        )
    for apps, plan in _plans():
        _run(images, apps, plan, env, broker_at, store_at, media_dir)
