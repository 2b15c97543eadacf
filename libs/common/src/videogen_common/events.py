"""What Kafka carries, as JSON: the envelope of ``generation.requested`` and ``generation.status`` messages
(key = generation id, so one generation's messages stay in order on one partition), and the events of the
events topic (``event_message``; key = the event's subject id)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson

from videogen_common.clock import isoformat
from videogen_common.records.event import Event

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
            }
        )

    def kafka_headers(self) -> list[tuple[str, bytes]]:
        return trace_headers(self.trace_id, self.traceparent)

    @classmethod
    def from_json(cls, raw: bytes) -> Envelope:
        data = _json_object(raw)
        bad = _missing_strings(data, ("event_id", "type", "occurred_at", "account_id"))
        generation = data.get("generation")
        if not isinstance(generation, dict) or not isinstance(generation.get("id"), str):
            bad.append("generation")
            generation = {}
        bad += _not_strings(data, ("trace_id", "traceparent"))
        trace_id, traceparent = data.get("trace_id"), data.get("traceparent")
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
        )


def status_event_id(generation_id: str, status: str, version: int) -> str:
    """Deterministic, so a republished status message (or event: they share it) is recognisably the same."""
    return f"evt_{generation_id}_{status}_{version}"


def _json_object(raw: bytes) -> dict[str, Any]:
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise EnvelopeError(f"not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise EnvelopeError("not an object")
    return data


def _missing_strings(data: dict[str, Any], names: tuple[str, ...]) -> list[str]:
    """Which of ``names`` are not a string that is not empty."""
    return [name for name in names if not isinstance(data.get(name), str) or not data[name]]


def _not_strings(data: dict[str, Any], names: tuple[str, ...]) -> list[str]:
    """Which of ``names`` are there (not null) but not a string."""
    return [name for name in names if data.get(name) is not None and not isinstance(data[name], str)]


def trace_headers(trace_id: str | None, traceparent: str | None) -> list[tuple[str, bytes]]:
    """The Kafka headers of a message made under a request (``trace_id``) and a trace (``traceparent``)."""
    headers = [(TRACE_HEADER, trace_id.encode())] if trace_id else []
    if traceparent:
        headers.append((TRACEPARENT, traceparent.encode()))
    return headers


def event_message(event: Event) -> bytes:
    """An event as the events topic carries it (``read_event_message`` reads it back)."""
    return orjson.dumps(
        {
            "id": event.id,
            "type": event.type,
            "account_id": event.account_id,
            "subject": {"type": event.subject_type, "id": event.subject_id},
            "data": event.data,
            "created_at": isoformat(event.created_at),
            "owed": event.owed,
            "source": event.source,
            "carrier_id": event.carrier_id,
            "trace_id": event.trace_id,
            "traceparent": event.traceparent,
        }
    )


def read_event_message(raw: bytes) -> Event:
    """The event of a message of the events topic; ``EnvelopeError`` if it is not one."""
    data = _json_object(raw)
    subject = data.get("subject")
    if not isinstance(subject, dict):
        subject = {}
    bad = _missing_strings(data, ("id", "type", "account_id", "created_at"))
    bad += [f"subject.{name}" for name in _missing_strings(subject, ("type", "id"))]
    if not isinstance(data.get("data"), dict):
        bad.append("data")
    if not isinstance(data.get("owed"), bool):
        bad.append("owed")
    bad += _not_strings(data, ("trace_id", "traceparent", "source", "carrier_id"))
    created_at = None
    if "created_at" not in bad:
        try:
            created_at = datetime.fromisoformat(data["created_at"])
        except ValueError:
            created_at = None
        if created_at is None or created_at.tzinfo is None:
            bad.append("created_at")
    if bad or created_at is None:
        raise EnvelopeError(f"not an event: bad or missing {', '.join(bad)}")
    return Event(
        id=data["id"],
        type=data["type"],
        account_id=data["account_id"],
        subject_type=subject["type"],
        subject_id=subject["id"],
        data=data["data"],
        created_at=created_at,
        trace_id=data.get("trace_id"),
        traceparent=data.get("traceparent"),
        owed=data["owed"],
        source=data.get("source"),
        carrier_id=data.get("carrier_id"),
    )
