"""The api's /metrics (request counts and latencies by route pattern, publishes), its readiness (gated on the
store, not on the broker) and the ids its log lines carry."""

from __future__ import annotations

import io
import logging

import orjson
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from tests.support.api import api_client, bearer
from tests.support.env import settings_for
from tests.support.prometheus import sample
from tests.support.waiting import eventually
from videogen.engines import free_port
from videogen_api import state
from videogen_api.settings import ApiSettings
from videogen_common.logs import JsonFormatter
from videogen_common.store import Store
from videogen_common.topics import Topics

Client = TestClient[web.Request, web.Application]
VALID = {"prompt": "a red fox running through snow", "provider": "mock", "duration": 5}


@pytest.fixture
def api_settings(base_env: dict[str, str]) -> ApiSettings:
    """The api with room for a slow broker: an answer later than the publish timeout counts as a failed
    publish (test_api_publisher), and these tests count the ones that went through."""
    return settings_for(ApiSettings, base_env, api_port=0, publish_timeout_seconds=30)


async def scrape(client: Client) -> str:
    response = await client.get("/metrics")  # no key: metrics are outside /v1 and unauthenticated
    assert response.status == 200
    assert response.content_type == "text/plain"
    return await response.text()


async def test_requests_are_counted_by_route_pattern_method_and_status(client: Client, key: str) -> None:
    created = await client.post("/v1/generate", json=VALID, headers=bearer(key))
    assert created.status == 202
    generation_id = (await created.json())["id"]
    assert (await client.get(f"/v1/generations/{generation_id}", headers=bearer(key))).status == 200
    assert (await client.get("/v1/generations/gen_unknown", headers=bearer(key))).status == 404
    assert (await client.get("/v1/generations", headers=bearer("not-a-key"))).status == 401
    assert (await client.get(f"/no/such/path/{generation_id}", headers=bearer(key))).status == 404
    await client.app[state.PUBLISHER].flush()  # creation does not wait for the broker's answer

    text = await scrape(client)
    assert 'videogen_http_requests_total{method="POST",route="/v1/generate",status="202"} 1.0' in text
    assert "_created" not in text  # no creation-time twin of every series
    requests = "videogen_http_requests_total"
    pattern = "/v1/generations/{id}"
    assert sample(text, requests, route=pattern, method="GET", status="200") == 1
    assert sample(text, requests, route=pattern, method="GET", status="404") == 1
    assert sample(text, requests, route="/v1/generations", method="GET", status="401") == 1
    assert sample(text, requests, route="unmatched", method="GET", status="404") == 1
    # Latency histograms under the same labels; no raw path (a series per id) anywhere.
    latency = "videogen_http_request_duration_seconds_count"
    assert sample(text, latency, route="/v1/generate", method="POST", status="202") == 1
    assert generation_id not in text and "gen_unknown" not in text
    assert sample(text, "videogen_events_published_total", type="generation.requested", outcome="ok") == 1
    assert sample(text, "videogen_http_requests_in_flight") == 1  # the scrape itself
    assert sample(text, "process_resident_memory_bytes") is not None


async def test_each_app_counts_into_its_own_registry(
    client: Client, key: str, api_settings: ApiSettings
) -> None:
    assert (await client.post("/v1/generate", json=VALID, headers=bearer(key))).status == 202
    created = {"route": "/v1/generate", "method": "POST", "status": "202"}
    async with api_client(api_settings) as other:
        assert sample(await scrape(other), "videogen_http_requests_total", **created) is None
    assert sample(await scrape(client), "videogen_http_requests_total", **created) == 1


async def test_ready_when_the_store_answers(client: Client) -> None:
    # The producer reaches the broker in the background after start-up (until then the broker reads degraded).
    publisher = client.app[state.PUBLISHER]

    async def producer_started() -> bool:
        return publisher.started

    await eventually(producer_started, what="the producer reached the broker")
    response = await client.get("/readyz")
    assert response.status == 200
    assert await response.json() == {"status": "ok", "checks": {"store": "ok", "broker": "ok"}}


async def test_a_failed_publish_is_reported_but_does_not_make_the_api_unready(
    base_env: dict[str, str], store: Store, topics: Topics, key: str
) -> None:
    # No broker acknowledges a publish within 0.1 ms: the publish times out, as when the broker is away, and
    # creation answers 202 all the same.
    settings = settings_for(ApiSettings, base_env, api_port=0, publish_timeout_seconds=0.0001)
    async with api_client(settings) as client:
        created = await client.post("/v1/generate", json=VALID, headers=bearer(key))
        assert created.status == 202
        await client.app[state.PUBLISHER].flush()  # creation does not wait for the broker's answer
        assert not client.app[state.PUBLISHER].connected()
        response = await client.get("/readyz")
        body = await response.json()
        assert response.status == 200, body
        assert body["status"] == "ok" and body["checks"]["store"] == "ok"
        assert body["checks"]["broker"].startswith("degraded")
        failed = {"type": "generation.requested", "outcome": "failed"}
        assert sample(await scrape(client), "videogen_events_published_total", **failed) == 1


async def test_unready_when_the_store_does_not_answer(base_env: dict[str, str], topics: Topics) -> None:
    closed = free_port()
    settings = settings_for(
        ApiSettings,
        base_env,
        api_port=0,
        mongo_url=f"mongodb://127.0.0.1:{closed}/?serverSelectionTimeoutMS=300&retryWrites=false",
    )
    async with api_client(settings) as client:
        response = await client.get("/readyz")
        assert response.status == 503
        body = await response.json()
        assert body["status"] == "unavailable"
        assert body["checks"]["store"].startswith("error")
        assert (await client.get("/healthz")).status == 200  # alive all the same: no restart for this


async def test_log_lines_carry_the_request_id_and_account(client: Client, key: str) -> None:
    # The service's own handler: JSON lines written as each record is logged.
    lines = io.StringIO()
    handler = logging.StreamHandler(lines)
    handler.setFormatter(JsonFormatter("api"))
    logger = logging.getLogger("videogen_api")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        created = await client.post(
            "/v1/generate", json=VALID, headers={**bearer(key), "X-Request-Id": "req-trace-me"}
        )
    finally:
        logger.removeHandler(handler)
        logger.setLevel(logging.NOTSET)
    assert created.status == 202
    generation_id = (await created.json())["id"]
    [accepted] = [
        entry
        for entry in map(orjson.loads, lines.getvalue().splitlines())
        if entry["msg"] == "generation accepted"
    ]
    assert accepted["request_id"] == "req-trace-me"
    assert accepted["account_id"] == "acme"
    assert accepted["generation_id"] == generation_id
    assert accepted["service"] == "api"
