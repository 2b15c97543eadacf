"""The alert rules, proven with Prometheus's own ``promtool``: the file is valid, the operator's
PrometheusRule carries the same groups, every alert has a runbook section, and for every alert a
``promtool test rules`` case where it fires and one where it stays quiet, on series shaped like what the
services export.

The cases are written here, compactly, and handed to promtool as its unit-test file; the expected labels and
annotations of a firing alert are the rule's own plus the labels its expression keeps."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.kustomize import load_yaml_documents
from tests.support.system_packages import require

ROOT = Path(__file__).resolve().parents[2]
MONITORING = ROOT / "deploy" / "k8s" / "monitoring"
RULES = MONITORING / "alerts.rules.yaml"
OPERATIONS = ROOT / "docs" / "operations.md"

LAG_AGE = "videogen_kafka_consumer_lag_seconds"


@dataclass(frozen=True)
class Case:
    """``series`` (promtool's expanding notation, one sample a minute) evaluated at ``at``: the alert fires
    with ``labels`` (beyond its own) if ``fires``, else stays quiet."""

    alert: str
    series: dict[str, str]
    at: str
    fires: bool
    labels: dict[str, str] = field(default_factory=dict)


HTTP = 'videogen_http_requests_total{route="/v1/generate",method="POST",status="%s"}'
LATENCY = (
    'videogen_http_request_duration_seconds_bucket{route="/v1/generate",method="POST",status="202",le="%s"}'
)
FINISHED = 'videogen_generations_finished_total{provider="runway",outcome="%s"}'
ENDPOINTS = 'videogen_webhook_endpoints{state="%s",instance="notifier-0"}'
CAPACITY = 'videogen_provider_capacity_%s{provider="luma"%s,instance="%s"}'
REFUSALS = 'videogen_provider_capacity_refusals_total{provider="luma",pool="luma",instance="o-0"}'
BREAKER = 'videogen_provider_breaker_state{provider="runway",pool="runway/tier5",instance="%s"}'
PROVIDER_ERRORS = (
    'videogen_provider_call_errors_total{provider="luma",call="submit",code="provider_unavailable"}'
)

CASES = [
    Case("VideogenApiErrors", {HTTP % "500": "0+5x30", HTTP % "202": "0+100x30"}, "20m", fires=True),
    Case("VideogenApiErrors", {HTTP % "500": "0+0x30", HTTP % "202": "0+100x30"}, "20m", fires=False),
    Case(
        "VideogenApiErrors", {HTTP % "500": "0+5x30", HTTP % "202": "0+100x30"}, "4m", fires=False
    ),  # not yet 5m
    Case(
        "VideogenApiSlowCreation",
        {
            LATENCY % "0.5": "0+10x30",
            LATENCY % "1": "0+10x30",
            LATENCY % "2.5": "0+100x30",
            LATENCY % "+Inf": "0+100x30",
        },
        "20m",
        fires=True,
    ),
    Case(
        "VideogenApiSlowCreation",
        {
            LATENCY % "0.5": "0+100x30",
            LATENCY % "1": "0+100x30",
            LATENCY % "2.5": "0+100x30",
            LATENCY % "+Inf": "0+100x30",
        },
        "20m",
        fires=False,
    ),
    Case(
        "VideogenPublishesFailing",
        {'videogen_events_published_total{type="generation.requested",outcome="failed"}': "0+3x30"},
        "20m",
        fires=True,
    ),
    Case(
        "VideogenPublishesFailing",
        {'videogen_events_published_total{type="generation.requested",outcome="failed"}': "7x30"},
        "20m",
        fires=False,
    ),
    Case(
        "VideogenProviderFailing",
        {FINISHED % "failed": "0+3x60", FINISHED % "completed": "0+7x60"},
        "45m",
        fires=True,
        labels={"provider": "runway"},
    ),
    Case(
        "VideogenProviderFailing",
        {FINISHED % "failed": "0+1x60", FINISHED % "completed": "0+9x60"},
        "45m",
        fires=False,
    ),
    Case(
        "VideogenProviderErrors",
        {PROVIDER_ERRORS: "0+1x30"},
        "20m",
        fires=True,
        labels={"provider": "luma", "code": "provider_unavailable"},
    ),
    Case(
        "VideogenProviderErrors",
        {PROVIDER_ERRORS: "2x30"},
        "20m",
        fires=False,
    ),
    Case(
        "VideogenProviderSaturated",
        {
            CAPACITY % ("waiting", "", "o-0"): "40x30",
            CAPACITY % ("waiting", "", "o-1"): "40x30",  # every instance reports the same figure
            CAPACITY % ("running", ',pool="luma"', "o-0"): "5x30",
            CAPACITY % ("running", ',pool="luma"', "o-1"): "5x30",
            CAPACITY % ("effective_limit", ',pool="luma"', "o-0"): "5x30",
        },
        "20m",
        fires=True,
        labels={"provider": "luma"},
    ),
    Case(
        "VideogenProviderSaturated",
        {  # full, but nothing waits
            CAPACITY % ("waiting", "", "o-0"): "0x30",
            CAPACITY % ("running", ',pool="luma"', "o-0"): "5x30",
            CAPACITY % ("effective_limit", ',pool="luma"', "o-0"): "5x30",
        },
        "20m",
        fires=False,
    ),
    Case(
        "VideogenProviderSaturated",
        {  # work waits for a moment only: a slot is free
            CAPACITY % ("waiting", "", "o-0"): "3x30",
            CAPACITY % ("running", ',pool="luma"', "o-0"): "4x30",
            CAPACITY % ("effective_limit", ',pool="luma"', "o-0"): "5x30",
        },
        "20m",
        fires=False,
    ),
    Case(
        "VideogenProviderRefusingCapacity",
        {REFUSALS: "0+1x30"},
        "20m",
        fires=True,
        labels={"provider": "luma"},
    ),
    Case("VideogenProviderRefusingCapacity", {REFUSALS: "0 1 2 3x30"}, "20m", fires=False),
    Case(
        "VideogenProviderBreakerOpen",
        # Every orchestrator reports the store's figure: one alert per key, not one per instance.
        {BREAKER % "o-0": "2x20", BREAKER % "o-1": "2x20"},
        "10m",
        fires=True,
        labels={"provider": "runway", "pool": "runway/tier5"},
    ),
    # Open for a cool-down, then half-open and closed by a probe: quiet.
    Case("VideogenProviderBreakerOpen", {BREAKER % "o-0": "2 2 1 0x20"}, "10m", fires=False),
    Case(
        "VideogenGenerationsPilingUp",
        {'videogen_generations_unfinished{status="queued",instance="o-0"}': "1500x40"},
        "35m",
        fires=True,
    ),
    Case(
        "VideogenGenerationsPilingUp",
        {
            'videogen_generations_unfinished{status="queued",instance="o-0"}': "600x40",
            # every orchestrator reports the same figure: counted once
            'videogen_generations_unfinished{status="queued",instance="o-1"}': "600x40",
        },
        "35m",
        fires=False,
    ),
    Case("VideogenStatusEventsStuck", {"videogen_generations_outbox_pending": "3x30"}, "15m", fires=True),
    Case("VideogenStatusEventsStuck", {"videogen_generations_outbox_pending": "3 0x30"}, "15m", fires=False),
    Case("VideogenReconcilerRepairing", {"videogen_reconciler_resumed_total": "0+1x60"}, "45m", fires=True),
    Case(
        "VideogenReconcilerRepairing", {"videogen_reconciler_republished_total": "0+1x60"}, "45m", fires=True
    ),
    Case("VideogenReconcilerRepairing", {"videogen_reconciler_resumed_total": "4x60"}, "45m", fires=False),
    Case(
        "VideogenConsumerLag",
        {
            'videogen_kafka_consumer_lag{topic="videogen.generation.requested",partition="0"}': "400x30",
            'videogen_kafka_consumer_lag{topic="videogen.generation.requested",partition="1"}': "200x30",
        },
        "15m",
        fires=True,
        labels={"topic": "videogen.generation.requested"},
    ),
    Case(
        "VideogenConsumerLag",
        {'videogen_kafka_consumer_lag{topic="videogen.generation.requested",partition="0"}': "400x30"},
        "15m",
        fires=False,
    ),
    Case(
        "VideogenConsumerLagAge",
        {
            f'{LAG_AGE}{{topic="videogen.generation.status",partition="0"}}': "0+60x30",
            f'{LAG_AGE}{{topic="videogen.generation.status",partition="1"}}': "0x30",
        },
        "15m",
        fires=True,
        labels={"topic": "videogen.generation.status"},
    ),
    Case(
        "VideogenConsumerLagAge",
        # Behind by minutes for a moment, then caught up: not for 5 minutes.
        {f'{LAG_AGE}{{topic="videogen.generation.status",partition="0"}}': "400 400 0x30"},
        "15m",
        fires=False,
    ),
    Case(
        "VideogenTargetDown",
        {'up{job="videogen-notifier",instance="10.0.0.7:8082"}': "0x30"},
        "10m",
        fires=True,
        labels={"job": "videogen-notifier", "instance": "10.0.0.7:8082"},
    ),
    Case(
        "VideogenTargetDown",
        {'up{job="videogen-notifier",instance="10.0.0.7:8082"}': "1x30"},
        "10m",
        fires=False,
    ),
    Case(
        "VideogenDeliveriesGivenUp",
        {'videogen_deliveries_finished_total{outcome="failed"}': "0 0 0 1 1 1"},
        "5m",
        fires=True,
    ),
    Case(
        "VideogenDeliveriesGivenUp",
        {'videogen_deliveries_finished_total{outcome="failed"}': "1x90"},
        "80m",
        fires=False,
    ),
    Case("VideogenDeliveriesLate", {"videogen_deliveries_overdue": "12x30"}, "15m", fires=True),
    Case("VideogenDeliveriesLate", {"videogen_deliveries_overdue": "0x30"}, "15m", fires=False),
    Case("VideogenEndpointsDisabled", {ENDPOINTS % "disabled": "2x60 3x30"}, "70m", fires=True),
    Case("VideogenEndpointsDisabled", {ENDPOINTS % "disabled": "2x90"}, "70m", fires=False),
    Case("VideogenManyBreakersOpen", {ENDPOINTS % "circuit_open": "6x30"}, "20m", fires=True),
    Case("VideogenManyBreakersOpen", {ENDPOINTS % "circuit_open": "2x30"}, "20m", fires=False),
]


def promtool() -> str:
    found = shutil.which("promtool")
    require(found, "prometheus", "promtool, which proves the alert rules,")
    assert found is not None
    return found


def alerts() -> dict[str, dict[str, Any]]:
    groups = load_yaml_documents(RULES)[0]["groups"]
    return {rule["alert"]: rule for group in groups for rule in group["rules"] if "alert" in rule}


def test_promtool_accepts_the_rules_file() -> None:
    result = subprocess.run(
        [promtool(), "check", "rules", str(RULES)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_prometheus_rule_for_the_operator_carries_the_same_groups() -> None:
    rule = load_yaml_documents(MONITORING / "prometheusrule.yaml")[0]
    assert rule["kind"] == "PrometheusRule"
    assert rule["spec"] == load_yaml_documents(RULES)[0]
    assert "prometheusrule.yaml" in load_yaml_documents(MONITORING / "kustomization.yaml")[0]["resources"]


def test_every_alert_has_a_runbook_section() -> None:
    headings = {
        re.sub(r"[^a-z0-9 -]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
        for line in OPERATIONS.read_text().splitlines()
        if line.startswith("#")
    }
    for name, rule in alerts().items():
        anchor = rule["annotations"]["runbook_url"].split("#", 1)[1]
        assert anchor in headings, f"{name}: no section #{anchor} in docs/operations.md"


def test_every_alert_has_a_case_that_fires_and_one_that_stays_quiet() -> None:
    for name in alerts():
        outcomes = {case.fires for case in CASES if case.alert == name}
        assert outcomes == {True, False}, f"{name}: cases {outcomes}"


def test_each_alert_fires_and_stays_quiet_as_its_cases_say(tmp_path: Path) -> None:
    rules = alerts()
    tests = []
    for case in CASES:
        rule = rules[case.alert]
        expected = (
            [{"exp_labels": {**rule["labels"], **case.labels}, "exp_annotations": rule["annotations"]}]
            if case.fires
            else []
        )
        tests.append(
            {
                "name": f"{case.alert} {'fires' if case.fires else 'stays quiet'} at {case.at}",
                "interval": "1m",
                "input_series": [{"series": s, "values": v} for s, v in case.series.items()],
                "alert_rule_test": [{"eval_time": case.at, "alertname": case.alert, "exp_alerts": expected}],
            }
        )
    unit_tests = tmp_path / "alerts.test.yaml"  # JSON is YAML
    unit_tests.write_text(
        json.dumps({"rule_files": [str(RULES)], "evaluation_interval": "1m", "tests": tests})
    )
    result = subprocess.run(
        [promtool(), "test", "rules", str(unit_tests)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout
