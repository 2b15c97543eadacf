"""videogen_orchestrator.status_events: which change of a generation makes which event. Every change sends its
status message; a terminal one also its owed event, and a notice its best-effort event; any other change no
event at all."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from tests.support.fakes import RecordingSink
from videogen_common.domain import Provider, Status
from videogen_common.generations import new_record, terminal_event
from videogen_common.records.generation import GenerationRecord
from videogen_orchestrator.status_events import publish_status

NOW = datetime(2026, 11, 21, 8, 47, 0, 123000, tzinfo=UTC)


def record(status: Status, version: int = 3, progress: int | None = None) -> GenerationRecord:
    made = new_record(
        generation_id="gen_1", account_id="acme", prompt="p", provider=Provider.MOCK, duration=3, now=NOW
    )
    return replace(made, status=status, version=version, progress=progress)


@pytest.mark.parametrize("status", [Status.PROCESSING, Status.QUEUED])
async def test_a_change_that_is_neither_terminal_nor_a_notice_makes_no_event(status: Status) -> None:
    sink = RecordingSink()
    assert await publish_status(sink, record(status), NOW)
    assert await publish_status(sink, record(status, progress=40), NOW, progress=True)
    assert len(sink.progress) == 2 and sink.events == sink.notices == []


@pytest.mark.parametrize("status", [Status.COMPLETED, Status.FAILED])
async def test_a_terminal_change_sends_its_owed_event(status: Status) -> None:
    sink = RecordingSink()
    final = record(status)
    await publish_status(sink, final, NOW)
    assert sink.events == [terminal_event(final)] and sink.notices == []
    assert sink.events[0].type == f"video.{status.value}" and sink.events[0].id == sink.envelopes[0].event_id


async def test_notices_are_best_effort_events_with_their_status_messages_ids() -> None:
    sink = RecordingSink()
    await publish_status(sink, record(Status.PROCESSING), NOW, notice=True)
    await publish_status(sink, record(Status.PROCESSING, progress=40), NOW, progress=True, notice=True)
    assert [(e.type, e.owed, e.source) for e in sink.notices] == [
        ("video.processing", False, None),
        ("video.progress", False, None),
    ]
    assert [e.id for e in sink.notices] == [e.event_id for e in sink.progress]
    assert sink.notices[1].data["progress"] == 40 and sink.events == []


async def test_a_broker_that_refuses_the_status_message_still_gets_the_event_offered() -> None:
    sink = RecordingSink()
    sink.failure = ConnectionError("broker unreachable")
    assert await publish_status(sink, record(Status.COMPLETED), NOW) is False
    assert (sink.attempts, sink.event_attempts) == (1, 1)
