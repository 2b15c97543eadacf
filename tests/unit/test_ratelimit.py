"""videogen_api.ratelimit: the header syntax, one replica's counting, and the guarantee across replicas that
share their counts (no 429 below the quota; at most quota + (N - 1) x share admitted per window), on a
clock the tests move by hand. The shared counts are in memory here; the same contract runs on MongoDB in
tests/integration/test_api_rate_limit.py."""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.fakes import ManualClock
from tests.support.ratelimit import MemoryCounts
from videogen_api.ratelimit import DEFAULT, GENERATE, Policies, Policy, RateLimiter
from videogen_api.settings import ApiSettings
from videogen_common.clock import to_millis

# A window boundary, so tests know how far the window has to run.
START = datetime(2026, 11, 21, 8, 47, 0, tzinfo=UTC)


def limiter(policy: Policy, counts: MemoryCounts, clock: ManualClock) -> RateLimiter:
    return RateLimiter(Policies(policy, policy), counts, clock, sync_seconds=60)


def test_headers_are_the_drafts_structured_field_items() -> None:
    policy = Policy.of("generate", 50, 1, 0.1)
    assert policy.header == '"generate";q=50;w=1'
    assert policy.share == 5


def test_policies_come_from_the_settings_and_only_creation_spends_the_generate_budget() -> None:
    policies = Policies.from_settings(
        ApiSettings(
            rate_limit_generate_quota=7,
            rate_limit_generate_window_seconds=2,
            rate_limit_default_quota=300,
            rate_limit_default_window_seconds=60,
            rate_limit_local_share=0.25,
        )
    )
    assert (policies.generate.name, policies.generate.quota, policies.generate.window) == (GENERATE, 7, 2)
    assert policies.generate.share == 2  # a quarter of 7, rounded up
    assert (policies.default.name, policies.default.quota, policies.default.window) == (DEFAULT, 300, 60)
    assert policies.for_request("POST", "/v1/generate") is policies.generate
    assert policies.for_request("GET", "/v1/generate") is policies.default
    assert policies.for_request("POST", "/v1/generations/gen_x/cancel") is policies.default
    assert policies.for_request("GET", "/v1/generations") is policies.default


@pytest.mark.parametrize(
    ("quota", "share", "expected"), [(1, 0.1, 1), (10, 0.1, 1), (11, 0.1, 2), (100, 0.1, 10), (5, 1.0, 5)]
)
def test_a_replicas_share_is_a_fraction_of_the_quota_and_at_least_one(
    quota: int, share: float, expected: int
) -> None:
    assert Policy.of("default", quota, 1, share).share == expected


@pytest.mark.parametrize(
    ("name", "quota", "window", "share"),
    [("", 1, 1, 1), ("a b", 1, 1, 1), ("p", 0, 1, 1), ("p", 1, 0, 1), ("p", 5, 1, 6), ("p", 5, 1, 0)],
)
def test_invalid_policies_are_refused(name: str, quota: int, window: int, share: int) -> None:
    with pytest.raises(ValueError, match="policy"):
        Policy(name, quota, window, share)


async def test_one_replica_admits_the_quota_counting_down_then_refuses_until_the_window_ends() -> None:
    clock = ManualClock(START + timedelta(seconds=12, milliseconds=300))
    policy = Policy.of("generate", 5, 60, 0.1)
    limits = limiter(policy, MemoryCounts(), clock)

    decisions = [await limits.check("acme", policy) for _ in range(6)]

    assert [d.allowed for d in decisions] == [True] * 5 + [False]
    assert [d.remaining for d in decisions] == [4, 3, 2, 1, 0, 0]
    # 47.7 s of the window are left: whole seconds, rounded up.
    assert {d.reset_seconds for d in decisions} == {48}
    assert decisions[0].headers == {
        "RateLimit-Policy": '"generate";q=5;w=60',
        "RateLimit": '"generate";r=4;t=48',
    }
    assert decisions[5].headers["RateLimit"] == '"generate";r=0;t=48'

    clock.advance(timedelta(seconds=47, milliseconds=699))  # the window's last millisecond
    last = await limits.check("acme", policy)
    assert (last.allowed, last.reset_seconds) == (False, 1)
    clock.advance(timedelta(milliseconds=1))  # the next window
    assert (await limits.check("acme", policy)).allowed


async def test_accounts_and_policies_have_budgets_of_their_own() -> None:
    clock = ManualClock(START)
    generate, default = Policy.of(GENERATE, 2, 60, 0.5), Policy.of(DEFAULT, 3, 60, 0.5)
    limits = RateLimiter(Policies(generate, default), MemoryCounts(), clock, sync_seconds=60)

    assert [(await limits.check("acme", generate)).allowed for _ in range(3)] == [True, True, False]
    assert [(await limits.check("globex", generate)).allowed for _ in range(2)] == [True, True]
    assert [(await limits.check("acme", default)).remaining for _ in range(3)] == [2, 1, 0]


async def test_a_replica_learns_what_the_others_admitted_at_each_sync() -> None:
    clock = ManualClock(START)
    policy = Policy.of(DEFAULT, 10, 60, 0.5)  # share 5
    counts = MemoryCounts()
    first, second = limiter(policy, counts, clock), limiter(policy, counts, clock)

    for _ in range(4):
        await first.check("acme", policy)
    await first.sync()
    # Until it syncs, a replica knows only what it admitted itself.
    assert (await second.check("acme", policy)).remaining == 9
    await second.sync()

    assert (await second.check("acme", policy)).remaining == 4  # 10 - 4 by the first - 2 by the second
    await second.sync()
    await first.sync()
    assert (await first.check("acme", policy)).remaining == 3


async def test_at_its_share_a_replica_waits_for_a_sync_and_then_sees_the_quota_spent_elsewhere() -> None:
    clock = ManualClock(START)
    policy = Policy.of(DEFAULT, 10, 60, 0.2)  # share 2
    counts = MemoryCounts()
    first, second = limiter(policy, counts, clock), limiter(policy, counts, clock)
    for _ in range(10):
        assert (await first.check("acme", policy)).allowed
    await first.sync()

    # The second has never synced: it admits its share, then syncs, learns the quota is spent, and refuses.
    verdicts = [(await second.check("acme", policy)).allowed for _ in range(4)]

    assert verdicts == [True, True, False, False]
    assert counts.counts[next(iter(counts.counts))] == 12  # quota + (N - 1) x share, the documented bound


async def test_ended_windows_are_forgotten_at_the_next_sync() -> None:
    clock = ManualClock(START)
    policy = Policy.of(DEFAULT, 10, 1, 0.1)
    counts = MemoryCounts()
    limits = limiter(policy, counts, clock)
    await limits.check("acme", policy)
    await limits.check("globex", policy)
    await limits.sync()
    assert {key.account_id for key in counts.reads[-1]} == {"acme", "globex"}

    clock.advance(timedelta(seconds=1))
    await limits.check("globex", policy)
    await limits.sync()

    assert [(key.account_id, key.window) for key in counts.reads[-1]] == [
        ("globex", to_millis(START) // 1000 + 1)
    ]


async def test_without_the_store_a_replica_limits_on_its_own_counts_and_never_hangs() -> None:
    clock = ManualClock(START)
    policy = Policy.of(DEFAULT, 6, 60, 0.2)  # share 2: it would wait for a sync every 2 requests
    counts = MemoryCounts()
    counts.failure = ConnectionError("store down")
    limits = limiter(policy, counts, clock)

    verdicts = [(await asyncio.wait_for(limits.check("acme", policy), 1)).allowed for _ in range(8)]

    assert verdicts == [True] * 6 + [False] * 2
    # Back: what was admitted meanwhile reaches the shared count at the next sync.
    counts.failure = None
    await limits.sync()
    assert sum(counts.counts.values()) == 6


async def test_stop_ends_the_background_syncs() -> None:
    policy = Policy.of(DEFAULT, 6, 60, 0.2)
    counts = MemoryCounts()
    limits = RateLimiter(Policies(policy, policy), counts, ManualClock(START), sync_seconds=0.001)
    limits.start()
    await limits.check("acme", policy)
    while not counts.counts:  # the loop syncs on its own
        await asyncio.sleep(0.001)
    await limits.stop()
    assert sum(counts.counts.values()) == 1


# --- The guarantee, over arbitrary interleavings ---------------------------------------------------------

Step = tuple[str, int, int]
steps = st.lists(
    st.one_of(
        st.tuples(st.just("burst"), st.integers(0, 3), st.integers(1, 8)),  # replica, concurrent requests
        st.tuples(st.just("sync"), st.integers(0, 3), st.just(0)),
        st.tuples(st.just("yield"), st.just(0), st.integers(1, 3)),  # let background syncs move on
        st.tuples(st.just("tick"), st.just(0), st.integers(1, 1500)),  # milliseconds
    ),
    max_size=60,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    replicas=st.integers(1, 4),
    quota=st.integers(1, 25),
    local_share=st.sampled_from([0.05, 0.1, 0.25, 0.5, 1.0]),
    plan=steps,
)
def test_replicas_sharing_counts_never_refuse_below_the_quota_nor_admit_beyond_the_bound(
    replicas: int, quota: int, local_share: float, plan: list[Step]
) -> None:
    policy = Policy.of(DEFAULT, quota, 2, local_share)
    bound = quota + (replicas - 1) * policy.share

    async def scenario() -> None:
        clock = ManualClock(START)
        counts = MemoryCounts()
        limiters = [limiter(policy, counts, clock) for _ in range(replicas)]
        admitted: Counter[int] = Counter()  # per window, across replicas

        async def request(limits: RateLimiter) -> None:
            decision = await limits.check("acme", policy)
            window = policy.window_at(to_millis(clock.now()))
            if decision.allowed:
                admitted[window] += 1
                assert admitted[window] <= bound
                assert decision.remaining >= 0
            else:
                assert admitted[window] >= quota, "refused below the quota"
                assert decision.reset_seconds >= 1

        for action, replica, amount in plan:
            limits = limiters[replica % replicas]
            if action == "burst":
                await asyncio.gather(*(request(limits) for _ in range(amount)))
            elif action == "sync":
                await limits.sync()
            elif action == "yield":
                for _ in range(amount):
                    await asyncio.sleep(0)
            else:
                clock.advance(timedelta(milliseconds=amount))
        for limits in limiters:
            await limits.stop()

    asyncio.run(scenario())
