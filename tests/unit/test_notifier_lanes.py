"""An endpoint's lane (``videogen_notifier.lanes``) on its own: its workers and its queue."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from tests.support.fakes import ManualClock
from videogen_notifier.lanes import Job, Lane


async def test_a_job_offered_as_the_last_worker_finds_the_queue_empty_is_still_sent() -> None:
    sent: list[str] = []
    all_sent = asyncio.Event()
    lane: Lane

    async def send(_: Lane, job: Job) -> None:
        sent.append(job.delivery_id)
        if job.delivery_id == "first":
            # Runs after this send returns and the worker finds the queue empty, and before the worker's
            # task is done (its done callbacks come after this one): the interleaving a loaded machine makes.
            asyncio.get_running_loop().call_soon(offer, "second")
        else:
            all_sent.set()

    def offer(delivery_id: str) -> None:
        lane.hold(delivery_id)
        lane.offer(Job(delivery_id))

    lane = Lane(
        "wh_1",
        concurrency=1,
        queue_limit=10,
        endpoint_ttl=timedelta(seconds=1),
        clock=ManualClock(),
        send=send,
        on_worker_exit=lambda _: None,
    )
    offer("first")
    async with asyncio.timeout(5):
        await all_sent.wait()
    assert sent == ["first", "second"]
