"""Fencing: every write a lease holder makes is conditioned on the lease it holds, an owner and a number each
claim increments (``lease_fence``). Holder A claims, its lease runs out (as when A is cut off from the store),
B claims (the fence grows by one): every kind of write A then makes changes nothing, its actor stops (no
further call to the provider for that generation, no media stored), and B's writes go through. Against the
real store server; time is a hand-moved clock."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.support.fakes import CountingProvider, FinishedProvider
from tests.support.held_provider import HeldProvider
from tests.support.held_writes import HeldPuts, HeldWrites
from tests.support.orchestration import Orchestration
from tests.support.waiting import eventually
from videogen_common.domain import Status
from videogen_common.endings import end_generation
from videogen_common.failures import ErrorCode, GenerationError
from videogen_common.media import LocalMediaStore
from videogen_common.records.generation import GenerationRecord, StoredVideo
from videogen_common.repositories.generations import GenerationRepository
from videogen_common.repositories.leases import LeaseRepository
from videogen_common.store import Store
from videogen_orchestrator.outcomes import Finished, Lost
from videogen_orchestrator.providers.base import Output

Doc = dict[str, Any]

LEASE = timedelta(seconds=30)
VIDEO = StoredVideo("https://media.example/v", "k/video.mp4")


@pytest.fixture
async def orch(store: Store, base_env: dict[str, str], tmp_path: Path) -> AsyncIterator[Orchestration]:
    orchestration = Orchestration(store, base_env, tmp_path / "media")
    try:
        yield orchestration
    finally:
        await orchestration.stop()


async def claim(orch: Orchestration, generation_id: str, owner: str) -> GenerationRecord:
    now = orch.clock.now()
    record = await LeaseRepository(orch.store).claim_lease(
        generation_id, owner, now, now + LEASE, f"t-{owner}"
    )
    assert record is not None, f"{owner} could not claim {generation_id}"
    return record


async def taken_over(
    orch: Orchestration, generation_id: str, stale: GenerationRecord, by: str
) -> GenerationRecord:
    """The lease ``stale`` holds runs out and ``by`` claims the generation: its fence is one more."""
    orch.clock.advance(LEASE + timedelta(seconds=1))
    record = await claim(orch, generation_id, by)
    assert stale.lease_fence is not None and record.lease_fence == stale.lease_fence + 1
    return record


async def test_a_stale_holders_writes_of_every_kind_change_nothing_and_the_new_holders_go_through(
    orch: Orchestration,
) -> None:
    generations = GenerationRepository(orch.store)
    doc = await orch.insert()
    a = await claim(orch, doc["_id"], "orch-a")
    assert a.lease_fence == 1
    b = await taken_over(orch, doc["_id"], a, "orch-b")
    before = await orch.get(doc["_id"])
    now = orch.clock.now()

    # A's writes, each kind the holder makes, once it lost the lease: none matches.
    assert await generations.save_first_frame(a, "orch-a", "k/frame", "image/png", now) is None
    assert await generations.mark_submitting(a, "orch-a", now, {"duration_s": 3}) is None
    assert await generations.save_task_id(a, "orch-a", "task-a", now, None) is None
    assert not await generations.write_progress(a, "orch-a", 50)
    assert not await generations.still_owned(a, "orch-a")
    assert await generations.follow_provider(a, Status.QUEUED, now=now, owner="orch-a") is None
    assert (
        await end_generation(
            orch.store, a, VIDEO, prices=orch.settings().price_table, now=now, owner="orch-a"
        )
        is None
    )
    error = GenerationError(ErrorCode.PROVIDER_ERROR, "stale")
    assert (
        await end_generation(
            orch.store, a, error, prices=orch.settings().price_table, now=now, owner="orch-a"
        )
        is None
    )
    assert await orch.get(doc["_id"]) == before

    # B's go through.
    assert await generations.still_owned(b, "orch-b")
    b = await generations.save_task_id(b, "orch-b", "task-b", now, None) or pytest.fail("B's task id")
    assert await generations.write_progress(b, "orch-b", 40)
    ended = await end_generation(
        orch.store, b, VIDEO, prices=orch.settings().price_table, now=now, owner="orch-b"
    )
    assert ended is not None and ended.status is Status.COMPLETED
    final = await orch.get(doc["_id"])
    assert final["provider_task_id"] == "task-b"
    assert [step["status"] for step in final["timeline"]].count(Status.COMPLETED.value) == 1


async def test_the_fence_stops_a_stale_holder_even_when_its_owner_claims_the_generation_again(
    orch: Orchestration,
) -> None:
    """The owner alone is not enough: an instance of the same name (or the same one, healed, through its
    reconciler) may claim the generation again while the stale holder's actor still runs. The fence tells
    them apart; the version alone does not (a claim writes no new version)."""
    generations = GenerationRepository(orch.store)
    doc = await orch.insert()
    stale = await claim(orch, doc["_id"], "orch-a")
    b = await taken_over(orch, doc["_id"], stale, "orch-b")
    again = await taken_over(orch, doc["_id"], b, "orch-a")
    assert (again.lease_owner, again.version) == (stale.lease_owner, stale.version)
    now = orch.clock.now()

    assert await generations.save_task_id(stale, "orch-a", "task-stale", now, None) is None
    assert not await generations.write_progress(stale, "orch-a", 10)
    assert not await generations.still_owned(stale, "orch-a")
    assert await generations.save_task_id(again, "orch-a", "task-again", now, None) is not None
    assert (await orch.get(doc["_id"]))["provider_task_id"] == "task-again"


async def test_an_actor_whose_lease_was_taken_over_mid_poll_stops_calling_the_provider_and_stores_no_media(
    orch: Orchestration, tmp_path: Path
) -> None:
    held = HeldProvider()
    provider = CountingProvider(held)
    providers = {"mock": provider}
    doc = await orch.insert(duration=1)
    a = await claim(orch, doc["_id"], "orch-a")
    run_a = asyncio.create_task(orch.actor("orch-a", providers=providers).run(a))
    try:
        # A submitted, saved the task id and is polling (the poll is held at the provider).
        await held.until_submitted(1)
        await eventually(lambda: _polled(provider, 1), what="A's first poll")
        b = await taken_over(orch, doc["_id"], a, "orch-b")
        assert b.provider_task_id is not None
        before = await orch.get(doc["_id"])

        held.finish(doc["_id"])  # the poll A had in flight answers: the task succeeded
        async with asyncio.timeout(10):
            result = await run_a
    finally:
        run_a.cancel()
    assert isinstance(result, Lost)
    # A wrote nothing, called the provider no more and stored no media.
    assert await orch.get(doc["_id"]) == before
    assert (provider.submitted, len(provider.polled)) == ([doc["_id"]], 1)
    assert not (tmp_path / "media" / doc["_id"]).exists()

    # B resumes the same task (no second submit) and completes it normally.
    async with asyncio.timeout(10):
        finished = await orch.actor("orch-b", providers=providers).run(b)
    assert isinstance(finished, Finished) and finished.record.status is Status.COMPLETED
    assert provider.submitted == [doc["_id"]]
    final = await orch.get(doc["_id"])
    assert [step["status"] for step in final["timeline"]].count(Status.COMPLETED.value) == 1
    assert (tmp_path / "media" / doc["_id"]).exists()


async def _polled(provider: CountingProvider, count: int) -> bool:
    return len(provider.polled) >= count


@pytest.mark.parametrize("held", ["its copy", "its terminal write"])
async def test_a_holder_that_loses_its_lease_while_copying_the_media_writes_nothing_over_the_new_holders_copy(
    orch: Orchestration, base_env: dict[str, str], tmp_path: Path, held: str
) -> None:
    """The gap after the last check of a poll: A's task succeeded and A is copying the video when B takes
    the generation over and finishes it. Forced, not timed: A's copy (``HeldPuts``) or A's terminal write
    after its copy (``HeldWrites``) waits until B has completed. A's copy lands under keys of its own lease
    (its fence), never over B's; its terminal write matches nothing, so A deletes its copy; the generation
    names B's media, recorded once."""
    doc = await orch.insert(duration=1)
    gid = doc["_id"]
    media = LocalMediaStore(tmp_path / "media")
    puts = HeldPuts(media, lambda key: held == "its copy" and key.startswith(f"{gid}/"))
    stale = Orchestration(orch.store, base_env, puts, clock=orch.clock)
    as_a = {"mock": FinishedProvider(Output(video=b"video as A copied it", thumbnail=b"thumb A"))}
    as_b = {"mock": FinishedProvider(Output(video=b"video as B copied it", thumbnail=b"thumb B"))}

    def a_completing(collection: str, filter: Mapping[str, Any], update: Mapping[str, Any]) -> bool:
        moved_to = (update.get("$set") or {}).get("status")
        return (
            held == "its terminal write"
            and collection == "generations"
            and filter.get("_id") == gid
            and filter.get("lease_owner") == "orch-a"
            and moved_to == Status.COMPLETED.value
        )

    a = await claim(orch, gid, "orch-a")
    with HeldWrites(a_completing).installed() as writes:
        run_a = asyncio.create_task(stale.actor("orch-a", providers=as_a).run(a))
        try:
            if held == "its copy":
                await puts.until_held(1)  # past the check after its poll, and the one before the copy
            else:
                await writes.until_held(1)  # its copy stored, its terminal write on its way
                assert sorted(await media.keys_in(gid)) == [f"{gid}/thumbnail-1.jpg", f"{gid}/video-1.mp4"]
            b = await taken_over(orch, gid, a, "orch-b")
            async with asyncio.timeout(10):
                finished = await orch.actor("orch-b", providers=as_b).run(b)
            assert isinstance(finished, Finished) and finished.record.status is Status.COMPLETED
            completed = await orch.get(gid)

            puts.release()
            writes.release()
            async with asyncio.timeout(10):
                result = await run_a
        finally:
            run_a.cancel()
    assert isinstance(result, Lost)
    # B's copy, untouched, is all there is, and the generation names it; A's went again.
    assert completed["video_key"] == f"{gid}/video-2.mp4"
    assert completed["thumbnail_key"] == f"{gid}/thumbnail-2.jpg"
    assert sorted(await media.keys_in(gid)) == [f"{gid}/thumbnail-2.jpg", f"{gid}/video-2.mp4"]
    assert await media.get(f"{gid}/video-2.mp4") == b"video as B copied it"
    assert await media.get(f"{gid}/thumbnail-2.jpg") == b"thumb B"
    # The result recorded once: A's late write changed nothing.
    final = await orch.get(gid)
    assert final == completed
    assert [step["status"] for step in final["timeline"]].count(Status.COMPLETED.value) == 1
    events = orch.sink.events_of(gid) + stale.sink.events_of(gid)
    assert [e.type for e in events].count("video.completed") == 1


async def test_a_holder_whose_lease_ran_out_starts_no_submit_even_before_anyone_claims_it(
    orch: Orchestration,
) -> None:
    """Healed after a cut, a holder may find its lease run out but not yet claimed: every write of its own
    would still match. A submit it started then could be interrupted by the claim that may come at any moment
    (its task id never saved, the generation failed), so the submit mark asks for a live lease too."""
    generations = GenerationRepository(orch.store)
    doc = await orch.insert(duration=1)
    a = await claim(orch, doc["_id"], "orch-a")
    orch.clock.advance(LEASE + timedelta(seconds=1))  # its renewals never reached the store
    assert await generations.mark_submitting(a, "orch-a", orch.clock.now(), {"duration_s": 1}) is None

    provider = CountingProvider(HeldProvider())
    async with asyncio.timeout(10):
        result = await orch.actor("orch-a", providers={"mock": provider}).run(a)
    assert isinstance(result, Lost)
    assert provider.submitted == []
    stored = await orch.get(doc["_id"])
    assert stored.get("submit_started_at") is None and stored["lease_fence"] == a.lease_fence

    # Within its lease the same mark lands.
    fresh = await claim(orch, doc["_id"], "orch-a")
    assert await generations.mark_submitting(fresh, "orch-a", orch.clock.now(), {"duration_s": 1}) is not None
