"""videogen_common.generations: new documents and the public view."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from videogen_common.domain import Provider, Status
from videogen_common.generations import new_generation, public_view
from videogen_common.records.generation import PUBLIC_FIELDS

NOW = datetime(2026, 11, 21, 8, 47, 0, 123000, tzinfo=UTC)

# The public fields of a generation restated from the spec (2.1), deliberately: the one place the tests spell
# them out, as a check of the server's list (``PUBLIC_FIELDS``). Every other test that needs the set takes it
# from ``tests.support.public_fields``, the server's own list.
PUBLIC = {
    "id",
    "status",
    "prompt",
    "provider",
    "model",
    "duration",
    "video_url",
    "thumbnail_url",
    "error",
    "progress",
    "queue_reason",
    "queue_position",
    "priority",
    "timeline",
    "aspect_ratio",
    "resolution",
    "seed",
    "negative_prompt",
    "metadata",
    "image",
    "route",
    "attempts",
    "estimated_cost",
    "cost",
    "created_at",
    "updated_at",
    "deleted",
    "deleted_at",
}
# The stored ``attempts`` counts lease claims; the public ``attempts`` is the tries at providers (stored as
# ``provider_attempts``): the count never shows.
INTERNAL = {
    "_id",
    "account_id",
    "version",
    "lease_owner",
    "lease_expires_at",
    "provider_task_id",
    "provider_attempts",
    "outbox_pending",
    "trace_id",
}


def _doc() -> dict[str, Any]:
    return new_generation(
        generation_id="gen_01",
        account_id="acc_1",
        prompt="a cat",
        provider=Provider.MOCK,
        duration=5,
        now=NOW,
    )


def test_new_generation_starts_processing_at_version_1() -> None:
    doc = _doc()
    assert doc["status"] == Status.PROCESSING.value == "processing"
    assert doc["version"] == 1
    assert doc["_id"] == "gen_01"
    assert doc["account_id"] == "acc_1"
    assert doc["provider"] == "mock"
    assert doc["duration"] == 5
    assert doc["created_at"] == doc["updated_at"] == NOW
    assert doc["attempts"] == 0
    for field in (
        "video_url",
        "thumbnail_url",
        "error",
        "lease_owner",
        "lease_expires_at",
        "provider_task_id",
    ):
        assert doc[field] is None


def test_public_view_has_exactly_the_public_fields() -> None:
    view = public_view(_doc())
    assert set(view) == PUBLIC
    assert len(view) == 28
    assert set(PUBLIC_FIELDS) == PUBLIC


def test_public_view_leaks_no_internal_field() -> None:
    doc = {**_doc(), "outbox_pending": True, "trace_id": "req_1", "lease_owner": "host-1"}
    view = public_view({**doc, "attempts": 3})
    assert not INTERNAL & set(view)
    assert view["attempts"] == []  # no try at a provider yet; never the count of lease claims
    assert "acc_1" not in view.values()
    assert "host-1" not in view.values()


def test_public_view_values_and_iso_timestamps() -> None:
    doc = _doc()
    doc["updated_at"] = NOW + timedelta(seconds=2, milliseconds=5)
    assert public_view(doc) == {
        "id": "gen_01",
        "status": "processing",
        "prompt": "a cat",
        "provider": "mock",
        "model": None,
        "duration": 5,
        "video_url": None,
        "thumbnail_url": None,
        "error": None,
        "progress": None,
        "queue_reason": None,
        "queue_position": None,
        "priority": "normal",
        "timeline": [{"status": "processing", "at": "2026-11-21T08:47:00.123Z"}],
        "aspect_ratio": None,
        "resolution": None,
        "seed": None,
        "negative_prompt": None,
        "metadata": {},
        "image": None,
        "route": None,
        "attempts": [],
        "estimated_cost": None,
        "cost": None,
        "created_at": "2026-11-21T08:47:00.123Z",
        "updated_at": "2026-11-21T08:47:02.128Z",
        "deleted": False,
        "deleted_at": None,
    }


def test_the_video_options_and_metadata_given_are_stored_and_shown_as_given() -> None:
    options = {"aspect_ratio": "9:16", "resolution": "720p", "seed": 42, "negative_prompt": "blur"}
    doc = new_generation(
        generation_id="gen_01",
        account_id="acc_1",
        prompt="a cat",
        provider=Provider.MOCK,
        duration=5,
        now=NOW,
        options=options,
        metadata={"order_id": "42"},
    )
    view = public_view(doc)
    assert {name: view[name] for name in options} == options
    assert view["metadata"] == {"order_id": "42"}
    assert {name: doc[name] for name in options} == options


def test_a_generation_without_options_stores_none_of_them() -> None:
    doc = _doc()
    assert not {"aspect_ratio", "resolution", "seed", "negative_prompt", "metadata"} & set(doc)


def test_the_timeline_of_a_generation_made_before_it_was_kept_is_its_first_and_current_states() -> None:
    doc = {**_doc(), "status": "completed", "updated_at": NOW + timedelta(seconds=9)}
    del doc["timeline"]
    assert public_view(doc)["timeline"] == [
        {"status": "processing", "at": "2026-11-21T08:47:00.123Z"},
        {"status": "completed", "at": "2026-11-21T08:47:09.123Z"},
    ]


def test_a_queue_reason_shows_only_while_queued() -> None:
    doc = {**_doc(), "queue_reason": "account_concurrency"}
    assert public_view({**doc, "status": "queued"})["queue_reason"] == "account_concurrency"
    assert public_view(doc)["queue_reason"] is None


def test_public_view_of_a_finished_generation() -> None:
    error = {"code": "mock_failure", "message": "m", "provider_code": None, "retriable": False}
    doc = {
        **_doc(),
        "status": "failed",
        "error": error,
        "created_at": datetime(2026, 11, 21, 9, 47, tzinfo=timezone(timedelta(hours=1))),
    }
    view = public_view(doc)
    assert view["status"] == "failed"
    assert view["error"] == error
    assert view["created_at"] == "2026-11-21T08:47:00.000Z"


def test_public_view_tolerates_missing_optional_fields() -> None:
    doc = _doc()
    for field in ("video_url", "thumbnail_url", "error"):
        del doc[field]
    view = public_view(doc)
    assert view["video_url"] is view["thumbnail_url"] is view["error"] is None
