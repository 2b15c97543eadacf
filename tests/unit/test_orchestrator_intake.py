"""The orchestrator's intake of low-priority requests (``videogen_orchestrator.intake``): accounts in turn,
each message acknowledged once its generation is started, nothing new started while a start that goes first
runs, and nothing acknowledged once the instance stops."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from functools import partial

from videogen_orchestrator.intake import Intake


class Recorder:
    """Starts generations (recording the order), each when the test lets it; and their acknowledgements."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.acked: list[str] = []
        self.stopping = False
        self.gate = asyncio.Event()
        self.gate.set()
        self.began = asyncio.Event()

    async def start(self, generation_id: str) -> bool:
        self.began.set()
        await self.gate.wait()
        self.started.append(generation_id)
        return not self.stopping

    def ack(self, generation_id: str) -> asyncio.Future[None]:
        async def acknowledge() -> None:
            self.acked.append(generation_id)

        return asyncio.ensure_future(acknowledge())


async def until(check: Callable[[], bool], what: str) -> None:
    """Let the loop run until ``check()`` holds (an ``AssertionError`` naming ``what`` after 5 s)."""
    try:
        async with asyncio.timeout(5):
            while not check():
                await asyncio.sleep(0)
    except TimeoutError:
        raise AssertionError(f"not true after 5 s: {what}") from None


async def test_accounts_are_taken_in_turn_and_each_message_is_acknowledged_once_started() -> None:
    recorder = Recorder()
    recorder.gate.clear()
    intake = Intake(recorder.start, lambda: recorder.stopping)
    for i in range(3):
        intake.put("bulk", f"bulk-{i}", partial(recorder.ack, f"bulk-{i}"))
    await until(recorder.began.is_set, "the first start began")
    intake.put("other", "other-0", lambda: recorder.ack("other-0"))
    # A duplicate of a request held: started once, both its messages acknowledged.
    intake.put("bulk", "bulk-0", lambda: recorder.ack("bulk-0 again"))
    assert intake.holds("other-0") and len(intake) == 4
    assert recorder.acked == []  # not before its generation is started
    recorder.gate.set()
    await until(lambda: len(recorder.acked) == 5, "every message acknowledged")
    # The other account's one went in its turn (behind the one of the batch whose turn came first), not
    # behind the whole batch.
    assert recorder.started == ["bulk-0", "bulk-1", "other-0", "bulk-2"]
    assert recorder.acked == ["bulk-0", "bulk-0 again", "bulk-1", "other-0", "bulk-2"]
    assert len(intake) == 0 and not intake.holds("other-0")
    await intake.stop()


async def test_nothing_new_starts_while_a_start_that_goes_first_runs() -> None:
    recorder = Recorder()
    intake = Intake(recorder.start, lambda: recorder.stopping)
    with intake.first():
        intake.put("bulk", "bulk-0", lambda: recorder.ack("bulk-0"))
        for _ in range(20):
            await asyncio.sleep(0)
        assert recorder.started == [] and intake.holds("bulk-0")
    await until(lambda: recorder.acked == ["bulk-0"], "started once the first start ended")
    await intake.stop()


async def test_once_the_instance_stops_nothing_is_acknowledged() -> None:
    recorder = Recorder()
    recorder.gate.clear()
    intake = Intake(recorder.start, lambda: recorder.stopping)
    intake.put("bulk", "bulk-0", lambda: recorder.ack("bulk-0"))
    intake.put("bulk", "bulk-1", lambda: recorder.ack("bulk-1"))
    await until(recorder.began.is_set, "the first start began")
    recorder.stopping = True  # the runner stops while the start is under way: it is not started here
    recorder.gate.set()
    await until(lambda: recorder.started == ["bulk-0"], "the start under way ended")
    await intake.stop()
    assert recorder.acked == []  # left for the partition's next owner
    assert recorder.started == ["bulk-0"]
