"""A batch in flight when its orchestrator is killed with SIGKILL (issue 39's crash proof): processes over the
real broker and store, the batch's items on a fake of Runway's API (a real HTTP server on 127.0.0.1 that
counts every task-creation request), and another orchestrator taking the work over.

What must hold: every item ends exactly once (one terminal write, one terminal event on the events topic), no
item's task is submitted twice (those running at the provider at the kill are polled to their end, not made
again), the batch's counts are its items' real states, it ends ``completed``, and it owes and publishes one
``batch.completed``. The only failures accepted are the documented window (docs/guarantees.md): an item whose
submit the kill cut (marked as submitting, no task id saved) fails with a retriable ``provider_unavailable``
instead of being submitted blind a second time."""

from __future__ import annotations

import math
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.support.orchestrator_stack import Stack, orchestrator_stack, run_for
from tests.support.topic_reads import Record, topic_records
from tests.support.waiting import eventually
from videogen_common.settings import CommonSettings
from videogen_common.store import Store
from videogen_common.topics import Topics

pytestmark = pytest.mark.e2e

Doc = dict[str, Any]

ITEMS = 30
LEASE_S = 4.0
TERMINAL_EVENTS = ("video.completed", "video.failed")


@pytest.fixture
async def stack(
    base_env: dict[str, str], common_settings: CommonSettings, store: Store, tmp_path: Path
) -> AsyncIterator[Stack]:
    """Migrations, a key, a fake Runway and the api as a process; the test starts its orchestrators."""
    async with orchestrator_stack(
        base_env, common_settings, store, tmp_path, task_seconds=4.0, lease_seconds=LEASE_S
    ) as s:
        yield s


def _events(records: list[Record]) -> list[Doc]:
    return [orjson.loads(record.value) for record in records]


async def test_a_batch_whose_orchestrator_is_killed_mid_run_ends_each_item_once_and_completes_once(
    stack: Stack, common_settings: CommonSettings
) -> None:
    first = stack.orchestrator("orch-1")
    await stack.ready(first)
    stack.runway.task_seconds = math.inf  # none finishes before the kill, however slow the submits are
    items = [
        {"prompt": f"batch-crash shot {i}", "provider": "runway", "duration": 5, "custom_id": f"c{i}"}
        for i in range(ITEMS)
    ]
    batch = await stack.batch(items)
    assert batch["status"] == "in_progress" and batch["counts"]["total"] == ITEMS
    docs = await stack.items_of(batch["id"])
    created = {d["prompt"]: d["_id"] for d in docs}
    ids = list(created.values())
    assert len(ids) == ITEMS and all(d["priority"] == "low" for d in docs)

    # Mid-batch: half the items' tasks are at the provider (running until the kill), the rest still to go.
    async def half_submitted() -> bool:
        return len(stack.runway.submissions) >= ITEMS // 2

    await eventually(half_submitted, 60, "half the items submitted")
    assert await first.stop(signal.SIGKILL) == -signal.SIGKILL
    at_kill = await stack.by_id(ids)
    assert all(d["status"] not in ("completed", "failed") for d in at_kill.values()), "none had ended"
    running = {i for i, d in at_kill.items() if d.get("provider_task_id")}
    assert running, "tasks were running at the provider at the kill"
    run_for(stack.runway, 2.0)

    second = stack.orchestrator("orch-2")
    await second.start()
    await eventually(lambda: stack.all_terminal(ids), 120, "every item terminal after the take-over")

    # Each item once: submitted at most once (completed ones exactly once, from that task), failed ones only
    # in the window, and what ran at the kill was polled to its end, not submitted again.
    ended = {d["_id"]: d for d in await stack.assert_each_submitted_at_most_once_and_finished(created)}
    # (A failed one's submit mark may reach the store just after the kill, a write in flight landing late: the
    # window is checked on each item as it ended, above, not on what was read at the kill.)
    assert all(ended[i]["status"] == "completed" for i in running)
    for doc in ended.values():
        statuses = [step["status"] for step in doc["timeline"]]
        assert statuses.count("completed") + statuses.count("failed") == 1, doc["timeline"]

    # The batch: its counts are its items' real states, it ended completed, and it owes one batch.completed.
    async def batch_ended() -> bool:
        return bool((await stack.read_batch(batch["id"]))["status"] == "completed")

    await eventually(batch_ended, 30, "the batch completed")
    read = await stack.read_batch(batch["id"])
    real = {state: sum(d["status"] == state for d in ended.values()) for state in ("completed", "failed")}
    assert read["counts"] == {
        "total": ITEMS,
        "queued": 0,
        "processing": 0,
        "completed": real["completed"],
        "failed": real["failed"],
        "canceled": 0,
    }
    assert read["finished_at"] is not None
    stored = await stack.store.batches.find_one({"_id": batch["id"]})
    assert stored is not None and stored["ended"] == ITEMS
    assert [e["type"] for e in stored["outbox"]] == ["batch.completed"]

    # On the events topic (what the notifier delivers, once per event id): one terminal event per item, of
    # its end, and one batch.completed with the batch's counts. A republished event keeps its id.
    topic = Topics(common_settings.topic_prefix).events

    def all_there(records: list[Record]) -> bool:
        events = _events(records)
        ended_ids = {e["subject"]["id"] for e in events if e["type"] in TERMINAL_EVENTS}
        return ended_ids >= set(ids) and any(e["type"] == "batch.completed" for e in events)

    events = _events(await topic_records(common_settings.kafka_bootstrap, topic, all_there, timeout=60))
    for generation_id, doc in ended.items():
        terminal = {
            (e["id"], e["type"])
            for e in events
            if e["subject"]["id"] == generation_id and e["type"] in TERMINAL_EVENTS
        }
        assert [kind for _, kind in terminal] == [f"video.{doc['status']}"], (generation_id, terminal)
    finished = {e["id"]: e for e in events if e["type"] == "batch.completed"}
    assert len(finished) == 1, finished
    [event] = finished.values()
    assert event["subject"]["id"] == batch["id"] and event["data"]["counts"] == read["counts"]
    assert await second.stop() == 0
