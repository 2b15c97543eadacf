"""The orchestrator where crashes hurt: processes over the real broker and store, generations on a fake of
Runway's API (a real HTTP server on 127.0.0.1 that counts every task-creation request), and orchestrators
killed with SIGKILL or stopped with SIGTERM in the middle of the work.

What must hold: every generation the api accepted ends terminal, no generation's task is ever submitted to the
provider twice, the per-account cap holds across processes, and a graceful stop hands the work over at once.

A generation whose submit was cut by the kill (marked as submitting, no task id saved) cannot know whether the
provider made a task; it fails with a retriable ``provider_unavailable`` instead of being submitted again
(paying twice is worse than failing once). Those are the only failures these tests accept."""

from __future__ import annotations

import math
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiokafka import AIOKafkaConsumer, TopicPartition

from tests.support.orchestrator_stack import Stack, orchestrator_stack, run_for
from tests.support.waiting import eventually
from videogen_common.settings import CommonSettings
from videogen_common.store import Store
from videogen_common.topics import Topics
from videogen_orchestrator.runner import HANDED_BACK

pytestmark = pytest.mark.e2e

LEASE_S = 4.0
SHUTDOWN_TIMEOUT_S = 5.0


@pytest.fixture
async def stack(
    base_env: dict[str, str], common_settings: CommonSettings, store: Store, tmp_path: Path
) -> AsyncIterator[Stack]:
    """Migrations, a key, a fake Runway and the api as a process; the test starts its orchestrators."""
    async with orchestrator_stack(
        base_env,
        common_settings,
        store,
        tmp_path,
        task_seconds=4.0,
        lease_seconds=LEASE_S,
        shutdown_timeout_seconds=SHUTDOWN_TIMEOUT_S,
    ) as s:
        yield s


async def test_a_killed_orchestrator_restarted_mid_batch_finishes_every_generation_and_pays_for_none_twice(
    stack: Stack,
) -> None:
    first = stack.orchestrator("orch-1")
    await stack.ready(first)
    stack.runway.task_seconds = math.inf  # none finishes before the kill, however slow the submits are
    created = await stack.create(40, "crash")
    ids = list(created.values())

    # Mid-batch: half the tasks are at the provider (running until the kill), the rest still to be submitted.
    async def half_submitted() -> bool:
        return len(stack.runway.submissions) >= 20

    await eventually(half_submitted, 60, "20 tasks submitted")
    assert await first.stop(signal.SIGKILL) == -signal.SIGKILL
    at_kill = await stack.docs(ids)
    in_flight = [d for d in at_kill if d["status"] not in ("completed", "failed")]
    assert len(in_flight) == 40, "the kill lands with the whole batch unfinished"
    assert any(d.get("provider_task_id") for d in in_flight), "…and tasks running at the provider"
    run_for(stack.runway, 4.0)

    second = stack.orchestrator("orch-2")
    await second.start()
    await eventually(lambda: stack.all_terminal(ids), 120, "every generation terminal after the restart")

    docs = await stack.assert_each_submitted_at_most_once_and_finished(created)
    completed = [d for d in docs if d["status"] == "completed"]
    assert len(completed) >= 35, f"only {len(completed)} of 40 completed"
    resumed = [d for d in in_flight if d.get("provider_task_id")]
    for doc in resumed:  # what was running at the provider was polled to its end, not submitted again
        assert next(d for d in docs if d["_id"] == doc["_id"])["status"] == "completed"
    assert len(stack.runway.submissions) == len({stack.runway.prompt_of(b) for b in stack.runway.submissions})
    assert await second.stop() == 0


async def test_two_orchestrators_share_the_work_and_a_killed_ones_generations_move_to_the_other(
    stack: Stack,
) -> None:
    instances = [stack.orchestrator(name) for name in ("orch-1", "orch-2")]
    for process in instances:
        await stack.ready(process)
    stack.runway.task_seconds = math.inf  # the killed one finishes nothing: every write it sent is a lease's
    created = await stack.create(40, "shared")
    ids = list(created.values())

    async def both_running_work() -> bool:
        owners = {d["lease_owner"] for d in await stack.docs(ids) if d.get("provider_task_id")}
        return owners >= {"orch-1", "orch-2"}

    # Each has one of the two partitions, so each runs the generations whose requests it consumed.
    await eventually(both_running_work, 60, "both orchestrators running generations at the provider")
    assert await instances[0].stop(signal.SIGKILL) == -signal.SIGKILL
    # Its tasks ran on, so a write it sent before the kill that lands now cannot finish or hand back one of
    # its generations: those it owns unfinished are the survivor's to claim, whatever lands late.
    orphaned = [
        d["_id"]
        for d in await stack.docs(ids)
        if d["lease_owner"] == "orch-1" and d["status"] == "processing"
    ]
    assert orphaned, "the killed orchestrator owned unfinished generations"
    run_for(stack.runway, 4.0)

    await eventually(lambda: stack.all_terminal(ids), 180, "every generation terminal")

    docs = await stack.assert_each_submitted_at_most_once_and_finished(created)
    moved = [d for d in docs if d["_id"] in orphaned]
    # Each was claimed again (attempts) and finished by the survivor.
    assert all(d["status"] in ("completed", "failed") and d["attempts"] >= 2 for d in moved)
    assert sum(d["status"] == "completed" for d in moved) >= len(moved) - 2
    # The killed one's account slots went with its generations and were given back when they finished.
    assert await _all_given_back(stack)
    assert await instances[1].stop() == 0


async def test_the_account_cap_holds_across_two_orchestrator_processes(stack: Stack) -> None:
    cap = 6
    instances = [
        stack.orchestrator(name, VIDEOGEN_ACCOUNT_MAX_IN_FLIGHT=str(cap)) for name in ("orch-1", "orch-2")
    ]
    for process in instances:
        await stack.ready(process)
    # The first tasks run until the cap is reached (six at the provider at once, whatever the machine's
    # speed), then every task ends two seconds after it was made.
    stack.runway.task_seconds = math.inf
    created = await stack.create(3 * cap, "capped")
    ids = list(created.values())

    async def cap_reached() -> bool:
        return stack.runway.running_now() == cap

    await eventually(cap_reached, 60, "the cap's worth of tasks at the provider")
    run_for(stack.runway, 2.0)
    await eventually(lambda: stack.all_terminal(ids), 120, "every generation terminal")

    docs = await stack.assert_each_submitted_at_most_once_and_finished(created)
    assert all(d["status"] == "completed" for d in docs)
    # Reached, never exceeded: a slot is given back only after the provider reported the task finished.
    assert stack.runway.peak_running == cap
    # Every slot given back: each just after its generation's terminal write and status event, so the last
    # may still be on its way when the test sees every generation finished.

    await eventually(lambda: _all_given_back(stack), 30, "every account slot given back")
    assert [await process.stop() for process in instances] == [0, 0]


async def committed_requests(settings: CommonSettings, group: str) -> int:
    """How many request messages the orchestrators' consumer group has committed, over all partitions."""
    topic = Topics(settings.topic_prefix).requested
    consumer = AIOKafkaConsumer(
        bootstrap_servers=settings.kafka_bootstrap, group_id=group, enable_auto_commit=False
    )
    await consumer.start()
    try:
        partitions = [TopicPartition(topic, p) for p in range(settings.topic_partitions)]
        return sum([await consumer.committed(tp) or 0 for tp in partitions])
    finally:
        await consumer.stop()


async def test_sigterm_hands_leases_back_commits_and_exits_in_time_and_another_resumes_at_once(
    stack: Stack, common_settings: CommonSettings
) -> None:
    # Leases, and the grace after which a never-leased generation is picked up, long enough that waiting for
    # either would fail the test's time bound below: only the hand-back (for the generations it runs) and the
    # uncommitted request messages (for the ones it had not started) can make the work resume in time.
    slow_to_recover = {"VIDEOGEN_LEASE_SECONDS": "120", "VIDEOGEN_DISPATCH_GRACE_SECONDS": "120"}
    # Room for five: the sixth request waits in the agent for a slot when the SIGTERM comes.
    first = stack.orchestrator("orch-1", VIDEOGEN_MAX_IN_FLIGHT="5", **slow_to_recover)
    await stack.ready(first)
    stack.runway.task_seconds = math.inf  # none finishes before the SIGTERM, however slow the machine
    created = await stack.create(10, "graceful")
    ids = list(created.values())

    async def five_at_provider() -> bool:
        docs = await stack.docs(ids)
        running = [d for d in docs if d.get("provider_task_id") and d["lease_owner"] == "orch-1"]
        return len(running) == 5

    await eventually(five_at_provider, 30, "five running at the provider")
    started = time.monotonic()
    code = await first.stop(signal.SIGTERM, timeout=SHUTDOWN_TIMEOUT_S + 5)
    took = time.monotonic() - started
    assert code == 0, await first.output()
    assert took <= SHUTDOWN_TIMEOUT_S, f"took {took:.1f}s to exit"

    at_stop = await stack.docs(ids)
    assert all(d["status"] != "completed" for d in at_stop), "tasks still running; none finished"
    running = [d for d in at_stop if d.get("provider_task_id")]
    assert len(running) == 5
    for doc in running:
        assert doc["lease_owner"] is None and doc["lease_expires_at"] == HANDED_BACK
    for doc in at_stop:
        if not doc.get("provider_task_id"):
            assert doc["attempts"] == 0 and doc["lease_expires_at"] is None  # never touched
    # Offsets committed for exactly the requests it started: the rest go to the partitions' next owner.
    assert await committed_requests(common_settings, stack.env["VIDEOGEN_ORCHESTRATOR_GROUP"]) == 5

    # Resumed at once: well inside the 120 s the leases (or the grace) would have needed (60 s: a new process
    # joins the group and runs tasks of 10 s, slowly on a loaded machine).
    run_for(stack.runway, 10.0)
    second = stack.orchestrator("orch-2", **slow_to_recover)
    await second.start()
    await eventually(lambda: stack.all_terminal(ids), 60, "every generation terminal")

    docs = await stack.assert_each_submitted_at_most_once_and_finished(created)
    assert all(d["status"] == "completed" for d in docs)
    task_ids = {d["_id"]: d["provider_task_id"] for d in docs}
    assert {d["_id"]: task_ids[d["_id"]] for d in running} == {
        d["_id"]: d["provider_task_id"] for d in running
    }
    assert await second.stop() == 0


async def _all_given_back(stack: Stack) -> bool:
    """Whether the account holds no slot (nor runs anything on a key without a limit)."""
    doc = await stack.store.account_slots.find_one({"_id": "acme"})
    return doc is not None and doc["holders"] == [] and not doc.get("keys")
