"""An orchestrator cut off, not killed (issue 36, scenarios 1 and 2): processes over the real broker and
store, generations on a fake of Runway's API (a real HTTP server on 127.0.0.1 that counts every task-creation
request), and one orchestrator's link to the store or to the provider black-holed by a proxy
(``tests.support.partition``): connections stay open, bytes stop, and what was sent meanwhile is delivered on
the heal, late.

1. Cut off from the store mid-poll while a second orchestrator runs: the second takes the generations over
   once their leases run out (their fence grows) and finishes them; the first, healed, has its held writes
   delivered late and they match nothing (fencing), it stops those generations' work, submits nothing again,
   and each result is recorded once.
2. Cut off from its provider (silence, not refusal): the task is neither abandoned nor submitted again while
   the provider is silent, and it completes after the heal; the provider's breaker opens on the silent
   submits as on an outage, and a generation asking for "auto" goes elsewhere first."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.support.fake_providers.luma import FakeLuma
from tests.support.fake_providers.runway import FakeRunway
from tests.support.orchestrator_stack import Stack, orchestrator_stack, side
from tests.support.partition import Link, link_to, port_of, through
from tests.support.pipeline import call
from tests.support.services import ServiceProcess
from tests.support.stack import Stack as ApiStack
from tests.support.stack import running_stack
from tests.support.waiting import eventually
from videogen_common.settings import CommonSettings
from videogen_common.store import Store

pytestmark = pytest.mark.e2e

Doc = dict[str, Any]

LEASE_S = 4.0
TASK_S = 6.0  # how long a task runs at the fake provider: the cut lands while every one is polled
COUNT = 4
# Bounds (docs/guarantees.md): a take-over comes within the lease and a reconciler pass or two; every wait
# here adds the machine's slack to them.
TAKEOVER_BOUND_S = LEASE_S + 20
FINISH_BOUND_S = 60.0
STOP_BOUND_S = 30.0


async def in_flight(process: ServiceProcess) -> float:
    """What the orchestrator's ``videogen_generations_in_flight`` gauge says (its side port's /metrics)."""
    async with aiohttp.ClientSession() as session, session.get(side(process, "/metrics")) as response:
        text = await response.text()
    for line in text.splitlines():
        if line.startswith("videogen_generations_in_flight "):
            return float(line.split()[1])
    raise AssertionError("no videogen_generations_in_flight in /metrics")


@pytest.fixture
async def stack(
    base_env: dict[str, str], common_settings: CommonSettings, store: Store, tmp_path: Path
) -> AsyncIterator[Stack]:
    """Migrations, a key, a fake Runway and the api as a process; the test starts its orchestrators."""
    async with orchestrator_stack(
        base_env, common_settings, store, tmp_path, task_seconds=TASK_S, lease_seconds=LEASE_S
    ) as s:
        yield s


async def test_an_orchestrator_cut_off_from_the_store_mid_poll_is_taken_over_and_once_healed_writes_nothing(
    stack: Stack, store_link: Link
) -> None:
    first = stack.orchestrator(
        "orch-cut", VIDEOGEN_MONGO_URL=through(store_link, stack.env["VIDEOGEN_MONGO_URL"])
    )
    await stack.ready(first)
    created = await stack.create(COUNT, "cut-off")
    ids = list(created.values())

    async def all_polled_by_first() -> bool:
        docs = (await stack.by_id(ids)).values()
        return len(docs) == COUNT and all(
            d.get("provider_task_id") and d.get("lease_owner") == "orch-cut" and d["status"] != "completed"
            for d in docs
        )

    await eventually(all_polled_by_first, 30, "every task submitted and polled by the first orchestrator")
    store_link.cut()  # silence: its polls of the provider go on, its writes and renewals are held
    fences = {i: d["lease_fence"] for i, d in (await stack.by_id(ids)).items()}

    second = stack.orchestrator("orch-second")
    await stack.ready(second)

    async def taken_over_and_completed() -> bool:
        docs = (await stack.by_id(ids)).values()
        return all(d["status"] == "completed" and d["lease_fence"] == fences[d["_id"]] + 1 for d in docs)

    await eventually(
        taken_over_and_completed, TAKEOVER_BOUND_S + FINISH_BOUND_S, "the second took over, finished"
    )
    settled = await stack.by_id(ids)

    store_link.heal()  # the first's held writes reach the store, late
    await store_link.until(lambda link: link.held() == 0, STOP_BOUND_S, "the held bytes delivered")
    await eventually(lambda: _is_zero(in_flight(first)), STOP_BOUND_S, "the healed orchestrator stopped them")

    # It wrote nothing over the second's work, submitted nothing again; each result is recorded once.
    after = await stack.by_id(ids)
    # outbox_at: when the owed event is next republished. No notifier takes the events in here, so any
    # instance's reconciler republishes them on its pass (the same event, by id): no lease holder's write.
    changed = {i: _changed(settled[i], after[i], but=("outbox_at",)) for i in ids}
    assert changed == {i: {} for i in ids}
    for prompt, generation_id in created.items():
        assert stack.runway.submissions_for(prompt) == 1, generation_id
        doc = settled[generation_id]
        assert [s["status"] for s in doc["timeline"]].count("completed") == 1
        assert doc["provider_task_id"] in stack.runway.tasks
    assert len(stack.runway.submissions) == COUNT


def _changed(before: Doc, after: Doc, *, but: tuple[str, ...]) -> dict[str, tuple[Any, Any]]:
    return {
        key: (before.get(key), after.get(key))
        for key in (before.keys() | after.keys()) - set(but)
        if before.get(key) != after.get(key)
    }


async def _is_zero(value: Any) -> bool:
    return bool(await value == 0)


# -- 2. cut off from a provider ---------------------------------------------------------------------------

PROVIDER_TIMEOUT_S = 1.0
BREAKER_FAILURES = 2
SILENT_TASK_S = 3.0
# docs/guarantees.md: a submit the provider's silence leaves unanswered fails within the provider timeout.
SUBMIT_BOUND_S = PROVIDER_TIMEOUT_S + 20


@dataclass
class Silent:
    stack: ApiStack
    store: Store
    runway: FakeRunway
    luma: FakeLuma
    link: Link

    async def create(self, prompt: str, provider: str) -> str:
        body = {"prompt": prompt, "provider": provider, "duration": 5, "aspect_ratio": "16:9"}
        async with aiohttp.ClientSession() as session:
            status, created = await call(
                session, "POST", f"{self.stack.base}/v1/generate", self.stack.key, body
            )
        assert status == 202, created
        return str(created["id"])

    async def doc(self, generation_id: str) -> Doc:
        found = await self.store.generations.find_one({"_id": generation_id})
        assert found is not None
        return found

    async def finished(self, generation_id: str, bound: float) -> Doc:
        async def ended() -> bool:
            return (await self.doc(generation_id))["status"] in ("completed", "failed")

        await eventually(ended, bound, f"{generation_id} finished")
        return await self.doc(generation_id)

    async def poll_errors(self) -> float:
        """Runway polls that raised, by the orchestrator's ``videogen_provider_call_errors``."""
        async with (
            aiohttp.ClientSession() as session,
            session.get(self.stack.url("orchestrator", "/metrics")) as response,
        ):
            text = await response.text()
        return sum(
            float(line.split()[-1])
            for line in text.splitlines()
            if line.startswith("videogen_provider_call_errors_total{")
            and 'provider="runway"' in line
            and 'call="poll"' in line
        )


@pytest.fixture
async def silent(
    base_env: dict[str, str], common_settings: CommonSettings, store: Store, tmp_path: Path
) -> AsyncIterator[Silent]:
    """The api and one orchestrator; Runway (the cheaper for "auto") reached only through a link the test
    cuts, Luma directly."""
    async with (
        FakeRunway(task_seconds=SILENT_TASK_S) as runway,
        FakeLuma(task_seconds=0.3) as luma,
        link_to(port_of(runway.base_url), name="runway") as link,
    ):
        env = {
            "VIDEOGEN_PROVIDERS": "runway,luma",
            "VIDEOGEN_RUNWAY_API_KEY": runway.api_key,
            "VIDEOGEN_RUNWAY_BASE_URL": through(link, runway.base_url),
            "VIDEOGEN_LUMA_API_KEY": luma.api_key,
            "VIDEOGEN_LUMA_BASE_URL": luma.base_url,
            "VIDEOGEN_PROVIDER_TIMEOUT_SECONDS": str(PROVIDER_TIMEOUT_S),
            "VIDEOGEN_PROVIDER_RETRY_ATTEMPTS": "2",
            "VIDEOGEN_PROVIDER_RETRY_BASE_SECONDS": "0.01",
            "VIDEOGEN_PROVIDER_RETRY_MAX_SECONDS": "0.05",
            "VIDEOGEN_PROVIDER_BREAKER_FAILURES": str(BREAKER_FAILURES),
            "VIDEOGEN_PROVIDER_BREAKER_COOLDOWN_SECONDS": "600",
            "VIDEOGEN_PROVIDER_STATE_CACHE_SECONDS": "0",
            "VIDEOGEN_POLL_INTERVAL_SECONDS": "0.1",
            "VIDEOGEN_RECONCILE_INTERVAL_SECONDS": "0.5",
        }
        async with running_stack(
            base_env, common_settings, store, tmp_path / "logs", services=["api", "orchestrator"], env=env
        ) as stack:
            yield Silent(stack, store, runway, luma, link)


async def test_an_orchestrator_cut_off_from_a_provider_keeps_its_task_submits_nothing_blind_and_routes_around(
    silent: Silent,
) -> None:
    # A task running at Runway when the link goes silent.
    running = await silent.create("silent: running", "runway")

    async def polled() -> bool:
        return (await silent.doc(running)).get("provider_task_id") is not None

    await eventually(polled, 30, "the task submitted and polled")
    task_id = (await silent.doc(running))["provider_task_id"]
    silent.link.cut()
    errors = await silent.poll_errors()
    await eventually(lambda: _above(silent.poll_errors(), errors + 2), 30, "two polls unanswered")
    # Neither abandoned nor submitted again: still running on its task, which was submitted once.
    doc = await silent.doc(running)
    assert (doc["status"], doc["provider_task_id"]) in {("processing", task_id), ("queued", task_id)}
    assert silent.runway.submissions_for("silent: running") == 1

    # "auto" work meanwhile: Runway, the cheaper, first. A submit met by silence may have made a task, so
    # it is not submitted again anywhere (it fails, retriable); after BREAKER_FAILURES of them Runway's
    # breaker is open, as in an outage, and the next goes to Luma first.
    blind = []
    for n in range(BREAKER_FAILURES):
        blind.append(generation := await silent.create(f"silent: auto {n}", "auto"))
        ended = await silent.finished(generation, SUBMIT_BOUND_S)
        assert ended["status"] == "failed" and ended["error"]["code"] == "provider_unavailable", ended
        assert [a["provider"] for a in ended["provider_attempts"]] == ["runway"]
        assert silent.luma.submissions_for(f"silent: auto {n}") == 0
    routed = await silent.create("silent: routed", "auto")
    ended = await silent.finished(routed, SUBMIT_BOUND_S)
    assert ended["status"] == "completed" and ended["provider"] == "luma", ended
    assert ended["route"]["candidates"][0]["provider"] == "luma"
    assert [a["provider"] for a in ended["provider_attempts"]] == ["luma"]

    # Healed: the running task completes from the same task, submitted once.
    silent.link.heal()
    done = await silent.finished(running, 60)
    assert (done["status"], done["provider_task_id"]) == ("completed", task_id)
    assert silent.runway.submissions_for("silent: running") == 1
    assert silent.runway.submissions_for("silent: routed") == 0
    # The bounded window (docs/guarantees.md): a submit the silence held reaches Runway on the heal and may
    # make a task nobody polls; at most one per generation, never a second submit.
    await silent.link.until(lambda link: link.held() == 0, 30, "the held bytes delivered")
    for n in range(BREAKER_FAILURES):
        assert silent.runway.submissions_for(f"silent: auto {n}") <= 1


async def _above(value: Any, floor: float) -> bool:
    return bool(await value >= floor)
