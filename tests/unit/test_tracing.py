"""videogen_common.tracing: off unless the standard OTEL_* variables ask for it; a traceparent names a context
and back; a lone store command or HTTP call outside traced work starts no trace of its own."""

from __future__ import annotations

import logging

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ParentBased
from opentelemetry.trace import SpanKind

from videogen_common import tracing
from videogen_common.logs import JsonFormatter

TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


@pytest.mark.parametrize(
    ("environ", "configured"),
    [
        ({}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, True),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, True),
        ({"OTEL_TRACES_EXPORTER": "otlp"}, True),
        ({"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, False),
        ({"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, False),
        ({"OTEL_SDK_DISABLED": "false", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, True),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": ""}, False),
    ],
)
def test_traces_are_off_unless_the_environment_asks(environ: dict[str, str], configured: bool) -> None:
    assert tracing.tracing_configured(environ) is configured


def test_nothing_is_traced_without_a_provider() -> None:
    assert tracing.current_traceparent() is None
    assert tracing.log_fields() == {}
    assert tracing.context_from(None) is None


def sampled_spans(names_and_kinds: list[tuple[str, SpanKind]]) -> tuple[list[str], list[str]]:
    """Spans started with no parent (roots) and then the same inside a traced span, under videogen's default
    sampler: the names of those exported, each way."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(sampler=ParentBased(root=tracing._NoLoneClientCalls()))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    for name, kind in names_and_kinds:
        tracer.start_span(name, kind=kind).end()
    roots = [span.name for span in exporter.get_finished_spans()]
    exporter.clear()
    with tracer.start_as_current_span("work"):
        for name, kind in names_and_kinds:
            tracer.start_span(name, kind=kind).end()
    children = [span.name for span in exporter.get_finished_spans() if span.name != "work"]
    return roots, children


def test_a_lone_client_call_starts_no_trace_but_one_inside_work_is_kept() -> None:
    roots, children = sampled_spans(
        [("find", SpanKind.CLIENT), ("POST", SpanKind.SERVER), ("generation.run", SpanKind.CONSUMER)]
    )
    assert roots == ["POST", "generation.run"]
    assert children == ["find", "POST", "generation.run"]


def test_a_span_joins_the_trace_its_traceparent_names_and_logs_name_it() -> None:
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    context = tracing.context_from(TRACEPARENT)
    span = provider.get_tracer("test").start_span("webhook.attempt", context=context)
    with trace.use_span(span, end_on_exit=True):
        traceparent = tracing.current_traceparent()
        assert traceparent is not None
        assert traceparent.split("-")[1] == "0af7651916cd43dd8448eb211c80319c"
        assert traceparent.split("-")[2] == f"{span.get_span_context().span_id:016x}"
        fields = tracing.log_fields()

        line = JsonFormatter("notifier").format(logging.makeLogRecord({"msg": "delivered"}))
    assert fields == {"trace_id": "0af7651916cd43dd8448eb211c80319c", "span_id": traceparent.split("-")[2]}
    assert '"trace_id":"0af7651916cd43dd8448eb211c80319c"' in line
    (finished,) = exporter.get_finished_spans()
    assert finished.parent is not None and f"{finished.parent.span_id:016x}" == "b7ad6b7169203331"
