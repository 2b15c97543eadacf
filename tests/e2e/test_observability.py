"""Operating the three services as separate processes: each worker's side port answers its probes (ready once
it has joined its consumer group) and serves its metrics, Kafka consumer lag included; and one generation
is followed end to end by the id of the request that created it, in the Kafka headers of both its events and
in the api's, the orchestrator's and the notifier's log lines."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import orjson
import pytest

from tests.support.observe import Entry, headers_of, log_entry
from tests.support.pipeline import Receiver, verify
from tests.support.prometheus import sample
from tests.support.stack import Stack, running_stack, subscribe
from videogen_common.events import TRACE_HEADER
from videogen_common.settings import CommonSettings
from videogen_common.store import Store
from videogen_common.topics import Topics

pytestmark = pytest.mark.e2e


@pytest.fixture
async def stack(
    base_env: dict[str, str], common_settings: CommonSettings, store: Store, tmp_path: Path
) -> AsyncIterator[Stack]:
    env = {"VIDEOGEN_LOG_LEVEL": "INFO"}
    async with running_stack(base_env, common_settings, store, tmp_path / "logs", env=env) as stack:
        yield stack


async def get(url: str) -> tuple[int, str]:
    async with aiohttp.ClientSession() as session, session.get(url) as response:
        return response.status, await response.text()


async def test_worker_probes_and_metrics_answer_on_their_side_ports(stack: Stack) -> None:
    for name in ("orchestrator", "notifier"):
        assert await get(stack.url(name, "/healthz")) == (200, '{"status":"ok"}')
        status, body = await get(stack.url(name, "/readyz"))
        assert status == 200
        assert orjson.loads(body) == {
            "status": "ok",
            "checks": {"runtime": "ok", "store": "ok", "broker": "ok", "consumer": "ok"},
        }
        status, text = await get(stack.url(name, "/metrics"))
        assert status == 200 and "# TYPE videogen_kafka_consumer_lag gauge" in text


async def test_one_generation_is_followed_by_its_request_id_across_the_services(
    stack: Stack, receiver: Receiver, common_settings: CommonSettings
) -> None:
    request_id = "req-e2e-" + secrets.token_hex(6)
    async with aiohttp.ClientSession() as session:
        hook = await subscribe(session, stack.base, stack.key, receiver.url, ["video.completed"])
        async with session.post(
            f"{stack.base}/v1/generate",
            json={"prompt": "a lighthouse in a storm", "provider": "mock", "duration": 3},
            headers={"Authorization": f"Bearer {stack.key}", "X-Request-Id": request_id},
        ) as response:
            assert response.status == 202 and response.headers["X-Request-Id"] == request_id
            generation_id = (await response.json())["id"]
    headers, body = await asyncio.wait_for(receiver.expect(generation_id), 90)
    verify(hook["secret"], headers, body)

    # The request id in the Kafka headers of the request, and of the status message and the event it led to.
    topics = Topics(common_settings.topic_prefix)
    for topic in (topics.requested, topics.status, topics.events):
        found = await headers_of(common_settings.kafka_bootstrap, topic, generation_id.encode())
        assert found and all(h.get(TRACE_HEADER) == request_id.encode() for h in found), (topic, found)

    # ... and on each service's lines about this generation.
    def about(entry: Entry) -> bool:
        return bool(entry.get("generation_id") == generation_id)

    accepted = await log_entry(stack, "api", lambda e: about(e) and e["msg"] == "generation accepted")
    finished = await log_entry(
        stack, "orchestrator", lambda e: about(e) and e["msg"] == "generation finished"
    )
    delivered = await log_entry(stack, "notifier", lambda e: about(e) and e["msg"] == "delivered")
    for entry in (accepted, finished, delivered):
        assert entry["request_id"] == request_id, entry
        assert entry["account_id"] == "acme", entry
    assert delivered["delivery_id"] == headers["webhook-id"]
    assert [accepted["service"], finished["service"], delivered["service"]] == [
        "api",
        "orchestrator",
        "notifier",
    ]

    # The traffic shows on each service's metrics, the consumers' lag with it once they have committed.
    _, api = await get(stack.url("api", "/metrics"))
    assert sample(api, "videogen_http_requests_total", method="POST", route="/v1/generate", status="202") == 1
    _, orchestrator = await get(stack.url("orchestrator", "/metrics"))
    assert (
        sample(orchestrator, "videogen_generations_finished_total", provider="mock", outcome="completed") == 1
    )
    _, notifier = await get(stack.url("notifier", "/metrics"))
    assert sample(notifier, "videogen_delivery_attempts_total", outcome="2xx") == 1
    for name, topic in (("orchestrator", topics.requested), ("notifier", topics.events)):
        lags = await lag_samples(stack.url(name, "/metrics"), topic)
        assert lags and all(value == 0 for value in lags.values()), (name, lags)


async def lag_samples(url: str, topic: str, timeout: float = 30.0) -> dict[str, float]:
    """The consumer-lag samples of ``topic`` by partition, once they show everything consumed (or as they are
    at ``timeout``): faust commits on an interval, a partition's lag is reported once it has committed there,
    and a commit made before the last event was handled still shows it. Polled: a commit has no event to
    await."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        _, text = await get(url)
        found = {
            str(partition): value
            for partition in range(8)
            if (value := sample(text, "videogen_kafka_consumer_lag", partition=str(partition), topic=topic))
            is not None
        }
        if (found and not any(found.values())) or loop.time() > deadline:
            return found
        await asyncio.sleep(0.2)
