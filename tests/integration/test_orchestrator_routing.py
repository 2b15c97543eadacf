"""Routing in the orchestrator, against fakes of Runway's and Luma's APIs on 127.0.0.1 (real HTTP) and the
real store: a generation whose route has other candidates moves on only when its attempt cost nothing, or,
with ``fallback_on_failure``, when the provider failed a task it had accepted; never when whether a task was
made is unknown. Each move is a new attempt, recorded with what it cost: the fakes count submissions, so each
generation is seen at most once by each provider and never by two at once. A key's breaker opens after
failures in a row, the next generations move on before submitting, and once its cool-down is over one probe
at a time goes there and closes it.

The runner is wired exactly as the service wires it (``tests.support.orchestration``); its clock moves with
real time and the test moves it past cool-downs."""

from __future__ import annotations

import itertools
import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_providers.luma import FakeLuma
from tests.support.fake_providers.runway import FakeRunway
from tests.support.fakes import ManualClock
from tests.support.orchestration import ProviderRun, provider_run
from tests.support.waiting import eventually
from videogen_common.domain import Provider
from videogen_common.records.health import PoolHealth
from videogen_common.repositories.provider_health import ProviderHealthRepository
from videogen_common.repositories.provider_pools import ProviderPoolRepository
from videogen_common.routing import Breaker
from videogen_common.store import Store

Doc = dict[str, Any]

RUNWAY_5S = 0.6  # gen4.5, $0.12 a second
LUMA_5S = 0.71  # Ray 2 at 720p, $0.142 a second


def route(*providers: str, fallback_on_failure: bool = False) -> Doc:
    """A route as the api stores it for a request naming these providers, in this order."""
    return {
        "requested": providers[0],
        "sort": None,
        "fallback_on_failure": fallback_on_failure,
        "candidates": [{"provider": p, "reason": "as requested"} for p in providers],
        "skipped": [],
        "reason": f"{providers[0]} first",
    }


class Routed:
    """One instance running generations that may go to Runway or Luma."""

    def __init__(self, run: ProviderRun, runway: FakeRunway, luma: FakeLuma) -> None:
        self.run, self.runway, self.luma = run, runway, luma
        self.health = ProviderHealthRepository(run.store)

    async def start(self, *providers: str, fallback_on_failure: bool = False, prompt: str = "a fox") -> str:
        doc = await self.run.wiring.insert(
            provider=Provider(providers[0]),
            duration=5,
            prompt=prompt,
            route=route(*providers, fallback_on_failure=fallback_on_failure),
        )
        assert await self.run.runner.start(doc["_id"])
        return str(doc["_id"])

    async def finish(self, generation_id: str) -> Doc:
        await self.run.runner.wait_idle()
        return await self.run.get(generation_id)

    async def until_finished(self, generation_id: str) -> Doc:
        """The generation once it is finished, while others may still run."""

        async def finished() -> bool:
            return (await self.run.get(generation_id))["status"] in ("completed", "failed")

        await eventually(finished, what=f"{generation_id} finished")
        return await self.run.get(generation_id)

    async def breaker(self, pool: str) -> tuple[Breaker, PoolHealth | None]:
        health = await self.health.get(pool)
        return (health.breaker(self.run.clock.now()) if health else Breaker.CLOSED), health

    def submitted(self, prompt: str) -> tuple[int, int]:
        """How many tasks each provider made for the prompt: (runway, luma)."""
        return self.runway.submissions_for(prompt), self.luma.submissions_for(prompt)


@asynccontextmanager
async def routing(
    store: Store, base_env: dict[str, str], media_root: Path, luma_task_seconds: float = 0.05, **settings: Any
) -> AsyncIterator[Routed]:
    """One instance with the fake Runway and Luma (tasks of 0.05 s unless told), a ticking clock, and
    ``settings`` on the orchestrator's."""
    async with (
        FakeRunway(task_seconds=0.05) as runway,
        FakeLuma(task_seconds=luma_task_seconds) as luma,
        provider_run(
            store, base_env, media_root, runway, ManualClock(ticking=True), others=[luma], **settings
        ) as run,
    ):
        yield Routed(run, runway, luma)


@pytest.fixture
async def routed(store: Store, base_env: dict[str, str], tmp_path: Path) -> AsyncIterator[Routed]:
    async with routing(
        store, base_env, tmp_path / "media", provider_breaker_failures=2, provider_breaker_cooldown_seconds=30
    ) as routed:
        yield routed


def _providers(doc: Doc) -> list[tuple[str, str | None]]:
    return [(a["provider"], a.get("error_code")) for a in doc.get("provider_attempts") or []]


def _one_after_the_other(doc: Doc) -> None:
    """Never at two providers at once: each try began after the one before it ended."""
    tries = doc["provider_attempts"]
    for before, after in itertools.pairwise(tries):
        assert before["ended_at"] <= after["started_at"]


async def test_an_unreachable_first_candidate_moves_the_generation_on_at_no_cost(routed: Routed) -> None:
    await routed.runway.go_down()

    doc = await routed.finish(await routed.start("runway", "luma", prompt="unreachable"))

    assert doc["status"] == "completed", doc["error"]
    assert doc["provider"] == "luma"
    assert _providers(doc) == [("runway", "provider_unavailable"), ("luma", None)]
    _one_after_the_other(doc)
    assert [a["cost"] for a in doc["provider_attempts"]] == [0.0, LUMA_5S]
    assert doc["cost"] == LUMA_5S
    assert doc["route"]["reason"] == "moved on to luma after runway failed (provider_unavailable)"
    assert routed.submitted("unreachable") == (0, 1)
    # The provider's fault: counted against its key (one failure; the breaker opens at two).
    state, health = await routed.breaker("runway")
    assert state is Breaker.CLOSED and health is not None and health.failures == 1


async def test_503s_at_submit_move_it_on_but_a_rejected_prompt_does_not(routed: Routed) -> None:
    # Runway documents 503 as "nothing was done": the submit is tried again, and every try is refused.
    routed.runway.fail_next(routed.run.settings.provider_retry_attempts, status=503, kind="submit")
    doc = await routed.finish(await routed.start("runway", "luma", prompt="shedding load"))
    assert (doc["status"], doc["provider"]) == ("completed", "luma")
    assert _providers(doc) == [("runway", "provider_unavailable"), ("luma", None)]

    routed.runway.fail_next(
        1, status=400, kind="submit", body={"error": "promptText must be at most 1000 characters"}
    )
    doc = await routed.finish(await routed.start("runway", "luma", prompt="refused"))
    assert (doc["status"], doc["error"]["code"], doc["provider"]) == ("failed", "provider_rejected", "runway")
    assert routed.submitted("refused") == (0, 0)


async def test_a_failed_task_moves_on_only_when_the_client_allowed_it(routed: Routed) -> None:
    routed.luma.failure = "The generation failed due to an internal error"  # Luma's own, retriable

    allowed = await routed.finish(
        await routed.start("luma", "runway", fallback_on_failure=True, prompt="allowed")
    )
    assert (allowed["status"], allowed["provider"]) == ("completed", "runway"), allowed["error"]
    assert _providers(allowed) == [("luma", "provider_error"), ("runway", None)]
    _one_after_the_other(allowed)
    # Luma refunds a failed generation: only Runway's video is charged.
    assert [a["cost"] for a in allowed["provider_attempts"]] == [0.0, RUNWAY_5S]
    assert allowed["cost"] == RUNWAY_5S
    assert routed.submitted("allowed") == (1, 1)

    not_allowed = await routed.finish(await routed.start("luma", "runway", prompt="not allowed"))
    assert (not_allowed["status"], not_allowed["error"]["code"]) == ("failed", "provider_error")
    assert not_allowed["provider"] == "luma"
    assert _providers(not_allowed) == [("luma", "provider_error")]
    assert not_allowed["cost"] == 0.0
    assert routed.submitted("not allowed") == (0, 1)


async def test_a_generation_that_moved_on_gives_back_its_slot_at_each_provider(
    store: Store, base_env: dict[str, str], tmp_path: Path
) -> None:
    # Both keys limited, so each holds a slot while the generation is there: Luma's is given back when its
    # task ends, Runway's when the generation finishes there (refused: no task, so no task's end frees it).
    async with routing(
        store, base_env, tmp_path / "media", luma_max_concurrency=2, runway_max_concurrency=2
    ) as routed:
        runway, luma = routed.runway, routed.luma
        luma.failure = "The generation failed due to an internal error"
        runway.fail_next(
            1, status=400, kind="submit", body={"error": "promptText must be at most 1000 characters"}
        )

        doc = await routed.finish(
            await routed.start("luma", "runway", fallback_on_failure=True, prompt="fails at both")
        )

        assert (doc["status"], doc["error"]["code"], doc["provider"]) == (
            "failed",
            "provider_rejected",
            "runway",
        )
        assert [p for p, _ in _providers(doc)] == ["luma", "runway"]
        assert routed.submitted("fails at both") == (0, 1)
        pools = ProviderPoolRepository(store)
        held = {p.id: p.running for p in await pools.of_providers(["luma", "runway"])}
        assert held == {"luma": 0, "runway": 0}


async def test_a_submit_whose_outcome_is_unknown_is_never_tried_elsewhere(routed: Routed) -> None:
    routed.luma.lose_next_submit_responses = 1  # the task is made, the answer lost

    doc = await routed.finish(
        await routed.start("luma", "runway", fallback_on_failure=True, prompt="unknown")
    )

    assert (doc["status"], doc["error"]["code"], doc["provider"]) == (
        "failed",
        "provider_unavailable",
        "luma",
    )
    assert "may or may not have started the task" in doc["error"]["message"]
    assert routed.submitted("unknown") == (0, 1)  # made at Luma, never sent to Runway


async def test_an_interrupted_submit_found_on_resume_is_never_tried_elsewhere(routed: Routed) -> None:
    run = routed.run
    now = run.clock.now()
    doc = await run.wiring.insert(
        provider=Provider.LUMA,
        duration=5,
        prompt="interrupted",
        route=route("luma", "runway", fallback_on_failure=True),
        # Its owner died between the mark and the save of a task id.
        submit_started_at=now,
        lease_owner="dead",
        lease_expires_at=now - timedelta(seconds=1),
    )
    assert await run.runner.start(doc["_id"], waiting=True)
    final = await routed.finish(doc["_id"])

    assert (final["status"], final["error"]["code"], final["provider"]) == (
        "failed",
        "provider_unavailable",
        "luma",
    )
    assert routed.submitted("interrupted") == (0, 0)


async def test_the_breaker_opens_moves_the_next_ones_before_they_submit_and_a_probe_closes_it(
    routed: Routed,
) -> None:
    await routed.runway.go_down()
    for i in range(2):  # two failures in a row open it
        doc = await routed.finish(await routed.start("runway", "luma", prompt=f"down {i}"))
        assert (doc["status"], doc["provider"]) == ("completed", "luma")
    state, health = await routed.breaker("runway")
    assert state is Breaker.OPEN and health is not None and health.opened_until is not None

    await routed.runway.come_back()
    before = len(routed.runway.requests)
    doc = await routed.finish(await routed.start("runway", "luma", prompt="while open"))
    assert (doc["status"], doc["provider"]) == ("completed", "luma")
    assert _providers(doc) == [("luma", None)]  # moved before anything was sent: no try at Runway
    assert doc["route"]["reason"] == "moved to luma before submitting: runway: breaker open"
    assert len(routed.runway.requests) == before

    # The cool-down passes: half-open, one probe at a time. The first goes as the probe (and stays there);
    # the second, while the probe is out, moves on.
    routed.run.clock.advance(timedelta(seconds=31))
    routed.runway.task_seconds = math.inf
    probe = await routed.start("runway", "luma", prompt="probe")
    await eventually(lambda: _submitted(routed.runway, "probe"))
    state, health = await routed.breaker("runway")
    assert state is Breaker.HALF_OPEN and health is not None and health.probe == probe
    second = await routed.start("runway", "luma", prompt="while probing")
    await eventually(lambda: _submitted(routed.luma, "while probing"))
    assert routed.submitted("while probing") == (0, 1)

    for task in routed.runway.tasks.values():
        task.run_seconds = 0
    assert (await routed.finish(probe))["provider"] == "runway"
    assert (await routed.finish(second))["provider"] == "luma"
    state, health = await routed.breaker("runway")
    assert state is Breaker.CLOSED and health is not None and health.failures == 0
    # Closed again: Runway takes its own again.
    routed.runway.task_seconds = 0.05
    doc = await routed.finish(await routed.start("runway", "luma", prompt="back"))
    assert (doc["provider"], _providers(doc)) == ("runway", [("runway", None)])


async def _submitted(fake: FakeRunway | FakeLuma, prompt: str) -> bool:
    return fake.submissions_for(prompt) == 1


async def test_a_candidate_without_room_is_passed_for_a_later_one_with_room(
    store: Store, base_env: dict[str, str], tmp_path: Path
) -> None:
    async with routing(
        store, base_env, tmp_path / "media", luma_task_seconds=math.inf, luma_max_concurrency=1
    ) as routed:
        run, luma = routed.run, routed.luma
        holder = await routed.start("luma", "runway", prompt="holds luma's slot")
        await eventually(lambda: _submitted(luma, "holds luma's slot"))

        doc = await routed.until_finished(await routed.start("luma", "runway", prompt="passes"))

        assert (doc["status"], doc["provider"]) == ("completed", "runway")
        assert _providers(doc) == [("runway", None)]
        assert (
            doc["route"]["reason"]
            == "moved to runway before submitting: luma: no free capacity; runway has some"
        )
        assert routed.submitted("passes") == (1, 0)
        # A request for Luma alone waits its turn there, as before routing.
        alone = (await run.wiring.insert(provider=Provider.LUMA, duration=5, prompt="alone"))["_id"]
        assert not await run.runner.start(alone)
        assert (await run.get(alone))["queue_reason"] == "provider_capacity"
        for task in luma.tasks.values():
            task.run_seconds = 0
        luma.task_seconds = 0.05
        await run.runner.wait_idle()
        assert (await run.get(alone))["status"] == "completed"
        assert (await run.get(holder))["status"] == "completed"


async def test_a_refusal_for_capacity_moves_it_to_a_candidate_with_room_instead_of_waiting(
    routed: Routed,
) -> None:
    routed.luma.max_running = 0  # Luma answers 429 to every submit

    doc = await routed.finish(await routed.start("luma", "runway", prompt="refused for capacity"))

    assert (doc["status"], doc["provider"]) == ("completed", "runway"), doc["error"]
    assert _providers(doc) == [("luma", "provider_unavailable"), ("runway", None)]
    assert doc["route"]["reason"] == "moved to runway: luma refused it for capacity"
    assert routed.luma.capacity_refusals == 1
    assert routed.submitted("refused for capacity") == (1, 0)
    # A capacity refusal is not the provider's ill health.
    state, health = await routed.breaker("luma")
    assert state is Breaker.CLOSED and (health is None or health.failures == 0)
