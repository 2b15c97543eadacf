"""One trace per generation: the stack run with its OTLP exporter pointed at a receiver on 127.0.0.1 sends
one connected trace for a generation, from the api's create request through the orchestrator's actor (the
provider calls, the media copy) to the notifier's intake and the delivery attempt; the trace context travels
in the Kafka headers and the webhook request, and each service's log lines about the generation name it."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import aiohttp
import pytest

from tests.support.observe import Entry, headers_of, log_entry
from tests.support.otlp import CLIENT, CONSUMER, SERVER, Span, TraceReceiver, receiving_traces
from tests.support.pipeline import Receiver
from tests.support.stack import Stack, running_stack, subscribe
from videogen_common.settings import CommonSettings
from videogen_common.store import Store
from videogen_common.topics import Topics
from videogen_common.tracing import TRACEPARENT

pytestmark = pytest.mark.e2e

# (service, span name) each generation's trace must hold, beside the api's request.
EXPECTED = {
    ("videogen-orchestrator", "generation.run"),
    ("videogen-orchestrator", "provider.submit"),
    ("videogen-orchestrator", "provider.poll"),
    ("videogen-orchestrator", "media.store"),
    ("videogen-notifier", "event.intake"),
    ("videogen-notifier", "webhook.attempt"),
}


@pytest.fixture
async def traces() -> AsyncIterator[TraceReceiver]:
    async with receiving_traces() as receiver:
        yield receiver


@pytest.fixture
async def stack(
    base_env: dict[str, str],
    common_settings: CommonSettings,
    store: Store,
    tmp_path: Path,
    traces: TraceReceiver,
) -> AsyncIterator[Stack]:
    env = {
        "VIDEOGEN_LOG_LEVEL": "INFO",
        "OTEL_EXPORTER_OTLP_ENDPOINT": traces.endpoint,
        "OTEL_BSP_SCHEDULE_DELAY": "100",  # export every 100 ms, so the test waits little
    }
    async with running_stack(base_env, common_settings, store, tmp_path / "logs", env=env) as stack:
        yield stack


def traceparent_trace(value: str | bytes | None) -> str | None:
    """The trace id of a W3C ``traceparent`` (version-traceid-spanid-flags)."""
    if value is None:
        return None
    text = value.decode() if isinstance(value, bytes) else value
    return text.split("-")[1]


async def test_a_generation_is_one_connected_trace_across_the_three_services(
    stack: Stack,
    traces: TraceReceiver,
    receiver: Receiver,
    common_settings: CommonSettings,
) -> None:
    request_id = "req-trace-" + secrets.token_hex(6)
    async with aiohttp.ClientSession() as session:
        await subscribe(session, stack.base, stack.key, receiver.url, ["video.completed"])
        async with session.post(
            f"{stack.base}/v1/generate",
            json={"prompt": "a paper boat on a river", "provider": "mock", "duration": 3},
            headers={"Authorization": f"Bearer {stack.key}", "X-Request-Id": request_id},
        ) as response:
            assert response.status == 202
            generation_id = (await response.json())["id"]
    webhook_headers, _ = await asyncio.wait_for(receiver.expect(generation_id), 90)

    # The api's request span names the generation and the request id; its trace is the generation's.
    def create_span(spans: list[Span]) -> Span | None:
        return next(
            (
                s
                for s in spans
                if s.kind == SERVER and s.attributes.get("videogen.generation_id") == generation_id
            ),
            None,
        )

    await traces.wait_for(lambda spans: create_span(spans) is not None)
    root = create_span(traces.spans)
    assert root is not None
    assert root.service == "videogen-api" and root.attributes["videogen.request_id"] == request_id
    assert root.parent_id is None

    def names(spans: list[Span]) -> set[tuple[str, str]]:
        return {(s.service, s.name) for s in spans}

    await traces.wait_for(lambda _: names(traces.trace(root.trace_id)) >= EXPECTED)
    trace = traces.trace(root.trace_id)

    # Connected: every span but the request's has its parent in the trace.
    ids = {s.span_id for s in trace}
    orphans = [s for s in trace if s is not root and s.parent_id not in ids]
    assert not orphans, orphans
    by_id = {s.span_id: s for s in trace}

    # The actor runs as a consumer of the request; the provider calls are its children.
    run = next(s for s in trace if s.name == "generation.run")
    assert run.kind == CONSUMER and run.attributes["videogen.generation_id"] == generation_id
    assert run.attributes["videogen.status"] == "completed"
    submit = next(s for s in trace if s.name == "provider.submit")
    assert submit.kind == CLIENT and submit.parent_id == run.span_id
    assert submit.attributes["videogen.provider"] == "mock"

    # The attempt names its delivery, and its HTTP request (aiohttp's instrumentation) is its child.
    attempt = next(s for s in trace if s.name == "webhook.attempt")
    assert attempt.attributes["videogen.delivery_id"] == webhook_headers["webhook-id"]
    assert attempt.attributes["videogen.status_code"] == 200
    assert attempt.attributes["videogen.attempt"] == 1
    await traces.wait_for(lambda _: any(s.parent_id == attempt.span_id for s in traces.trace(root.trace_id)))
    post = next(s for s in traces.trace(root.trace_id) if s.parent_id == attempt.span_id)
    assert post.kind == CLIENT and post.service == "videogen-notifier"
    # The store's commands are traced where work is (PyMongo's instrumentation), e.g. the api's insert.
    assert any(
        s.kind == CLIENT and s.service == "videogen-api" and by_id.get(s.parent_id or "") is root
        for s in trace
    ), sorted(names(trace))

    # The context travels in W3C form: the Kafka request's headers and the webhook request carry it.
    found = await headers_of(
        common_settings.kafka_bootstrap,
        Topics(common_settings.topic_prefix).requested,
        generation_id.encode(),
    )
    assert found and all(traceparent_trace(h.get(TRACEPARENT)) == root.trace_id for h in found), found
    assert traceparent_trace(webhook_headers.get(TRACEPARENT)) == root.trace_id

    # Each service's log lines about the generation name the trace (and the request id, as before).
    def about(message: str) -> Callable[[Entry], bool]:
        return lambda e: e.get("generation_id") == generation_id and e["msg"] == message

    for service, message in (
        ("api", "generation accepted"),
        ("orchestrator", "generation finished"),
        ("notifier", "delivered"),
    ):
        entry = await log_entry(stack, service, about(message))
        assert entry["trace_id"] == root.trace_id, (service, entry)
        assert entry["request_id"] == request_id, (service, entry)
