"""The JSON envelope every Kafka message carries.

Key = generation id, so one generation's events stay in order on one partition."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

REQUESTED = "generation.requested"
STATUS = "generation.status"
TRACE_HEADER = "x-request-id"
TRACEPARENT = "traceparent"  # W3C trace context, also carried in the envelope (faust's batches give values)


class EnvelopeError(ValueError):
    """A message on a topic is not a valid envelope."""


@dataclass(frozen=True, slots=True)
class Envelope:
    event_id: str
    type: str
    occurred_at: str
    account_id: str
    generation: dict[str, Any]
    trace_id: str | None = None
    # The generation's version this event reports (each change bumps it): orders a generation's events.
    version: int | None = None
    # The W3C trace context of the work that made the event (see videogen_common.tracing); None untraced.
    traceparent: str | None = None
    # The webhook event a status event of a state that is not terminal is delivered as, if any
    # (``video.processing``, ``video.progress``); terminal events are delivered by their status.
    notice: str | None = None

    @property
    def generation_id(self) -> str:
        return str(self.generation["id"])

    def to_json(self) -> bytes:
        return orjson.dumps(
            {
                "event_id": self.event_id,
                "type": self.type,
                "occurred_at": self.occurred_at,
                "account_id": self.account_id,
                "generation": self.generation,
                "trace_id": self.trace_id,
                "traceparent": self.traceparent,
                "version": self.version,
                "notice": self.notice,
            }
        )

    def kafka_headers(self) -> list[tuple[str, bytes]]:
        headers = [(TRACE_HEADER, self.trace_id.encode())] if self.trace_id else []
        if self.traceparent:
            headers.append((TRACEPARENT, self.traceparent.encode()))
        return headers

    @classmethod
    def from_json(cls, raw: bytes) -> Envelope:
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise EnvelopeError(f"not JSON: {exc}") from exc
        if not isinstance(data, dict):
            raise EnvelopeError("not an object")
        strings = {name: data.get(name) for name in ("event_id", "type", "occurred_at", "account_id")}
        bad = [name for name, value in strings.items() if not isinstance(value, str) or not value]
        generation = data.get("generation")
        if not isinstance(generation, dict) or not isinstance(generation.get("id"), str):
            bad.append("generation")
            generation = {}
        trace_id, traceparent, notice = data.get("trace_id"), data.get("traceparent"), data.get("notice")
        bad += [
            name
            for name, value in (("trace_id", trace_id), ("traceparent", traceparent), ("notice", notice))
            if value is not None and not isinstance(value, str)
        ]
        version = data.get("version")
        if version is not None and (type(version) is not int or version < 1):
            bad.append("version")
        if bad:
            raise EnvelopeError(f"not an envelope: bad or missing {', '.join(bad)}")
        return cls(
            event_id=data["event_id"],
            type=data["type"],
            occurred_at=data["occurred_at"],
            account_id=data["account_id"],
            generation=generation,
            trace_id=trace_id,
            traceparent=traceparent,
            version=version,
            notice=notice,
        )


def status_event_id(generation_id: str, status: str, version: int) -> str:
    """Deterministic, so a republished status event is recognisably the same event downstream."""
    return f"evt_{generation_id}_{status}_{version}"
