"""videogen_common.event_types: the catalog of event types, each defined once, and the table of them in
docs/architecture.md held to it."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from videogen_common.domain import Provider, Status
from videogen_common.event_types import (
    EVENT_TYPES,
    VIDEO_COMPLETED,
    VIDEO_FAILED,
    VIDEO_PROGRESS,
    Account,
    EventType,
    SubjectType,
    event_id,
)
from videogen_common.generations import TERMINAL_EVENT_TYPES, new_record

NOW = datetime(2026, 11, 21, 8, 47, 0, 123000, tzinfo=UTC)
ARCHITECTURE = Path(__file__).parents[2] / "docs" / "architecture.md"

# Written out by hand: (owed, subject, subscribable) of every type.
TABLE = {
    "video.completed": (True, "generation", True),
    "video.failed": (True, "generation", True),
    "video.processing": (False, "generation", True),
    "video.progress": (False, "generation", True),
    "video.deleted": (True, "generation", True),
    "webhook.disabled": (True, "webhook", True),
    "account.budget_threshold": (True, "account", True),
    "batch.completed": (True, "batch", True),
    "webhook.test": (True, "webhook", False),
}


def test_the_catalog_is_the_table() -> None:
    found = {t.name: (t.owed, t.subject.value, t.subscribable) for t in EVENT_TYPES}
    assert found == TABLE
    assert EVENT_TYPES.subscribable() == [name for name, row in TABLE.items() if row[2]]
    # Owed types are carried by their changes' documents, but the test event the api records itself.
    assert EVENT_TYPES.sources() == ["generations", "webhooks", "budget_counters", "batches"]


def test_every_terminal_state_owes_its_event() -> None:
    assert TERMINAL_EVENT_TYPES == {Status.COMPLETED: VIDEO_COMPLETED, Status.FAILED: VIDEO_FAILED}
    assert all(t.owed for t in TERMINAL_EVENT_TYPES.values())


def test_an_event_has_the_id_of_its_subject_and_change_and_an_owed_one_is_owed_from_its_creation() -> None:
    pinged: EventType[Account] = EventType(
        "account.pinged",
        owed=True,
        subject=SubjectType.ACCOUNT,
        description="a test's",
        data=lambda account: {"id": account.id, **(account.details or {})},
    )
    event = pinged.event(Account("acc_1", {"n": 1}), change="pinged_7", at=NOW, trace_id="req_1")
    assert (event.id, event.type, event.account_id) == ("evt_acc_1_pinged_7", "account.pinged", "acc_1")
    assert (event.subject_type, event.subject_id, dict(event.data)) == (
        "account",
        "acc_1",
        {"id": "acc_1", "n": 1},
    )
    assert (event.created_at, event.owed, event.trace_id, event.source) == (NOW, True, "req_1", None)
    # Carried by another document than the subject's own (an account's budget counter, say), it says which.
    carried: EventType[Account] = EventType(
        "account.carried",
        owed=True,
        subject=SubjectType.ACCOUNT,
        description="",
        data=lambda a: {},
        source="c",
    )
    assert carried.event(Account("acc_1"), change="x", at=NOW).carrier_id == "acc_1"
    assert carried.event(Account("acc_1"), change="x", at=NOW, carried_by="c_7").carrier_id == "c_7"
    generation = new_record(
        generation_id="gen_1", account_id="acc_1", prompt="p", provider=Provider.MOCK, duration=3, now=NOW
    )
    best_effort = VIDEO_PROGRESS.event(generation, change="processing_1_progress_5", at=NOW)
    assert (best_effort.owed, best_effort.source, best_effort.subject_type) == (False, None, "generation")


def test_an_id_that_would_not_be_url_safe_is_a_hash_of_the_subject_and_change_instead() -> None:
    """An account named as its operator chose, a change naming a period by its time: the same id every time,
    and one the ``Event`` schema, a URL path and the console's routes take as it is."""
    pinged: EventType[Account] = EventType(
        "account.pinged", owed=True, subject=SubjectType.ACCOUNT, description="", data=lambda a: {}
    )
    account, period = Account("Acme Corp/EU"), "budget_2026-11-01T00:00:00Z"
    [hashed] = {pinged.event(account, change=period, at=NOW).id for _ in "ab"}
    assert re.fullmatch(r"evt_[0-9a-z]{26}", hashed)
    assert hashed != pinged.event(account, change="budget_2026-12-01T00:00:00Z", at=NOW).id
    assert event_id("acc_1", "pinged_7") == "evt_acc_1_pinged_7"  # readable ones stay readable


def test_a_type_is_defined_once_and_one_defined_for_a_while_goes_after() -> None:
    with pytest.raises(ValueError, match="defined already"):
        EVENT_TYPES.define(VIDEO_COMPLETED)
    made_up: EventType[Account] = EventType(
        "account.made_up", owed=False, subject=SubjectType.ACCOUNT, description="", data=lambda a: {}
    )
    with EVENT_TYPES.defined(made_up):
        assert EVENT_TYPES.get("account.made_up") is made_up
        assert "account.made_up" in EVENT_TYPES.subscribable()
    assert EVENT_TYPES.get("account.made_up") is None
    assert list(TABLE) == EVENT_TYPES.names()


def test_the_table_in_the_architecture_notes_is_the_catalog() -> None:
    """docs/architecture.md's table of event types: one row per type, owed or best effort, subject,
    subscribable and the collection that carries it as defined."""
    text = ARCHITECTURE.read_text()
    section = text.split("### Every event type", 1)[1].split("\n\n", 2)[1]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    documented = {}
    for row in rows:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        name = re.fullmatch(r"`([a-z._]+)`", cells[0])
        assert name is not None, row
        carried_in = None if cells[4] == "—" else cells[4].strip("`")
        documented[name.group(1)] = (cells[1] == "owed", cells[2], cells[3] == "yes", carried_in)
    assert documented == {t.name: (t.owed, t.subject.value, t.subscribable, t.source) for t in EVENT_TYPES}


def test_the_receivers_table_in_the_api_reference_has_every_type() -> None:
    """docs/api.md's "Deliveries as a receiver sees them": a row for every type, saying when it is sent."""
    text = (ARCHITECTURE.parent / "api.md").read_text()
    section = text.split("## Deliveries as a receiver sees them", 1)[1].split("\n\n", 2)[1]
    rows = re.findall(r"^\| `([a-z._]+)` \|", section, re.M)
    assert rows == EVENT_TYPES.names()


def test_the_api_references_webhook_row_lists_what_endpoints_may_subscribe_to() -> None:
    text = (ARCHITECTURE.parent / "api.md").read_text()
    listed = text.split("a non-empty set of the document's `EventType` — ", 1)[1].split("; see below", 1)[0]
    assert re.findall(r"`([a-z._]+)`", listed) == EVENT_TYPES.subscribable()
