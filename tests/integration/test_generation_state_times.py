"""Each transition adds the time spent in the state it leaves to the generation's ``state_seconds``, in the
store and in the document it returns, so a finished generation says how long it queued and processed."""

from __future__ import annotations

from datetime import timedelta

from tests.support.fakes import ManualClock
from videogen_common.domain import Provider, Status
from videogen_common.generations import new_generation, public_view
from videogen_common.repositories.generations import GenerationRepository
from videogen_common.store import Store


async def test_time_in_each_state_accumulates_across_transitions(store: Store) -> None:
    clock = ManualClock()
    doc = new_generation(
        generation_id="gen_times",
        account_id="acme",
        prompt="a red fox",
        provider=Provider.MOCK,
        duration=3,
        now=clock.now(),
    )
    await store.generations.insert_one(doc)
    steps = [(Status.QUEUED, 2.5), (Status.PROCESSING, 4.0), (Status.QUEUED, 1.0), (Status.FAILED, 3.25)]
    # processing 2.5 s (since creation), queued 4 s, processing 1 s, queued 3.25 s, then failed.
    for target, seconds in steps:
        moved = await GenerationRepository(store).transition(
            doc, target, now=clock.advance(timedelta(seconds=seconds))
        )
        assert moved is not None
        doc = moved
        stored = await store.generations.find_one({"_id": "gen_times"})
        assert stored == doc  # what a transition returns is what it wrote
        assert stored["status_since"] == clock.now()
    assert doc["state_seconds"] == {"processing": 3.5, "queued": 7.25}
    assert "state_seconds" not in public_view(doc) and "status_since" not in public_view(doc)
