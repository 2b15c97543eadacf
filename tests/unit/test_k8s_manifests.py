"""deploy/k8s: every kustomization renders, every object validates against the Kubernetes schemas (offline,
strict), and the invariants the services rely on hold: probes on the ports the services listen on, limits,
non-root and read-only, a PodDisruptionBudget and ServiceAccount per Deployment, autoscalers within the topic
partitions, network policy, and a configuration every service accepts."""

from __future__ import annotations

import copy
import ipaddress
import os
from typing import Any

import kubernetes_validate  # type: ignore[import-untyped]
import pytest

from tests.support.kustomize import Resource, pod_spec, split_image
from tests.support.manifests import (
    ALL_SETTINGS,
    APPS,
    KUSTOMIZATIONS,
    SERVICES,
    SETTINGS_BY_CONTAINER,
    config_map,
    container_env,
    containers,
    cpu_millicores,
    env_names,
    matches,
    memory_bytes,
    objects_of,
    one,
    rendered,
    secret_examples,
    settings_of,
    workloads,
)
from videogen_api.settings import ApiSettings
from videogen_common.topics import Topics
from videogen_notifier.settings import NotifierSettings
from videogen_orchestrator.settings import OrchestratorSettings

# The newest Kubernetes whose schemas kubernetes-validate ships.
KUBERNETES_VERSION = "1.37.0"
TOPIC_OF = {"orchestrator": "requested", "notifier": "events"}
GROUP_OF = {"orchestrator": "orchestrator_group", "notifier": "notifier_group"}
PORT_OF = {"api": "api_port", "orchestrator": "orchestrator_port", "notifier": "notifier_port"}
HOST_OF = {"api": "api_host", "orchestrator": "orchestrator_host", "notifier": "notifier_host"}
# Never reachable from the notifier (webhooks) nor the orchestrator (provider links): the internal ranges.
PRIVATE = [
    ipaddress.ip_network(n)
    for n in (
        "10.0.0.0/8",
        "172.16.0.0/12",
        "192.168.0.0/16",
        "100.64.0.0/10",
        "169.254.0.0/16",
        "127.0.0.0/8",
        "fc00::/7",
        "fe80::/10",
        "::1/128",
    )
]
SHUTDOWN_MARGIN_SECONDS = 5


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("VIDEOGEN_"):
            monkeypatch.delenv(name)


def _deployments(name: str) -> dict[str, Resource]:
    """component name -> Deployment."""
    return {
        d["metadata"]["labels"]["app.kubernetes.io/component"]: d
        for d in objects_of(rendered(name), "Deployment")
    }


# --- schemas ------------------------------------------------------------------------------------------------


def _require(obj: Resource, *paths: str) -> None:
    for path in paths:
        node: Any = obj
        for part in path.split("."):
            assert isinstance(node, dict), f"{obj['kind']} {obj['metadata']['name']}: {path} missing"
            assert part in node, f"{obj['kind']} {obj['metadata']['name']}: {path} missing"
            node = node[part]


def _check_scaled_object(obj: Resource) -> None:
    _require(obj, "spec.scaleTargetRef.name", "spec.triggers", "spec.minReplicaCount", "spec.maxReplicaCount")
    for trigger in obj["spec"]["triggers"]:
        assert trigger["type"] in ("kafka", "cpu")
        assert all(isinstance(v, str) for v in trigger["metadata"].values()), (
            "KEDA metadata values are strings"
        )
        if trigger["type"] == "kafka":
            meta = trigger["metadata"]
            assert "bootstrapServers" in meta or "bootstrapServersFromEnv" in meta
            _require(trigger, "metadata.consumerGroup", "metadata.topic", "metadata.lagThreshold")
            assert int(meta["lagThreshold"]) > 0
        else:
            assert trigger["metricType"] == "Utilization"
            assert 0 < int(trigger["metadata"]["value"]) <= 100


def _check_strimzi(obj: Resource) -> None:
    assert obj["apiVersion"] == "kafka.strimzi.io/v1"
    if obj["kind"] == "Kafka":
        _require(obj, "spec.kafka.listeners", "spec.entityOperator.topicOperator")
        for listener in obj["spec"]["kafka"]["listeners"]:
            _require(listener, "name", "port", "type", "tls")
    else:
        assert obj["metadata"]["labels"]["strimzi.io/cluster"]
        if obj["kind"] == "KafkaNodePool":
            _require(obj, "spec.replicas", "spec.roles", "spec.storage.type")
            assert set(obj["spec"]["roles"]) <= {"controller", "broker"}
        else:
            _require(obj, "spec.partitions", "spec.replicas", "spec.topicName")


def _check_mongodb(obj: Resource) -> None:
    _require(
        obj, "spec.members", "spec.type", "spec.version", "spec.security.authentication.modes", "spec.users"
    )
    assert obj["spec"]["type"] == "ReplicaSet"
    for user in obj["spec"]["users"]:
        _require(user, "name", "passwordSecretRef.name", "roles", "scramCredentialsSecretName")


def _check_service_monitor(obj: Resource) -> None:
    _require(obj, "spec.selector", "spec.endpoints")
    for endpoint in obj["spec"]["endpoints"]:
        _require(endpoint, "port", "path")


def _check_prometheus_rule(obj: Resource) -> None:
    _require(obj, "spec.groups")
    for group in obj["spec"]["groups"]:
        _require(group, "name", "rules")
        for rule in group["rules"]:
            _require(rule, "expr")


# Kinds kubernetes-validate has no schema for (custom resources): the fields their operators require.
CUSTOM_RESOURCES = {
    ("keda.sh/v1alpha1", "ScaledObject"): _check_scaled_object,
    ("kafka.strimzi.io/v1", "Kafka"): _check_strimzi,
    ("kafka.strimzi.io/v1", "KafkaNodePool"): _check_strimzi,
    ("kafka.strimzi.io/v1", "KafkaTopic"): _check_strimzi,
    ("mongodbcommunity.mongodb.com/v1", "MongoDBCommunity"): _check_mongodb,
    ("monitoring.coreos.com/v1", "ServiceMonitor"): _check_service_monitor,
    ("monitoring.coreos.com/v1", "PrometheusRule"): _check_prometheus_rule,
}


@pytest.mark.parametrize("name", list(KUSTOMIZATIONS))
def test_every_object_is_valid_for_kubernetes(name: str) -> None:
    objects = rendered(name)
    assert objects
    for obj in objects:
        check = CUSTOM_RESOURCES.get((obj["apiVersion"], obj["kind"]))
        if check is not None:
            check(obj)
            continue
        try:
            kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)
        except kubernetes_validate.ValidationError as exc:
            pytest.fail(f"{name}: {obj['kind']} {obj['metadata']['name']}: {exc.message} at {list(exc.path)}")


def test_strict_validation_rejects_a_misspelled_field() -> None:
    api = copy.deepcopy(_deployments("prod")["api"])
    container = api["spec"]["template"]["spec"]["containers"][0]
    container["livenesProbe"] = container.pop("livenessProbe")
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(api, KUBERNETES_VERSION, strict=True)


# --- pods ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", APPS)
def test_every_service_has_probes_on_the_port_it_listens_on(name: str) -> None:
    objects = rendered(name)
    deployments = _deployments(name)
    assert set(deployments) == set(SERVICES)
    for service, deployment in deployments.items():
        (container,) = containers(deployment)
        settings = settings_of(objects, container)
        ports = {p["name"]: p["containerPort"] for p in container["ports"]}
        assert list(ports.values()) == [getattr(settings, PORT_OF[service])], service
        assert getattr(settings, HOST_OF[service]) == "0.0.0.0", f"{service} must listen on all interfaces"
        for probe, path in (
            ("startupProbe", "/healthz"),
            ("livenessProbe", "/healthz"),
            ("readinessProbe", "/readyz"),
        ):
            get = container[probe]["httpGet"]
            assert get["path"] == path, (service, probe)
            assert get["port"] in ports or get["port"] in ports.values(), (service, probe)
        # A probe must outlast the service's own bound on each readiness check (2 s).
        assert container["readinessProbe"]["timeoutSeconds"] > 2


@pytest.mark.parametrize("name", APPS)
def test_every_container_has_requests_and_limits(name: str) -> None:
    for workload, container in workloads(rendered(name)):
        resources = container["resources"]
        where = f"{workload['metadata']['name']}/{container['name']}"
        for kind, parse in (("cpu", cpu_millicores), ("memory", memory_bytes)):
            request, limit = resources["requests"][kind], resources["limits"][kind]
            assert 0 < parse(request) <= parse(limit), (where, kind)


@pytest.mark.parametrize("name", APPS)
def test_every_pod_runs_non_root_with_a_read_only_root(name: str) -> None:
    for workload, container in workloads(rendered(name)):
        spec = pod_spec(workload)
        assert spec is not None
        where = f"{workload['metadata']['name']}/{container['name']}"
        assert spec["automountServiceAccountToken"] is False, where
        pod = spec["securityContext"]
        assert pod["runAsNonRoot"] is True and pod["runAsUser"] > 0, where
        assert pod["seccompProfile"]["type"] == "RuntimeDefault", where
        ctx = container["securityContext"]
        assert ctx["runAsNonRoot"] is True, where
        assert ctx["readOnlyRootFilesystem"] is True, where
        assert ctx["allowPrivilegeEscalation"] is False, where
        assert ctx["capabilities"]["drop"] == ["ALL"] and "add" not in ctx["capabilities"], where
        assert ctx.get("privileged", False) is False, where


@pytest.mark.parametrize("name", APPS)
def test_every_writable_path_is_a_volume(name: str) -> None:
    """The root filesystem is read-only: /tmp and VIDEOGEN_DATA_DIR (faust's datadir, local media) are
    volumes, and every mount names a volume of the pod."""
    objects = rendered(name)
    for workload, container in workloads(objects):
        spec = pod_spec(workload)
        assert spec is not None
        volumes = {v["name"]: v for v in spec["volumes"]}
        mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
        assert set(mounts.values()) <= set(volumes), workload["metadata"]["name"]
        assert set(volumes) <= set(mounts.values()), f"{workload['metadata']['name']}: unused volume"
        settings = settings_of(objects, container)
        assert "/tmp" in mounts
        assert str(settings.data_dir) in mounts, workload["metadata"]["name"]


@pytest.mark.parametrize("name", APPS)
def test_local_media_is_one_volume_shared_by_the_api_and_the_orchestrator(name: str) -> None:
    objects = rendered(name)
    deployments = _deployments(name)
    claims = []
    for service in ("api", "orchestrator"):
        deployment = deployments[service]
        (container,) = containers(deployment)
        settings = settings_of(objects, container)
        mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
        volumes = {v["name"]: v for v in deployment["spec"]["template"]["spec"]["volumes"]}
        if settings.media_backend == "s3":
            assert str(settings.media_dir) not in mounts, f"{name}/{service}: media is in S3, not on a volume"
            continue
        volume = volumes[mounts[str(settings.media_dir)]]
        claims.append(volume["persistentVolumeClaim"]["claimName"])
    assert len(set(claims)) <= 1
    for claim in claims:
        one(objects, "PersistentVolumeClaim", claim)


@pytest.mark.parametrize("name", APPS)
def test_the_grace_period_covers_the_graceful_shutdown(name: str) -> None:
    objects = rendered(name)
    for service, deployment in _deployments(name).items():
        (container,) = containers(deployment)
        settings = settings_of(objects, container)
        assert isinstance(settings, ApiSettings | OrchestratorSettings | NotifierSettings)
        drain = settings.shutdown_drain_seconds if isinstance(settings, ApiSettings) else 0.0
        needed = settings.shutdown_timeout_seconds + drain
        grace = deployment["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
        assert grace >= needed + SHUTDOWN_MARGIN_SECONDS, service
        assert "lifecycle" not in container, f"{service}: the service drains itself on SIGTERM"


# --- settings -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", APPS)
def test_every_configured_variable_is_a_setting(name: str) -> None:
    """The services ignore unknown variables, so a typo in a ConfigMap key, an env or a Secret fails here."""
    objects = rendered(name)
    known = set().union(*(env_names(cls) for cls in ALL_SETTINGS))
    assert set(config_map(objects)) <= known, set(config_map(objects)) - known
    for _, container in workloads(objects):
        own = env_names(SETTINGS_BY_CONTAINER[container["name"]])
        assert {var["name"] for var in container.get("env", [])} <= own, container["name"]
    for secret, data in secret_examples().items():
        assert set(data) <= known, (secret, set(data) - known)


@pytest.mark.parametrize("name", APPS)
def test_every_container_starts_with_valid_settings(name: str) -> None:
    objects = rendered(name)
    for _, container in workloads(objects):
        settings = settings_of(objects, container)
        assert settings.log_format == "json", container["name"]


def test_secret_examples_are_not_applied() -> None:
    """The Secrets are created out of band; no kustomization ships one (with example values or any)."""
    for name in APPS:
        assert not objects_of(rendered(name), "Secret"), name


@pytest.mark.parametrize("name", APPS)
def test_provider_keys_reach_only_the_orchestrator(name: str) -> None:
    objects = rendered(name)
    provider_keys = {
        f"VIDEOGEN_{field.upper()}" for field in ("runway_api_key", "luma_api_key", "fal_api_key")
    }
    assert provider_keys <= env_names(OrchestratorSettings)
    assert set(secret_examples()["videogen-providers"]) == provider_keys
    for _, container in workloads(objects):
        env = container_env(objects, container)
        reaches = provider_keys & set(env)
        assert not reaches or container["name"] == "orchestrator", container["name"]
    assert not provider_keys & set(config_map(objects))


def test_prod_uses_s3_media_https_webhooks_and_pinned_images() -> None:
    objects = rendered("prod")
    for workload, container in workloads(objects):
        settings = settings_of(objects, container)
        assert settings.media_backend == "s3"
        assert settings.public_base_url.startswith("https://")
        if isinstance(settings, ApiSettings):
            assert settings.webhook_allow_http is False
        if isinstance(settings, NotifierSettings):
            assert settings.webhook_networks == []
        _, tag = split_image(container["image"])
        pinned = tag.startswith("@sha256:") or (tag.startswith(":") and tag[1:] not in ("latest", "dev"))
        assert pinned, f"{workload['metadata']['name']}: {container['image']} is not pinned"


def test_dev_images_are_the_locally_built_ones() -> None:
    for _, container in workloads(rendered("dev")):
        assert container["image"].endswith(":dev")


@pytest.mark.parametrize("name", ["dev", "prod"])
def test_overlays_run_in_a_namespace_that_enforces_restricted_pods(name: str) -> None:
    objects = rendered(name)
    (namespace,) = objects_of(objects, "Namespace")
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    for obj in objects:
        if obj["kind"] != "Namespace":
            assert obj["metadata"]["namespace"] == namespace["metadata"]["name"]


# --- availability and scaling -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", APPS)
def test_every_deployment_has_a_pdb_a_service_and_its_own_account(name: str) -> None:
    objects = rendered(name)
    for service, deployment in _deployments(name).items():
        labels = deployment["spec"]["template"]["metadata"]["labels"]
        assert matches(deployment["spec"]["selector"], labels)
        pdbs = [
            p for p in objects_of(objects, "PodDisruptionBudget") if matches(p["spec"]["selector"], labels)
        ]
        assert len(pdbs) == 1, service
        assert pdbs[0]["spec"]["maxUnavailable"] == 1
        account = deployment["spec"]["template"]["spec"]["serviceAccountName"]
        assert one(objects, "ServiceAccount", account)["automountServiceAccountToken"] is False
        (svc,) = [
            s
            for s in objects_of(objects, "Service")
            if matches({"matchLabels": s["spec"]["selector"]}, labels)
        ]
        (container,) = containers(deployment)
        assert {p["targetPort"] for p in svc["spec"]["ports"]} <= {p["name"] for p in container["ports"]}
        strategy = deployment["spec"]["strategy"]["rollingUpdate"]
        assert strategy["maxUnavailable"] == 0, (
            f"{service}: a rollout starts the new pod before stopping an old one"
        )


def test_the_migration_job_runs_videogen_migrate() -> None:
    from videogen.cli import main  # noqa: PLC0415 — the top-level tool, only for this check

    objects = rendered("prod")
    (job,) = objects_of(objects, "Job")
    (container,) = containers(job)
    assert container["command"] + container["args"] == ["videogen", "migrate"]
    assert container["image"].startswith("videogen-migrate:")
    assert job["spec"]["template"]["spec"]["restartPolicy"] == "Never"
    assert job["spec"]["backoffLimit"] > 0 and job["spec"]["ttlSecondsAfterFinished"] > 0
    with pytest.raises(SystemExit) as exited:
        main(["migrate", "--help"])
    assert exited.value.code == 0


@pytest.mark.parametrize("name", APPS)
def test_the_api_scales_on_cpu(name: str) -> None:
    objects = rendered(name)
    api = _deployments(name)["api"]
    assert "replicas" not in api["spec"], "the HorizontalPodAutoscaler owns the api's replica count"
    (hpa,) = objects_of(objects, "HorizontalPodAutoscaler")
    assert hpa["apiVersion"] == "autoscaling/v2"
    assert hpa["spec"]["scaleTargetRef"] == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": "videogen-api",
    }
    (metric,) = hpa["spec"]["metrics"]
    assert metric["resource"]["name"] == "cpu" and metric["resource"]["target"]["type"] == "Utilization"
    assert 1 <= hpa["spec"]["minReplicas"] <= hpa["spec"]["maxReplicas"]


@pytest.mark.parametrize("name", APPS)
def test_workers_scale_on_consumer_lag_within_the_partitions(name: str) -> None:
    objects = rendered(name)
    deployments = _deployments(name)
    scaled = {s["spec"]["scaleTargetRef"]["name"]: s for s in objects_of(objects, "ScaledObject")}
    assert set(scaled) == {"videogen-orchestrator", "videogen-notifier"}
    for service in ("orchestrator", "notifier"):
        deployment = deployments[service]
        assert "replicas" not in deployment["spec"], f"{service}: KEDA owns the replica count"
        (container,) = containers(deployment)
        settings = settings_of(objects, container)
        spec = scaled[deployment["metadata"]["name"]]["spec"]
        # Never 0: the orchestrator's reconciler and the notifier's retry sweeper run in them.
        assert spec["minReplicaCount"] >= 1
        # Each partition has one consumer per group: more replicas than partitions would sit idle.
        assert spec["minReplicaCount"] <= spec["maxReplicaCount"] <= settings.topic_partitions
        (kafka,) = [t["metadata"] for t in spec["triggers"] if t["type"] == "kafka"]
        assert kafka["topic"] == getattr(Topics(settings.topic_prefix), TOPIC_OF[service])
        assert kafka["consumerGroup"] == getattr(settings, GROUP_OF[service])
        assert container_env(objects, container)[kafka["bootstrapServersFromEnv"]] == settings.kafka_bootstrap
        assert kafka["offsetResetPolicy"] == "earliest"
        assert kafka.get("allowIdleConsumers", "false") == "false"
        assert kafka.get("scaleToZeroOnInvalidOffset", "false") == "false"


# --- network ------------------------------------------------------------------------------------------------


def _policies_for(objects: list[Resource], labels: dict[str, str], kind: str) -> list[Resource]:
    return [
        p
        for p in objects_of(objects, "NetworkPolicy")
        if kind in p["spec"]["policyTypes"] and matches(p["spec"]["podSelector"], labels)
    ]


def _ports(rule: Resource) -> set[int]:
    return {p["port"] for p in rule.get("ports", [])}


@pytest.mark.parametrize("name", APPS)
def test_network_policy_denies_by_default_and_opens_only_what_each_needs(name: str) -> None:
    objects = rendered(name)
    core = {53, 9092, 27017}
    for workload, container in workloads(objects):
        labels = workload["spec"]["template"]["metadata"]["labels"]
        component = labels["app.kubernetes.io/component"]
        ingress = _policies_for(objects, labels, "Ingress")
        egress = _policies_for(objects, labels, "Egress")
        assert any(not p["spec"].get("ingress") for p in ingress), f"{component}: no default-deny ingress"
        assert any(not p["spec"].get("egress") for p in egress), f"{component}: no default-deny egress"
        open_ports = {port for p in ingress for rule in p["spec"].get("ingress", []) for port in _ports(rule)}
        own = {p["containerPort"] for p in container.get("ports", [])}
        assert open_ports == (own if component == "api" else set()), component
        rules = [rule for p in egress for rule in p["spec"].get("egress", [])]
        assert core <= {port for rule in rules for port in _ports(rule)}, component
        for rule in rules:
            assert rule.get("ports"), f"{component}: an egress rule open on every port"
            if "to" not in rule:
                assert _ports(rule) <= core, f"{component}: {_ports(rule)} open to every address"
                continue
            for peer in rule["to"]:
                assert set(peer) == {"ipBlock"}, component
                excepted = [ipaddress.ip_network(n) for n in peer["ipBlock"].get("except", [])]
                whole = ipaddress.ip_network(peer["ipBlock"]["cidr"])
                for private in PRIVATE:
                    if private.version == whole.version:
                        assert any(private.subnet_of(e) for e in excepted), (component, str(private))  # type: ignore[arg-type]
        internet = {port for rule in rules if "to" in rule for port in _ports(rule)}
        assert (
            internet
            == {"api": {443}, "orchestrator": {443}, "notifier": {443, 80}, "migrate": set()}[component]
        )


# --- optional parts: engines and monitoring -----------------------------------------------------------------


def test_engine_topics_match_the_prod_settings() -> None:
    engines = rendered("engines")
    prod = rendered("prod")
    (container,) = containers(_deployments("prod")["orchestrator"])
    settings = settings_of(prod, container)
    topics = {t["spec"]["topicName"]: t["spec"] for t in objects_of(engines, "KafkaTopic")}
    assert set(topics) == set(Topics(settings.topic_prefix).all())
    (kafka,) = objects_of(engines, "Kafka")
    config = kafka["spec"]["kafka"]["config"]
    assert config["auto.create.topics.enable"] is False
    for spec in topics.values():
        assert spec["partitions"] == settings.topic_partitions
        assert spec["replicas"] > spec["config"]["min.insync.replicas"] >= 2
    plain = next(lst for lst in kafka["spec"]["kafka"]["listeners"] if not lst["tls"])
    namespace = kafka["metadata"]["namespace"]
    assert (
        settings.kafka_bootstrap == f"{kafka['metadata']['name']}-kafka-bootstrap.{namespace}:{plain['port']}"
    )


def test_the_service_monitor_scrapes_every_service() -> None:
    monitoring = rendered("monitoring")
    prod = rendered("prod")
    (monitor,) = objects_of(monitoring, "ServiceMonitor")
    (endpoint,) = monitor["spec"]["endpoints"]
    assert endpoint["path"] == "/metrics"
    scraped = [
        s
        for s in objects_of(prod, "Service")
        if matches(monitor["spec"]["selector"], s["metadata"]["labels"])
    ]
    assert len(scraped) == len(SERVICES)
    for svc in scraped:
        assert endpoint["port"] in {p["name"] for p in svc["spec"]["ports"]}
    (policy,) = objects_of(monitoring, "NetworkPolicy")
    worker_ports = {
        c["ports"][0]["containerPort"]
        for s, d in _deployments("prod").items()
        if s != "api"
        for c in containers(d)
    }
    assert {p["port"] for rule in policy["spec"]["ingress"] for p in rule["ports"]} == worker_ports
