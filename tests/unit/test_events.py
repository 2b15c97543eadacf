"""videogen_common.events: the Kafka envelope, and the events topic's messages."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import orjson
import pytest

from videogen_common.events import (
    REQUESTED,
    STATUS,
    Envelope,
    EnvelopeError,
    event_message,
    read_event_message,
    status_event_id,
)
from videogen_common.records.event import Event

GENERATION: dict[str, Any] = {
    "id": "gen_01",
    "status": "completed",
    "prompt": "a cat",
    "duration": 5,
    "video_url": None,
    "error": {"code": "x", "retriable": False},
}

FIELDS = (
    "event_id",
    "type",
    "occurred_at",
    "account_id",
    "generation",
    "trace_id",
    "traceparent",
    "version",
)
TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


def _envelope(trace_id: str | None = "req_1", traceparent: str | None = None) -> Envelope:
    return Envelope(
        event_id="evt_1",
        type=STATUS,
        occurred_at="2026-11-21T08:47:00.123Z",
        account_id="acc_1",
        generation=GENERATION,
        trace_id=trace_id,
        traceparent=traceparent,
    )


def _valid() -> dict[str, Any]:
    return orjson.loads(_envelope().to_json())  # type: ignore[no-any-return]


@pytest.mark.parametrize(("trace_id", "traceparent"), [("req_1", TRACEPARENT), ("req_1", None), (None, None)])
def test_round_trip(trace_id: str | None, traceparent: str | None) -> None:
    envelope = _envelope(trace_id, traceparent)
    assert Envelope.from_json(envelope.to_json()) == envelope


def test_to_json_shape() -> None:
    data = orjson.loads(_envelope().to_json())
    assert set(data) == set(FIELDS)
    assert data["generation"] == GENERATION
    assert data["type"] == "generation.status"


def test_topic_event_types() -> None:
    assert (REQUESTED, STATUS) == ("generation.requested", "generation.status")


def test_generation_id() -> None:
    assert _envelope().generation_id == "gen_01"


def test_trace_id_and_traceparent_are_optional_on_the_wire() -> None:
    data = _valid()
    del data["trace_id"], data["traceparent"]
    envelope = Envelope.from_json(orjson.dumps(data))
    assert (envelope.trace_id, envelope.traceparent) == (None, None)


@pytest.mark.parametrize(
    ("trace_id", "headers"),
    [
        ("req_1", [("x-request-id", b"req_1")]),
        (None, []),
        ("", []),
    ],
)
def test_kafka_headers(trace_id: str | None, headers: list[tuple[str, bytes]]) -> None:
    assert _envelope(trace_id).kafka_headers() == headers


def test_the_w3c_trace_context_travels_in_the_kafka_headers() -> None:
    assert _envelope("req_1", TRACEPARENT).kafka_headers() == [
        ("x-request-id", b"req_1"),
        ("traceparent", TRACEPARENT.encode()),
    ]


@pytest.mark.parametrize(
    "raw",
    [b"", b"not json", b"{", b"[]", b'"x"', b"null", b"1", b"[1,2,3,4,5,6]", b"\xff\xfe"],
    ids=repr,
)
def test_from_json_rejects_garbage(raw: bytes) -> None:
    with pytest.raises(EnvelopeError):
        Envelope.from_json(raw)


@pytest.mark.parametrize("missing", ["event_id", "type", "occurred_at", "account_id", "generation"])
def test_from_json_rejects_missing_keys(missing: str) -> None:
    data = _valid()
    del data[missing]
    with pytest.raises(EnvelopeError, match=missing):
        Envelope.from_json(orjson.dumps(data))


@pytest.mark.parametrize("generation", ["gen_01", 5, None, [1, 2]], ids=repr)
def test_from_json_rejects_a_generation_that_is_not_an_object(generation: object) -> None:
    data = _valid()
    data["generation"] = generation
    with pytest.raises(EnvelopeError):
        Envelope.from_json(orjson.dumps(data))


def test_envelope_error_is_a_value_error() -> None:
    assert issubclass(EnvelopeError, ValueError)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("event_id", None),
        ("trace_id", 5),
        ("traceparent", ["00"]),
        ("version", "3"),
        ("version", 0),
        ("version", True),
        ("generation", {"status": "completed"}),
    ],
)
def test_from_json_rejects_wrongly_typed_fields(field: str, value: object) -> None:
    data = _valid()
    data[field] = value
    with pytest.raises(EnvelopeError):
        Envelope.from_json(orjson.dumps(data))


def test_status_event_id_is_deterministic() -> None:
    assert status_event_id("gen_01", "completed", 3) == status_event_id("gen_01", "completed", 3)
    assert status_event_id("gen_01", "completed", 3) == "evt_gen_01_completed_3"


@pytest.mark.parametrize(
    ("generation_id", "status", "version"),
    [("gen_02", "completed", 3), ("gen_01", "failed", 3), ("gen_01", "completed", 4)],
)
def test_status_event_id_differs_per_generation_status_and_version(
    generation_id: str, status: str, version: int
) -> None:
    assert status_event_id(generation_id, status, version) != status_event_id("gen_01", "completed", 3)


# --- the events topic's messages ----------------------------------------------------------------------------

EVENT = Event(
    id="evt_gen_01_completed_3",
    type="video.completed",
    account_id="acc_1",
    subject_type="generation",
    subject_id="gen_01",
    data={"id": "gen_01", "status": "completed", "metadata": {"k": "v"}},
    created_at=datetime(2026, 11, 21, 8, 47, 0, 123000, tzinfo=UTC),
    trace_id="req_1",
    traceparent=TRACEPARENT,
)


@pytest.mark.parametrize(
    ("owed", "source", "carrier_id"), [(True, "generations", "gen_01"), (False, None, None)]
)
def test_an_event_message_round_trips(owed: bool, source: str | None, carrier_id: str | None) -> None:
    event = replace(EVENT, owed=owed, source=source, carrier_id=carrier_id)
    assert read_event_message(event_message(event)) == event


def test_an_event_message_is_keyed_by_subject_and_carries_the_data_as_delivered() -> None:
    data = orjson.loads(event_message(EVENT))
    assert data["subject"] == {"type": "generation", "id": "gen_01"}
    assert data["data"] == EVENT.data and data["created_at"] == "2026-11-21T08:47:00.123Z"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("id", None),
        ("type", ""),
        ("subject", {"type": "generation"}),
        ("data", ["not", "an", "object"]),
        ("created_at", "yesterday"),
        ("created_at", "2026-11-21T08:47:00"),  # no time zone
        ("owed", "yes"),
        ("traceparent", 5),
        ("source", ["generations"]),
        ("carrier_id", 7),
    ],
)
def test_a_malformed_event_message_is_refused(field: str, value: object) -> None:
    data = orjson.loads(event_message(EVENT))
    data[field] = value
    with pytest.raises(EnvelopeError):
        read_event_message(orjson.dumps(data))


def test_not_json_is_not_an_event_message() -> None:
    for raw in (b"not json", b"[1]"):
        with pytest.raises(EnvelopeError):
            read_event_message(raw)
