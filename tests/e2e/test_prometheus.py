"""A real Prometheus (Debian's package) scraping the real stack, with videogen's alert rules loaded: every
query of the Grafana dashboard returns data from that scrape, and a webhook endpoint answering 410,
generations that fail, a black-hole endpoint whose deliveries are given up and a killed orchestrator send the
matching alerts pending or firing."""

from __future__ import annotations

import asyncio
import json
import shutil
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.support.receivers import HANG, Reply, always, receiving
from tests.support.stack import Stack, running_stack
from tests.support.system_packages import require
from videogen.engines import free_port, wait_for_http
from videogen_client import AsyncClient
from videogen_common.settings import CommonSettings
from videogen_common.store import Store

pytestmark = pytest.mark.e2e
MONITORING = Path(__file__).resolve().parents[2] / "deploy" / "k8s" / "monitoring"
SEEN_WITHIN_S = 60.0
Doc = dict[str, Any]


@pytest.fixture
async def stack(
    base_env: dict[str, str], common_settings: CommonSettings, store: Store, tmp_path: Path
) -> AsyncIterator[Stack]:
    env = {
        "VIDEOGEN_METRICS_REFRESH_SECONDS": "1",  # the store-wide gauges, refreshed every second
        "VIDEOGEN_MOCK_MAX_CONCURRENCY": "8",  # a limit, so the capacity panel has one to show
        # A black-hole endpoint's deliveries time out in a second and are given up after one retry.
        "VIDEOGEN_DELIVERY_TIMEOUT_SECONDS": "1",
        "VIDEOGEN_WEBHOOK_RETRY_SCHEDULE": "1",
    }
    # The orchestrator is killed on purpose, so it cannot exit cleanly.
    async with running_stack(
        base_env, common_settings, store, tmp_path / "logs", env=env, clean_exit=False
    ) as s:
        yield s


@pytest.fixture
async def prometheus(stack: Stack, tmp_path: Path) -> AsyncIterator[str]:
    """Prometheus on 127.0.0.1 scraping the three services every second and evaluating the alert rules."""
    binary = shutil.which("prometheus")
    require(binary, "prometheus", "the scrape and alert test")
    assert binary is not None
    jobs = {"videogen-api": "api", "videogen-orchestrator": "orchestrator", "videogen-notifier": "notifier"}
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(MONITORING / "alerts.rules.yaml")],
        "scrape_configs": [
            {"job_name": job, "static_configs": [{"targets": [f"127.0.0.1:{stack.ports[service]}"]}]}
            for job, service in jobs.items()
        ],
    }
    config_file = tmp_path / "prometheus.yml"
    config_file.write_text(json.dumps(config))  # JSON is YAML
    port = free_port()
    log = (tmp_path / "prometheus.log").open("wb")
    process = await asyncio.create_subprocess_exec(
        binary,
        f"--config.file={config_file}",
        f"--storage.tsdb.path={tmp_path / 'tsdb'}",
        f"--web.listen-address=127.0.0.1:{port}",
        stdout=log,
        stderr=log,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        await wait_for_http(f"{base}/-/ready", exited=lambda: process.returncode)
        async with aiohttp.ClientSession() as session, asyncio.timeout(30):
            # Every target scraped once before the test acts, so counters are seen before they rise.
            while len(await query(session, base, "up == 1")) < len(jobs):
                await asyncio.sleep(0.2)
        yield base
    finally:
        process.terminate()
        await process.wait()
        log.close()


async def query(session: aiohttp.ClientSession, base: str, expr: str) -> list[Doc]:
    async with session.get(f"{base}/api/v1/query", params={"query": expr}) as response:
        body = await response.json()
    assert body["status"] == "success", body
    result: list[Doc] = body["data"]["result"]
    return result


async def alerts(session: aiohttp.ClientSession, base: str) -> list[Doc]:
    async with session.get(f"{base}/api/v1/alerts") as response:
        body = await response.json()
    found: list[Doc] = body["data"]["alerts"]
    return found


async def test_the_dashboard_has_data_and_the_alerts_fire_on_a_real_scrape(
    stack: Stack, prometheus: str
) -> None:
    async with (
        receiving(always(Reply(410))) as gone,
        receiving(always(HANG)) as black_hole,
        AsyncClient(api_key=stack.key, base_url=f"{stack.base}/v1") as client,
        aiohttp.ClientSession() as session,
    ):
        await client.webhooks.create(url=gone.url(), events=["video.completed", "video.failed"])
        hole = await client.webhooks.create(url=black_hole.url(), events=["video.completed"])
        made = [
            await client.generations.create(prompt=prompt, provider="mock", duration=3)
            for prompt in ("a fox", "a heron", "a storm #fail", "a lake", "a crash #fail")
        ]
        async with asyncio.timeout(SEEN_WITHIN_S):
            for generation in made:
                while not (await client.generations.get(generation.id)).terminal:
                    await asyncio.sleep(0.1)
            await gone.request(1)  # the endpoint's 410: the delivery fails and the endpoint is disabled
            # The black hole never answers: its deliveries time out, are retried once, then given up.
            while not (await client.webhooks.deliveries_page(hole.id, status="failed")).data:
                await asyncio.sleep(0.2)

        # Every query of the dashboard has data, once a few scrapes have seen the traffic.
        panels = json.loads((MONITORING / "dashboard.json").read_text())["panels"]
        exprs = [target["expr"] for panel in panels for target in panel["targets"]]
        empty = exprs
        deadline = asyncio.get_running_loop().time() + SEEN_WITHIN_S
        while empty and asyncio.get_running_loop().time() < deadline:
            empty = [expr for expr in empty if not await query(session, prometheus, expr)]
            await asyncio.sleep(0.5)
        assert empty == [], f"dashboard queries with no data: {empty}"

        # The generations that failed and the delivery given up, then the orchestrator killed.
        orchestrator = stack.services["orchestrator"].proc
        assert orchestrator is not None
        orchestrator.send_signal(signal.SIGKILL)
        wanted = {
            ("VideogenProviderFailing", "provider", "mock"),
            ("VideogenDeliveriesGivenUp", None, None),
            ("VideogenTargetDown", "job", "videogen-orchestrator"),
        }
        seen: set[tuple[str, str | None, str | None]] = set()
        deadline = asyncio.get_running_loop().time() + SEEN_WITHIN_S
        while not wanted <= seen and asyncio.get_running_loop().time() < deadline:
            for alert in await alerts(session, prometheus):
                assert alert["state"] in ("pending", "firing")
                labels = alert["labels"]
                for name, key, value in wanted:
                    if labels["alertname"] == name and (key is None or labels.get(key) == value):
                        seen.add((name, key, value))
            await asyncio.sleep(0.5)
        assert wanted <= seen, f"never pending or firing: {wanted - seen}"
        # Nothing else: no 5xx, no lag, nothing stuck.
        names = {alert["labels"]["alertname"] for alert in await alerts(session, prometheus)}
        assert names <= {name for name, _, _ in wanted} | {"VideogenManyBreakersOpen"}, names
