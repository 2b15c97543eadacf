"""A graceful stop cancels the notifier's agent while it writes a batch's delivery records; faust then
acknowledges the whole batch. ``uninterrupted`` lets the writing finish first."""

from __future__ import annotations

import asyncio

import pytest

from videogen_notifier.intake import uninterrupted


async def test_a_canceled_caller_waits_for_the_work_to_finish_then_is_canceled() -> None:
    started, release = asyncio.Event(), asyncio.Event()
    written: list[str] = []

    async def write_records() -> str:
        started.set()
        await release.wait()
        written.append("records")
        return "done"

    agent = asyncio.create_task(uninterrupted(write_records(), timeout=5))
    await started.wait()
    agent.cancel()
    await asyncio.sleep(0)  # the cancellation reaches the agent; the work goes on
    assert not agent.done()
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await agent
    assert written == ["records"]


async def test_work_that_outlasts_the_bound_is_given_up() -> None:
    never = asyncio.Event()
    started = asyncio.Event()

    async def hang() -> None:
        started.set()
        await never.wait()

    agent = asyncio.create_task(uninterrupted(hang(), timeout=0.05))
    await started.wait()
    agent.cancel()
    with pytest.raises(asyncio.CancelledError):
        await agent


async def test_without_a_stop_the_result_is_returned() -> None:
    async def work() -> int:
        return 7

    assert await uninterrupted(work(), timeout=1) == 7
