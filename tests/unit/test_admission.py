"""Admission's pure parts: the fair turn of waiting lanes, a pool's room, the poll interval as a task ages,
the request-rate cap, and the settings that describe each provider's keys and limits."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from tests.support.env import settings_for
from videogen_common.domain import Provider, Status
from videogen_common.records.admission import Holder, ProviderPool, WaitingLane, lane_id
from videogen_common.records.generation import GenerationRecord
from videogen_common.settings import SettingsError, load_settings
from videogen_orchestrator.admission import _in_fair_turn
from videogen_orchestrator.deadlines import poll_pause
from videogen_orchestrator.providers.rate import RateLimiter
from videogen_orchestrator.settings import OrchestratorSettings

T0 = datetime(2026, 11, 26, 9, 0, tzinfo=UTC)


def lane(account: str, rank: int = 1, waited: int = 0) -> WaitingLane:
    """A pending lane whose run of waiting began ``waited`` seconds after T0."""
    return WaitingLane(
        id=lane_id("luma", account, rank),
        provider="luma",
        account_id=account,
        rank=rank,
        pending=True,
        waiting=1,
        since=T0 + timedelta(seconds=waited),
    )


@pytest.mark.parametrize(
    ("lanes", "running", "held", "turn"),
    [
        # Fewest running at the provider first, whoever waited longer.
        ([lane("big", waited=0), lane("small", waited=9)], {"big": 5}, {}, ["small", "big"]),
        # Among equals, the one waiting longest.
        ([lane("b", waited=5), lane("a", waited=1)], {}, {}, ["a", "b"]),
        # An account at its own cap is not offered a slot, however little it runs here.
        ([lane("capped"), lane("other", waited=3)], {"other": 2}, {"capped": 4}, ["other"]),
        # One account's lanes in priority order, together in its turn.
        (
            [lane("a", rank=2), lane("b", waited=1), lane("a", rank=0)],
            {"a": 0, "b": 1},
            {},
            ["a:0", "a:2", "b:1"],
        ),
    ],
)
def test_lanes_are_offered_slots_in_fair_turn(
    lanes: list[WaitingLane], running: dict[str, int], held: dict[str, int], turn: list[str]
) -> None:
    ordered = _in_fair_turn(lanes, Counter(running), held, account_cap=4)
    shown = [
        lane.account_id if all(other.rank == 1 for other in lanes) else f"{lane.account_id}:{lane.rank}"
        for lane in ordered
    ]
    assert shown == turn


def test_a_pools_room_follows_its_effective_limit_and_pause() -> None:
    pool = ProviderPool("luma", "luma", None, 4, 2, holders=(Holder("g1", "acme"),))
    assert pool.room(T0) == 1
    assert ProviderPool("luma", "luma", None, 4, 1, holders=pool.holders).room(T0) == 0
    paused = ProviderPool("luma", "luma", None, 4, 2, paused_until=T0 + timedelta(seconds=1))
    assert (paused.room(T0), paused.room(T0 + timedelta(seconds=2))) == (0, 2)
    assert ProviderPool("mock", "mock", None, None, None).room(T0) > 1_000_000  # unlimited


def test_polls_slow_down_as_a_task_ages() -> None:
    settings = settings_for(
        OrchestratorSettings,
        {},
        poll_interval_seconds=1.0,
        poll_age_fraction=0.1,
        poll_max_interval_seconds=10,
    )
    record = GenerationRecord(
        id="g",
        account_id="acme",
        status=Status.PROCESSING,
        prompt="p",
        provider="luma",
        duration=5,
        created_at=T0,
        updated_at=T0,
        task_started_at=T0,
    )
    pauses = [poll_pause(settings, record, T0 + timedelta(seconds=age)) for age in (0, 5, 30, 60, 120, 600)]
    assert pauses == [1.0, 1.0, 3.0, 6.0, 10.0, 10.0]
    # Not yet at the provider: the base interval.
    assert poll_pause(settings, replace(record, task_started_at=None), T0) == 1.0
    # While work waits for the provider's capacity, the base interval whatever the task's age.
    assert [
        poll_pause(settings, record, T0 + timedelta(seconds=age), contended=True) for age in (5, 600)
    ] == [
        1.0,
        1.0,
    ]


class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def monotonic(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


async def test_a_rate_cap_spaces_calls_and_is_shared_among_instances() -> None:
    time = FakeTime()
    limiter = RateLimiter(4.0, monotonic=time.monotonic, sleep=time.sleep)
    for _ in range(5):
        await limiter.acquire()
    # One call at once, then one every quarter of a second.
    assert time.slept == pytest.approx([0.25, 0.25, 0.25, 0.25])

    limiter.share(2)  # two instances alive: each makes half the calls
    assert limiter.rate == 2.0
    time.slept.clear()
    for _ in range(2):
        await limiter.acquire()
    assert time.slept == pytest.approx([0.5, 0.5])


def test_several_keys_are_a_providers_pools_each_with_its_limit() -> None:
    keys = [{"name": "tier3", "key": "k3", "max_concurrency": 5}, {"name": "tier5", "key": "k5"}]
    settings = settings_for(
        OrchestratorSettings,
        {},
        providers="mock,runway",
        runway_api_keys=keys,
        mock_max_concurrency=3,
    )
    assert [(p.name, p.key, p.limit) for p in settings.pools(Provider.RUNWAY)] == [
        ("tier3", "k3", 5),
        ("tier5", "k5", None),
    ]
    assert [(p.name, p.limit) for p in settings.pools(Provider.MOCK)] == [(None, 3)]


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {
                "VIDEOGEN_RUNWAY_API_KEY": "k",
                "VIDEOGEN_RUNWAY_API_KEYS": json.dumps([{"name": "a", "key": "k"}]),
            },
            "set VIDEOGEN_RUNWAY_API_KEY or VIDEOGEN_RUNWAY_API_KEYS, not both",
        ),
        (
            {
                "VIDEOGEN_RUNWAY_API_KEYS": json.dumps([{"name": "a", "key": "k"}]),
                "VIDEOGEN_RUNWAY_MAX_CONCURRENCY": "5",
            },
            "VIDEOGEN_RUNWAY_MAX_CONCURRENCY does not apply with VIDEOGEN_RUNWAY_API_KEYS",
        ),
        (
            {"VIDEOGEN_RUNWAY_API_KEYS": json.dumps([{"name": "a", "key": "k"}, {"name": "a", "key": "j"}])},
            "need names of their own",
        ),
        ({"VIDEOGEN_RUNWAY_MAX_CONCURRENCY": "0", "VIDEOGEN_RUNWAY_API_KEY": "k"}, "RUNWAY_MAX_CONCURRENCY"),
    ],
)
def test_key_and_limit_settings_that_contradict_each_other_are_refused(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], message: str
) -> None:
    monkeypatch.setenv("VIDEOGEN_PROVIDERS", "runway")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError, match=message):
        load_settings(OrchestratorSettings)
