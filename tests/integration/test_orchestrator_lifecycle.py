"""The orchestrator's actor, runner and reconciler against the real MongoDB: leases, compare-and-set
transitions, resumption without paying the provider twice, and the events' outbox.

Time is a hand-moved clock, so leases and grace periods are exercised without sleeping; the event sink records
envelopes instead of producing to Kafka (the e2e test covers the producer)."""

from __future__ import annotations

import asyncio
import io
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import av
import pytest

from tests.support.fakes import CountingProvider
from tests.support.generations import PROMPT, insert_generation
from tests.support.orchestration import Orchestration
from tests.support.waiting import eventually
from videogen_common.clock import SystemClock, isoformat
from videogen_common.domain import Provider, Status
from videogen_common.events import STATUS, Envelope, status_event_id
from videogen_common.generations import TransitionError, public_view, terminal_event
from videogen_common.ids import new_id
from videogen_common.media import verify_media_link
from videogen_common.records.event import Event
from videogen_common.records.generation import GenerationRecord
from videogen_common.repositories.generations import GenerationRepository
from videogen_common.repositories.outbox import OutboxRepository
from videogen_common.store import Store
from videogen_orchestrator.progress import ProgressReporter
from videogen_orchestrator.providers.mock import MockProvider
from videogen_orchestrator.runner import HANDED_BACK

Doc = dict[str, Any]

LEASE = timedelta(seconds=30)
GRACE = timedelta(seconds=10)
TICK = timedelta(milliseconds=1)
ACCOUNT = "acme"

SLOW_MS = 60_000  # a provider that never answers within a test


class Orchestrator(Orchestration):
    """The pieces runtime.py wires together (tests.support.orchestration), built per owner on one store,
    clock, sink and media folder, with the mock provider at hand as ``mock``."""

    def __init__(self, store: Store, base_env: dict[str, str], media_root: Path) -> None:
        self.mock = MockProvider()
        super().__init__(store, base_env, media_root, providers={"mock": self.mock})


@pytest.fixture
async def orch(store: Store, base_env: dict[str, str], tmp_path: Path) -> AsyncIterator[Orchestrator]:
    orchestrator = Orchestrator(store, base_env, tmp_path / "media")
    try:
        yield orchestrator
    finally:
        await orchestrator.stop()  # no actor outlives its test (or its database)


def expected_envelope(doc: Doc) -> Envelope:
    return Envelope(
        event_id=status_event_id(doc["_id"], doc["status"], doc["version"]),
        type=STATUS,
        occurred_at=isoformat(doc["updated_at"]),
        account_id=doc["account_id"],
        generation=public_view(doc),
        trace_id=None,
        version=doc["version"],
    )


def expected_event(doc: Doc) -> Event:
    """The owed event of a terminal generation's document, as the orchestrator publishes it."""
    return terminal_event(GenerationRecord.from_doc(doc))


async def owed(orch: Orchestrator, doc: Doc) -> bool:
    """Whether the generation still owes the notifier its terminal event (carried in its outbox)."""
    stored = await orch.get(doc["_id"])
    return [owed["_id"] for owed in stored.get("outbox") or ()] == [expected_event(doc).id]


def split_media_link(url: str, base_url: str) -> tuple[str, int, str]:
    """``{base}/v1/media/{key}?exp=…&sig=…`` → (key, exp, sig)."""
    parts, base = urlsplit(url), urlsplit(base_url)
    assert (parts.scheme, parts.netloc) == (base.scheme, base.netloc)
    assert parts.path.startswith("/v1/media/"), url
    query = parse_qs(parts.query, strict_parsing=True)
    assert set(query) == {"exp", "sig"}
    return parts.path.removeprefix("/v1/media/"), int(query["exp"][0]), query["sig"][0]


def mp4_duration_seconds(data: bytes) -> float:
    with av.open(io.BytesIO(data), mode="r") as container:
        assert container.format.name.startswith("mov,mp4")
        assert len(container.streams.video) == 1
        assert container.duration is not None
        return container.duration / av.time_base


def assert_lease_cleared(doc: Doc) -> None:
    assert doc["lease_owner"] is None
    assert doc["lease_expires_at"] is None


async def test_a_started_generation_completes_with_signed_media_a_playable_mp4_and_one_status_event(
    orch: Orchestrator,
) -> None:
    runner = orch.runner()
    inserted = await orch.insert(duration=3)
    gid = inserted["_id"]

    assert await runner.start(gid) is True
    await runner.wait_idle()

    doc = await orch.get(gid)
    assert doc["status"] == "completed"
    assert doc["error"] is None
    assert doc["version"] > inserted["version"]
    assert_lease_cleared(doc)
    assert doc["provider_task_id"] == f"mock_{gid}"
    assert orch.mock.submitted == [gid]

    settings = orch.settings()
    signing_key = settings.media_signing_key.get_secret_value()
    expires = int((orch.clock.now() + timedelta(days=settings.media_retention_days)).timestamp())
    video_key, video_exp, video_sig = split_media_link(doc["video_url"], settings.public_base_url)
    thumb_key, thumb_exp, thumb_sig = split_media_link(doc["thumbnail_url"], settings.public_base_url)
    # Named by the lease's fence (the first claim's: 1), so no two holders share a key (media_copy).
    assert (video_key, thumb_key) == (f"{gid}/video-1.mp4", f"{gid}/thumbnail-1.jpg")
    assert (doc["video_key"], doc["thumbnail_key"]) == (video_key, thumb_key)
    assert video_exp == thumb_exp == expires
    assert verify_media_link(signing_key, video_key, video_exp, video_sig, now=orch.clock.now())
    assert verify_media_link(signing_key, thumb_key, thumb_exp, thumb_sig, now=orch.clock.now())
    assert not verify_media_link("another-key", video_key, video_exp, video_sig, now=orch.clock.now())

    video = await orch.media.get(video_key)
    thumbnail = await orch.media.get(thumb_key)
    assert video is not None and thumbnail is not None
    assert thumbnail.startswith(b"\xff\xd8")  # JPEG
    assert await asyncio.to_thread(mp4_duration_seconds, video) == inserted["duration"]

    assert orch.sink.envelopes == [expected_envelope(doc)]
    envelope = orch.sink.envelopes[0]
    assert envelope.type == "generation.status"
    assert envelope.generation == public_view(doc)
    assert envelope.event_id == status_event_id(gid, "completed", doc["version"])
    # Its video.completed event, stored by the terminal transition and owed until the notifier takes it in.
    assert orch.sink.events == [expected_event(doc)]
    assert orch.sink.events[0].type == "video.completed" and orch.sink.events[0].id == envelope.event_id
    assert await owed(orch, doc)


async def test_fail_marker_in_the_prompt_ends_failed_with_mock_failure_and_a_status_event(
    orch: Orchestrator,
) -> None:
    runner = orch.runner()
    gid = (await orch.insert(prompt="please #fail this one"))["_id"]

    assert await runner.start(gid)
    await runner.wait_idle()

    doc = await orch.get(gid)
    assert doc["status"] == "failed"
    assert doc["error"] == {
        "code": "mock_failure",
        "message": "the mock provider failed this generation as asked",
        "provider_code": "mock.failure",
        "retriable": False,
    }
    assert doc["video_url"] is None and doc["thumbnail_url"] is None
    assert_lease_cleared(doc)
    assert orch.sink.envelopes == [expected_envelope(doc)]
    assert orch.sink.envelopes[0].generation["error"]["code"] == "mock_failure"
    assert orch.sink.events == [expected_event(doc)] and orch.sink.events[0].type == "video.failed"
    assert await owed(orch, doc)  # until the notifier takes the event in


async def test_a_provider_missing_from_the_providers_map_ends_failed_with_provider_unavailable(
    orch: Orchestrator,
) -> None:
    runner = orch.runner()
    gid = (await orch.insert(provider=Provider.RUNWAY))["_id"]

    assert await runner.start(gid)
    await runner.wait_idle()

    doc = await orch.get(gid)
    assert doc["status"] == "failed"
    assert doc["error"]["code"] == "provider_unavailable"
    assert "runway" in doc["error"]["message"]
    assert doc["provider_task_id"] is None
    assert orch.mock.submitted == []
    assert_lease_cleared(doc)
    assert orch.sink.envelopes == [expected_envelope(doc)]


async def test_starting_the_same_generation_twice_submits_once_and_finishes_once(orch: Orchestrator) -> None:
    runner = orch.runner()
    gid = (await orch.insert())["_id"]

    assert await runner.start(gid) is True
    assert await runner.start(gid) is False  # already in flight here
    await runner.wait_idle()
    assert await runner.start(gid) is False  # finished

    doc = await orch.get(gid)
    assert doc["status"] == "completed"
    assert doc["attempts"] == 1
    assert orch.mock.submitted == [gid]
    assert len(orch.sink.for_generation(gid)) == 1


async def test_concurrent_starts_of_the_same_generation_on_one_runner_submit_once(orch: Orchestrator) -> None:
    runner = orch.runner()
    gid = (await orch.insert())["_id"]

    started = await asyncio.gather(runner.start(gid), runner.start(gid))
    await runner.wait_idle()
    # Also wait for any actor the runner lost track of, so nothing outlives the test.
    await asyncio.gather(*(t for t in asyncio.all_tasks() if t.get_name() == f"actor:{gid}"))

    assert sorted(started) == [False, True]
    assert orch.mock.submitted == [gid]
    assert len(orch.sink.for_generation(gid)) == 1


async def test_runners_with_different_owners_racing_for_one_generation_submit_once_and_finish_once(
    orch: Orchestrator,
) -> None:
    runners = [orch.runner(f"orch-{i}") for i in range(4)]
    gid = (await orch.insert())["_id"]

    started = await asyncio.gather(*(r.start(gid) for r in runners))
    for runner in runners:
        await runner.wait_idle()

    assert sorted(started) == [False, False, False, True]
    doc = await orch.get(gid)
    assert doc["status"] == "completed"
    assert doc["attempts"] == 1
    assert orch.mock.submitted == [gid]
    assert orch.sink.for_generation(gid) == [expected_envelope(doc)]


async def test_a_live_lease_of_another_owner_is_respected_until_it_expires(orch: Orchestrator) -> None:
    runner = orch.runner("orch-a")
    reconciler = orch.reconciler(runner)
    expires = orch.clock.now() + LEASE
    inserted = await orch.insert(lease_owner="orch-b", lease_expires_at=expires, attempts=1)
    gid = inserted["_id"]

    assert await runner.start(gid) is False
    assert await reconciler.run_once() == (0, 0)
    orch.clock.set(expires)  # expires at, not yet before, now
    assert await runner.start(gid) is False
    assert await orch.get(gid) == inserted
    assert orch.mock.submitted == []

    orch.clock.advance(TICK)
    assert await runner.start(gid) is True
    await runner.wait_idle()

    doc = await orch.get(gid)
    assert doc["status"] == "completed"
    assert doc["attempts"] == 2
    assert_lease_cleared(doc)
    assert orch.mock.submitted == [gid]


async def test_a_reconciler_pass_renews_the_leases_of_its_runners_in_flight_generations(
    orch: Orchestrator,
) -> None:
    runner = orch.runner("orch-a", providers={"mock": MockProvider(latency_ms=SLOW_MS)})
    reconciler = orch.reconciler(runner)
    other = orch.runner("orch-b")
    gid = (await orch.insert())["_id"]
    assert await runner.start(gid)

    orch.clock.advance(LEASE - timedelta(seconds=1))
    assert await reconciler.run_once() == (0, 0)
    assert (await orch.get(gid))["lease_expires_at"] == orch.clock.now() + LEASE

    orch.clock.advance(LEASE - timedelta(seconds=1))  # past the first lease, inside the renewed one
    assert await other.start(gid) is False
    doc = await orch.get(gid)
    assert doc["lease_owner"] == "orch-a"
    assert doc["attempts"] == 1
    assert orch.mock.submitted == []


async def test_the_reconciler_resumes_an_expired_lease_with_a_saved_task_id_without_submitting_again(
    orch: Orchestrator,
) -> None:
    provider = CountingProvider(MockProvider())
    runner = orch.runner(providers={"mock": provider})
    reconciler = orch.reconciler(runner)
    gid = new_id("gen", orch.clock.now())
    # A previous owner submitted, saved the task id (version 2) and died.
    await orch.insert(
        generation_id=gid,
        provider_task_id=f"mock_{gid}",
        version=2,
        attempts=1,
        lease_owner="orch-dead",
        lease_expires_at=orch.clock.now() + LEASE,
    )
    orch.clock.advance(LEASE + TICK)

    assert await reconciler.run_once() == (1, 0)
    await runner.wait_idle()

    doc = await orch.get(gid)
    assert doc["status"] == "completed"
    assert doc["attempts"] == 2
    assert provider.submitted == []
    assert provider.polled == [f"mock_{gid}"]
    assert orch.sink.for_generation(gid) == [expected_envelope(doc)]


async def test_the_reconciler_picks_up_a_never_leased_generation_only_after_the_dispatch_grace(
    orch: Orchestrator,
) -> None:
    runner = orch.runner()
    reconciler = orch.reconciler(runner)
    gid = (await orch.insert())["_id"]

    assert await reconciler.run_once() == (0, 0)
    orch.clock.advance(GRACE)
    assert await reconciler.run_once() == (0, 0)
    assert (await orch.get(gid))["lease_owner"] is None
    assert orch.mock.submitted == []

    orch.clock.advance(TICK)
    assert await reconciler.run_once() == (1, 0)
    await runner.wait_idle()

    doc = await orch.get(gid)
    assert doc["status"] == "completed"
    assert orch.mock.submitted == [gid]
    assert orch.sink.for_generation(gid) == [expected_envelope(doc)]


async def test_the_outbox_republishes_an_event_the_notifier_has_not_taken_in_once_a_grace(
    orch: Orchestrator,
) -> None:
    runner = orch.runner()
    reconciler = orch.reconciler(runner)
    gid = (await orch.insert(prompt="#fail"))["_id"]
    orch.sink.failure = ConnectionError("broker unreachable")

    assert await runner.start(gid)
    await runner.wait_idle()
    doc = await orch.get(gid)
    assert doc["status"] == "failed"
    assert await owed(orch, doc)
    assert orch.sink.events == []
    assert orch.sink.event_attempts == 1

    orch.clock.advance(GRACE)  # not older than grace yet
    assert await reconciler.run_once() == (0, 0)
    assert orch.sink.event_attempts == 1

    orch.clock.advance(TICK)
    assert await reconciler.run_once() == (0, 0)  # tried, the sink raised
    assert orch.sink.event_attempts == 2
    assert await owed(orch, doc)

    orch.sink.failure = None
    assert await reconciler.run_once() == (0, 1)
    assert orch.sink.events == [expected_event(doc)]
    # On Kafka is not taken in: still owed, but not republished again before another grace.
    assert await owed(orch, doc)
    assert await reconciler.run_once() == (0, 0)
    orch.clock.advance(GRACE + TICK)
    assert await reconciler.run_once() == (0, 1)  # the broker may have lost it: the same event again
    assert [e.id for e in orch.sink.events] == [expected_event(doc).id] * 2
    assert orch.sink.events[1].data == expected_event(doc).data

    # What the notifier does once it has recorded the event and its deliveries.
    await OutboxRepository(orch.store).settle([expected_event(doc)])
    assert not await owed(orch, doc)
    after = await orch.get(gid)
    assert after == {k: v for k, v in doc.items() if k not in ("outbox", "outbox_at")}
    orch.clock.advance(GRACE + TICK)
    assert await reconciler.run_once() == (0, 0)
    assert len(orch.sink.events) == 2


async def test_transition_with_a_stale_version_returns_none_and_changes_nothing(orch: Orchestrator) -> None:
    stale = await orch.insert()
    await orch.store.generations.update_one({"_id": stale["_id"]}, {"$inc": {"version": 1}})
    current = await orch.get(stale["_id"])

    moved = await GenerationRepository(orch.store).transition(
        stale,
        Status.COMPLETED,
        now=orch.clock.advance(TICK),
        fields={"video_url": "http://example.invalid/v.mp4"},
    )

    assert moved is None
    assert await orch.get(stale["_id"]) == current


async def test_transition_out_of_a_terminal_state_raises_and_changes_nothing(orch: Orchestrator) -> None:
    inserted = await orch.insert()
    completed = await GenerationRepository(orch.store).transition(
        inserted, Status.COMPLETED, now=orch.clock.advance(TICK)
    )
    assert completed is not None
    assert completed["status"] == "completed"
    assert completed["version"] == inserted["version"] + 1
    assert await owed(orch, completed)  # its event, carried by the same write

    with pytest.raises(TransitionError):
        await GenerationRepository(orch.store).transition(
            completed, Status.PROCESSING, now=orch.clock.advance(TICK)
        )

    assert await orch.get(inserted["_id"]) == completed


@pytest.mark.parametrize(("prompt", "final"), [(PROMPT, "completed"), ("#fail", "failed")])
async def test_a_terminal_generation_is_never_claimed_or_submitted_again(
    orch: Orchestrator, prompt: str, final: str
) -> None:
    runner = orch.runner("orch-a")
    gid = (await orch.insert(prompt=prompt))["_id"]
    assert await runner.start(gid)
    await runner.wait_idle()
    finished = await orch.get(gid)
    await OutboxRepository(orch.store).settle([expected_event(finished)])  # the notifier took it in
    finished = await orch.get(gid)
    assert finished["status"] == final
    submitted, envelopes, events = (
        list(orch.mock.submitted),
        list(orch.sink.envelopes),
        list(orch.sink.events),
    )

    other = orch.runner("orch-b")
    assert await runner.start(gid) is False
    assert await other.start(gid) is False
    orch.clock.advance(LEASE + GRACE + TICK)
    assert await orch.reconciler(other).run_once() == (0, 0)
    await other.wait_idle()

    assert await orch.get(gid) == finished
    assert orch.mock.submitted == submitted == [gid]
    assert orch.sink.envelopes == envelopes and orch.sink.events == events
    assert runner.in_flight == other.in_flight == 0


async def test_stop_hands_back_the_leases_of_in_flight_generations_for_another_runner_to_resume(
    orch: Orchestrator,
) -> None:
    slow = MockProvider(latency_ms=SLOW_MS)
    first = orch.runner("orch-a", providers={"mock": slow})
    gid = (await orch.insert())["_id"]

    assert await first.start(gid)

    async def task_id_saved() -> bool:
        return (await orch.get(gid))["provider_task_id"] is not None

    await eventually(task_id_saved)
    leased = await orch.get(gid)
    assert leased["lease_owner"] == "orch-a"

    await first.stop()

    released = await orch.get(gid)
    assert released["status"] == "processing"
    # Handed back: no owner, and a lease that expired long ago, so any instance takes it at once.
    assert released["lease_owner"] is None
    assert released["lease_expires_at"] == HANDED_BACK
    assert released["provider_task_id"] == f"mock_{gid}"
    assert first.in_flight == 0
    assert await first.start(gid) is False  # a stopped runner takes no work

    fast = CountingProvider(MockProvider())
    second = orch.runner("orch-b", providers={"mock": fast})
    assert await second.start(gid) is True  # at once: same clock, no expiry to wait for
    await second.wait_idle()

    doc = await orch.get(gid)
    assert doc["status"] == "completed"
    assert slow.submitted == [gid]
    assert fast.submitted == []
    assert fast.polled == [f"mock_{gid}"]


async def test_a_full_runner_refuses_more_work_when_told_not_to_wait_for_a_slot(orch: Orchestrator) -> None:
    runner = orch.runner(providers={"mock": MockProvider(latency_ms=SLOW_MS)}, max_in_flight=1)
    first = (await orch.insert())["_id"]
    second = await orch.insert(prompt="the second one")

    assert await runner.start(first) is True
    assert await runner.start(second["_id"], wait_for_slot=False) is False

    assert runner.in_flight == 1
    assert runner.owns(first) and not runner.owns(second["_id"])
    assert await orch.get(second["_id"]) == second  # not claimed


async def test_a_client_deadline_cuts_a_slow_task_short_fails_deadline_exceeded_and_cancels_it(
    orch: Orchestrator,
) -> None:
    clock = SystemClock()  # the deadline is kept in real time, mid-poll
    orch.mock = MockProvider(latency_ms=SLOW_MS)  # far past the deadline, however slow the machine
    runner = orch.runner(clock=clock, providers={"mock": orch.mock})
    now = clock.now()
    gid = (
        await insert_generation(orch.store, now, account_id=ACCOUNT, deadline_at=now + timedelta(seconds=1))
    )["_id"]

    assert await runner.start(gid)
    await runner.wait_idle()

    doc = await orch.get(gid)
    assert doc["status"] == "failed"
    assert doc["error"]["code"] == "deadline_exceeded" and doc["error"]["retriable"] is True
    assert orch.mock.canceled == [doc["provider_task_id"]]  # the provider's task was told to stop
    # Failed at the deadline, not after the 5 s the task would have taken.
    assert doc["updated_at"] - now < timedelta(seconds=4)
    assert [e.generation["error"]["code"] for e in orch.sink.envelopes] == ["deadline_exceeded"]


async def test_progress_is_offered_as_a_video_progress_notice_at_most_once_per_notice_interval(
    orch: Orchestrator,
) -> None:
    """Progress is written and published every ``every`` seconds; only one such change per
    ``notice_every`` seconds is also published as a ``video.progress`` event for webhooks. The provider taking
    the task is published as ``video.processing``. Both are best effort: never stored."""
    owner = "orch-a"
    doc = await orch.insert(
        lease_owner=owner, provider_task_id="task_1", lease_expires_at=orch.clock.now() + LEASE
    )
    reporter = ProgressReporter(
        store=orch.store, sink=orch.sink, clock=orch.clock, owner=owner, every=2, notice_every=10
    )
    reporter.started(GenerationRecord.from_doc(doc))
    await reporter.settled()
    for step in range(7):  # every 2 s: 10 %, 20 %, … 70 %, at 0, 2, … 12 s
        reporter.seen(10 * (step + 1))
        await reporter.settled()
        orch.clock.advance(timedelta(seconds=2))

    assert [e.generation["progress"] for e in orch.sink.progress] == [None, 10, 20, 30, 40, 50, 60, 70]
    published = [(e.data["progress"], e.type, e.owed) for e in orch.sink.notices]
    assert published == [
        (None, "video.processing", False),
        (10, "video.progress", False),
        (60, "video.progress", False),  # 10 s after the first notice
    ]
    assert orch.sink.events == []
    assert [e.id for e in orch.sink.notices[1:]] == [
        e.event_id for e in orch.sink.progress if e.generation["progress"] in (10, 60)
    ]
    assert "outbox" not in await orch.get(doc["_id"])  # best effort: never owed
    assert (await orch.get(doc["_id"]))["progress"] == 70
    await reporter.close()
