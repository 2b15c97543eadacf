"""OpenTelemetry traces: one trace per generation, from the api's create request through the orchestrator's
actor (each provider call, the media copy) to every delivery attempt of its webhooks.

Off unless configured, and configured only with the standard ``OTEL_*`` variables: an OTLP/HTTP exporter when
``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``…_TRACES_ENDPOINT``) is set or ``OTEL_TRACES_EXPORTER=otlp``; never when
``OTEL_SDK_DISABLED=true`` or ``OTEL_TRACES_EXPORTER=none``. ``OTEL_SERVICE_NAME``,
``OTEL_RESOURCE_ATTRIBUTES``, ``OTEL_TRACES_SAMPLER`` and the ``OTEL_BSP_*`` batch settings work as the SDK
documents them.

The context crosses the services in W3C ``traceparent`` form: in the Kafka messages' headers and envelopes,
on the generation document (so a request republished by the reconciler, or an actor resumed by another
instance, stays in the creating request's trace) and on each delivery record (so every attempt, whenever it
is made, joins it). The aiohttp server and client and PyMongo are traced by their maintained
instrumentations. aiokafka's is not used: faust consumes in batches on its own, so a per-message consume span
would parent none of the work; the context is carried explicitly instead."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.instrumentation.aiohttp_client import AioHttpClientInstrumentor
from opentelemetry.instrumentation.aiohttp_server import AioHttpServerInstrumentor
from opentelemetry.instrumentation.pymongo import PymongoInstrumentor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.sdk.trace.sampling import Decision, ParentBased, Sampler, SamplingResult
from opentelemetry.trace import Link, SpanKind
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
from opentelemetry.trace.span import TraceState
from opentelemetry.util.types import Attributes

TRACEPARENT = "traceparent"
# Probe and scrape requests are not worth a trace each.
UNTRACED_PATHS = "healthz,readyz,metrics"

tracer = trace.get_tracer("videogen")
_propagator = TraceContextTextMapPropagator()


def tracing_configured(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether the ``OTEL_*`` variables ask for traces to be exported."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    exporter = environ.get("OTEL_TRACES_EXPORTER")
    if exporter is not None and exporter.strip():
        return exporter.strip().lower() != "none"
    endpoints = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    return any(environ.get(name) for name in endpoints)


def configure_tracing(service: str, *, http_server: bool = False) -> bool:
    """Install the tracer provider, its OTLP exporter and the instrumentations, if the environment asks for
    traces; True if it did. Call once, at start-up, before the aiohttp application is made (``http_server``
    traces its requests)."""
    if not tracing_configured():
        return False
    attributes = {} if os.environ.get("OTEL_SERVICE_NAME") else {"service.name": f"videogen-{service}"}
    sampler = None if os.environ.get("OTEL_TRACES_SAMPLER") else ParentBased(root=_NoLoneClientCalls())
    provider = TracerProvider(resource=Resource.create(attributes), sampler=sampler)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    PymongoInstrumentor().instrument()
    AioHttpClientInstrumentor().instrument()
    if http_server:
        os.environ.setdefault("OTEL_PYTHON_AIOHTTP_SERVER_EXCLUDED_URLS", UNTRACED_PATHS)
        AioHttpServerInstrumentor().instrument()
    return True


def current_traceparent() -> str | None:
    """The current span's context as a W3C ``traceparent``, or None when nothing is traced."""
    if not trace.get_current_span().get_span_context().is_valid:
        return None
    carrier: dict[str, str] = {}
    _propagator.inject(carrier)
    return carrier.get(TRACEPARENT)


def context_from(traceparent: str | None) -> otel_context.Context | None:
    """The context a ``traceparent`` names (None: start a new trace)."""
    if not traceparent:
        return None
    return _propagator.extract({TRACEPARENT: traceparent})


def span_in(
    name: str, traceparent: str | None, *, kind: SpanKind = SpanKind.INTERNAL, **attributes: Any
) -> trace.Span:
    """A span of the trace ``traceparent`` names, made the current span by ``trace.use_span`` / ``with``."""
    return tracer.start_span(
        name, context=context_from(traceparent), kind=kind, attributes=_attributes(attributes)
    )


def _attributes(values: Mapping[str, Any]) -> dict[str, Any]:
    return {f"videogen.{name}": value for name, value in values.items() if value is not None}


def annotate(**attributes: Any) -> None:
    """Add ``videogen.*`` attributes to the current span (nothing when it is not recorded)."""
    span = trace.get_current_span()
    if span.is_recording():
        span.set_attributes(_attributes(attributes))


def log_fields() -> dict[str, str]:
    """The current trace and span ids, for a log line (none outside a traced span)."""
    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return {}
    return {"trace_id": f"{context.trace_id:032x}", "span_id": f"{context.span_id:016x}"}


class _NoLoneClientCalls(Sampler):
    """Samples a new trace unless its first span is an outgoing call (a store command, an HTTP request) made
    outside any traced work: a sweep's or a lease renewal's queries would otherwise be a trace each."""

    def should_sample(  # noqa: PLR0917 (the SDK's signature)
        self,
        parent_context: otel_context.Context | None,
        trace_id: int,
        name: str,
        kind: SpanKind | None = None,
        attributes: Attributes = None,
        links: Sequence[Link] | None = None,
        trace_state: TraceState | None = None,
    ) -> SamplingResult:
        if kind is SpanKind.CLIENT:
            return SamplingResult(Decision.DROP)
        return SamplingResult(Decision.RECORD_AND_SAMPLE, attributes)

    def get_description(self) -> str:
        return "NoLoneClientCalls"
