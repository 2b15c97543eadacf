"""An OTLP/HTTP trace receiver on 127.0.0.1, standing in for an OpenTelemetry collector: the services'
exporters POST protobuf ``ExportTraceServiceRequest``s to ``/v1/traces``; every span is decoded (with
opentelemetry-proto) and kept, and a test awaits the moment the spans it wants have arrived."""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

from aiohttp import web
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

Value = str | int | float | bool | None


@dataclass(frozen=True)
class Span:
    service: str
    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    kind: int  # the OTLP enum: 1 internal, 2 server, 3 client, 4 producer, 5 consumer
    attributes: dict[str, Value]


SERVER, CLIENT, CONSUMER = 2, 3, 5


def _value(value: AnyValue) -> Value:
    field = value.WhichOneof("value")
    if field in ("string_value", "int_value", "double_value", "bool_value"):
        found: Value = getattr(value, field)
        return found
    return None


def _attributes(pairs: list[KeyValue]) -> dict[str, Value]:
    return {pair.key: _value(pair.value) for pair in pairs}


def decode(body: bytes) -> list[Span]:
    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    spans = []
    for resource_spans in request.resource_spans:
        service = str(_attributes(list(resource_spans.resource.attributes)).get("service.name"))
        for scope_spans in resource_spans.scope_spans:
            spans += [
                Span(
                    service=service,
                    trace_id=span.trace_id.hex(),
                    span_id=span.span_id.hex(),
                    parent_id=span.parent_span_id.hex() or None,
                    name=span.name,
                    kind=span.kind,
                    attributes=_attributes(list(span.attributes)),
                )
                for span in scope_spans.spans
            ]
    return spans


class TraceReceiver:
    def __init__(self) -> None:
        self.spans: list[Span] = []
        self._arrived = asyncio.Condition()
        app = web.Application()
        app.router.add_post("/v1/traces", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        self.endpoint = ""

    async def start(self) -> None:
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.endpoint = f"http://127.0.0.1:{self._runner.addresses[0][1]}"

    async def stop(self) -> None:
        await self._runner.cleanup()

    def trace(self, trace_id: str) -> list[Span]:
        return [span for span in self.spans if span.trace_id == trace_id]

    async def wait_for(self, found: Callable[[list[Span]], bool], timeout: float = 30.0) -> None:
        """Until ``found`` accepts the spans received so far."""
        async with asyncio.timeout(timeout), self._arrived:
            await self._arrived.wait_for(lambda: found(self.spans))

    async def _handle(self, request: web.Request) -> web.Response:
        body = await request.read()
        if request.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        spans = decode(body)
        async with self._arrived:
            self.spans += spans
            self._arrived.notify_all()
        return web.Response(
            body=ExportTraceServiceResponse().SerializeToString(), content_type="application/x-protobuf"
        )


@asynccontextmanager
async def receiving_traces() -> AsyncIterator[TraceReceiver]:
    receiver = TraceReceiver()
    await receiver.start()
    try:
        yield receiver
    finally:
        await receiver.stop()
