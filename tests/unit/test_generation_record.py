"""videogen_common.records.generation: a generation's document maps to its record and back unchanged."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from videogen_common.domain import Provider, Status
from videogen_common.failures import CANCELED_BY_CLIENT
from videogen_common.generations import new_generation, new_record
from videogen_common.records.generation import GenerationRecord, TimelineStep

NOW = datetime(2026, 11, 21, 8, 47, 0, 123000, tzinfo=UTC)


def test_a_new_generation_maps_to_its_record_and_back_unchanged() -> None:
    doc = new_generation(
        generation_id="gen_01",
        account_id="acc_1",
        prompt="a cat",
        provider=Provider.MOCK,
        duration=5,
        now=NOW,
        options={"aspect_ratio": "9:16", "seed": 7, "image": {"upload_id": "upl_1"}},
        metadata={"order_id": "42"},
    )
    record = GenerationRecord.from_doc(doc)
    assert record.status is Status.PROCESSING
    assert record.timeline == (TimelineStep("processing", NOW),)
    assert record.to_doc() == doc


def test_a_finished_generation_with_internal_fields_maps_back_unchanged() -> None:
    later = NOW + timedelta(seconds=9)
    doc = {
        **new_generation(
            generation_id="gen_01",
            account_id="acc_1",
            prompt="a cat",
            provider=Provider.MOCK,
            duration=5,
            now=NOW,
        ),
        "status": "failed",
        "error": {
            "code": "canceled",
            "message": "canceled by the client",
            "provider_code": None,
            "retriable": False,
        },
        "updated_at": later,
        "status_since": later,
        "state_seconds": {"processing": 9.0},
        "version": 2,
        "trace_id": "req_1",
        "idem": "acc_1\nk",
        "idem_hash": "h",
        "idem_response": {"id": "gen_01"},
    }
    record = GenerationRecord.from_doc(doc)
    assert record.error == CANCELED_BY_CLIENT
    assert record.to_doc() == doc


def test_the_request_ids_and_first_frame_of_a_new_record_are_internal() -> None:
    record = new_record(
        generation_id="gen_01",
        account_id="acc_1",
        prompt="a cat",
        provider=Provider.MOCK,
        duration=5,
        now=NOW,
        image_key="acc_1/upl_1",
        image_type="image/png",
        trace_id="req_1",
        api_key_id="key_1",
    )
    doc = record.to_doc()
    assert (doc["image_key"], doc["image_type"], doc["trace_id"], doc["api_key_id"]) == (
        "acc_1/upl_1",
        "image/png",
        "req_1",
        "key_1",
    )
    assert not {"image_key", "trace_id", "api_key_id", "deadline_at", "traceparent"} & set(
        record.public_view()
    )
