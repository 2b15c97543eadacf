"""Routing's decisions as tables: the order of candidates for each state of the providers (``order``), the
re-check at admission (``recheck``), where a failed attempt goes next (``next_candidate``), and whether it may
go there at all without paying twice (``may_fall_back``)."""

from __future__ import annotations

import pytest

from videogen_common.failures import ErrorCode, GenerationError
from videogen_common.routing import (
    Breaker,
    Move,
    ProviderState,
    Sort,
    TaskMade,
    is_provider_failure,
    may_fall_back,
    next_candidate,
    order,
    recheck,
)

CLOSED, HALF, OPEN = Breaker.CLOSED, Breaker.HALF_OPEN, Breaker.OPEN


def st(
    provider: str,
    breaker: Breaker = CLOSED,
    *,
    room: int | None = None,
    price: float | None = None,
    p50: float | None = None,
    probe_free: bool = True,
) -> ProviderState:
    return ProviderState(provider, breaker, probe_free, room, price, p50)


def states(*given: ProviderState) -> dict[str, ProviderState]:
    return {s.provider: s for s in given}


ORDER_ROWS: list[tuple[str, dict[str, ProviderState], Sort | None, list[str]]] = [
    (
        "the cheaper first when both are healthy with room",
        states(st("runway", price=0.6), st("luma", price=0.71)),
        None,
        ["runway", "luma"],
    ),
    (
        "healthy before half-open before open, whatever the price",
        states(
            st("runway", OPEN, price=0.1),
            st("luma", HALF, price=0.2, probe_free=False),
            st("pika", price=0.9),
        ),
        None,
        ["pika", "luma", "runway"],
    ),
    (
        "a half-open one with its probe free counts as healthy (the next one there is its probe)",
        states(st("runway", HALF, price=0.6), st("luma", price=0.71)),
        None,
        ["runway", "luma"],
    ),
    (
        "free capacity before price",
        states(st("runway", room=0, price=0.6), st("luma", room=2, price=0.71)),
        None,
        ["luma", "runway"],
    ),
    (
        "no limit counts as room",
        states(st("runway", room=0, price=0.6), st("luma", room=None, price=0.71)),
        None,
        ["luma", "runway"],
    ),
    (
        "sort: price puts price before capacity",
        states(st("runway", room=0, price=0.6), st("luma", room=2, price=0.71)),
        Sort.PRICE,
        ["runway", "luma"],
    ),
    (
        "sort: price still puts the healthy first",
        states(st("runway", OPEN, price=0.1), st("luma", price=0.71)),
        Sort.PRICE,
        ["luma", "runway"],
    ),
    (
        "the default order: the faster breaks a tie of price",
        states(st("runway", price=0.5, p50=90), st("luma", price=0.5, p50=40)),
        None,
        ["luma", "runway"],
    ),
    (
        "sort: speed puts the p50 before price",
        states(st("runway", price=0.6, p50=90), st("luma", price=0.71, p50=40)),
        Sort.SPEED,
        ["luma", "runway"],
    ),
    (
        "sort: speed: measured before not measured",
        states(st("runway", price=0.6), st("luma", price=0.71, p50=400)),
        Sort.SPEED,
        ["luma", "runway"],
    ),
    (
        "sort: speed keeps capacity first",
        states(st("runway", room=0, p50=10), st("luma", room=1, p50=400)),
        Sort.SPEED,
        ["luma", "runway"],
    ),
    (
        "an unknown price after a known one",
        states(st("runway"), st("luma", price=5.0)),
        None,
        ["luma", "runway"],
    ),
    (
        "ties by name",
        states(st("pika", price=0.2), st("luma", price=0.2)),
        None,
        ["luma", "pika"],
    ),
]


@pytest.mark.parametrize(("case", "given", "sort", "expected"), ORDER_ROWS, ids=[r[0] for r in ORDER_ROWS])
def test_auto_orders_candidates(
    case: str, given: dict[str, ProviderState], sort: Sort | None, expected: list[str]
) -> None:
    ordered = order(list(given), given, auto=True, sort=sort)
    assert [c.provider for c in ordered] == expected
    assert all(c.reason.startswith("auto, ") for c in ordered)


EXPLICIT_ROWS: list[tuple[str, list[str], dict[str, ProviderState], list[str]]] = [
    (
        "kept as asked, whatever the price",
        ["luma", "runway"],
        states(st("luma", price=9), st("runway", price=0.1)),
        ["luma", "runway"],
    ),
    (
        "an open breaker moves a candidate last",
        ["runway", "luma", "pika"],
        states(st("runway", OPEN), st("luma"), st("pika")),
        ["luma", "pika", "runway"],
    ),
    (
        "half-open and no room keep their place",
        ["runway", "luma"],
        states(st("runway", HALF, room=0, probe_free=False), st("luma")),
        ["runway", "luma"],
    ),
    (
        "all open: kept as asked",
        ["runway", "luma"],
        states(st("runway", OPEN), st("luma", OPEN)),
        ["runway", "luma"],
    ),
]


@pytest.mark.parametrize(
    ("case", "asked", "given", "expected"), EXPLICIT_ROWS, ids=[r[0] for r in EXPLICIT_ROWS]
)
def test_an_explicit_provider_and_its_fallbacks_keep_their_order_but_an_open_breaker_goes_last(
    case: str, asked: list[str], given: dict[str, ProviderState], expected: list[str]
) -> None:
    assert [c.provider for c in order(asked, given, auto=False)] == expected


def test_each_candidate_says_why_it_is_where_it_is() -> None:
    explicit = order(
        ["runway", "luma"], states(st("runway", OPEN), st("luma", room=2, price=0.71)), auto=False
    )
    assert [c.reason for c in explicit] == [
        "fallback 1 (healthy, 2 free, $0.7100, p50 not measured)",
        "breaker open: tried last (breaker open, no limit, price unknown, p50 not measured)",
    ]
    [auto] = order(["luma"], states(st("luma", room=0, price=0.71, p50=42)), auto=True, sort=Sort.PRICE)
    assert auto.reason == "auto, price order, #1: healthy, no free capacity, $0.7100, p50 42 s"


RECHECK_ROWS: list[tuple[str, list[str], str, dict[str, ProviderState], Move | None]] = [
    (
        "healthy with room: stays",
        ["runway", "luma"],
        "runway",
        states(st("runway", room=1), st("luma")),
        None,
    ),
    (
        "open: moves to the next usable with room",
        ["runway", "luma", "pika"],
        "runway",
        states(st("runway", OPEN), st("luma", room=0), st("pika", room=3)),
        Move("pika", "runway: breaker open"),
    ),
    (
        "open: moves to the next usable even without room (no use waiting at an open one)",
        ["runway", "luma"],
        "runway",
        states(st("runway", OPEN), st("luma", room=0)),
        Move("luma", "runway: breaker open"),
    ),
    (
        "half-open with its probe out: moves",
        ["runway", "luma"],
        "runway",
        states(st("runway", HALF, probe_free=False), st("luma")),
        Move("luma", "runway: half-open, probe out"),
    ),
    (
        "half-open with its probe free: stays (it is the probe)",
        ["runway", "luma"],
        "runway",
        states(st("runway", HALF), st("luma")),
        None,
    ),
    (
        "no room, a later one has room: moves",
        ["runway", "luma"],
        "runway",
        states(st("runway", room=0), st("luma", room=1)),
        Move("luma", "runway: no free capacity; luma has some"),
    ),
    (
        "no room anywhere: waits in its current one's line",
        ["runway", "luma"],
        "runway",
        states(st("runway", room=0), st("luma", room=0)),
        None,
    ),
    (
        "no room, the later one with room is open: stays",
        ["runway", "luma"],
        "runway",
        states(st("runway", room=0), st("luma", OPEN, room=5)),
        None,
    ),
    (
        "open, and every later one open too: stays (goes as a request for it alone would)",
        ["runway", "luma"],
        "runway",
        states(st("runway", OPEN), st("luma", OPEN)),
        None,
    ),
    (
        "never back to an earlier candidate",
        ["runway", "luma", "pika"],
        "luma",
        states(st("runway", room=9), st("luma", room=0), st("pika", room=0)),
        None,
    ),
    ("the last one has nowhere to go", ["runway", "luma"], "luma", states(st("luma", OPEN)), None),
]


@pytest.mark.parametrize(
    ("case", "candidates", "current", "given", "expected"), RECHECK_ROWS, ids=[r[0] for r in RECHECK_ROWS]
)
def test_the_recheck_at_admission(
    case: str, candidates: list[str], current: str, given: dict[str, ProviderState], expected: Move | None
) -> None:
    assert recheck(candidates, current, given) == expected


@pytest.mark.parametrize(
    ("candidates", "current", "given", "expected"),
    [
        (["runway", "luma", "pika"], "runway", states(st("luma"), st("pika")), "luma"),
        (["runway", "luma", "pika"], "runway", states(st("luma", OPEN), st("pika")), "pika"),
        (["runway", "luma", "pika"], "runway", states(st("luma", OPEN), st("pika", OPEN)), "luma"),
        (["runway", "luma"], "luma", states(), None),
    ],
)
def test_a_failed_attempt_goes_to_the_first_later_usable_candidate(
    candidates: list[str], current: str, given: dict[str, ProviderState], expected: str | None
) -> None:
    assert next_candidate(candidates, current, given) == expected


UNAVAILABLE = GenerationError(ErrorCode.PROVIDER_UNAVAILABLE, "refused", "http_503", retriable=True)
CREDENTIALS = GenerationError(ErrorCode.PROVIDER_UNAVAILABLE, "bad key", "http_401")
TASK_FAILED = GenerationError(ErrorCode.PROVIDER_ERROR, "internal", "INTERNAL", retriable=True)
TASK_FAILED_FOR_GOOD = GenerationError(ErrorCode.PROVIDER_ERROR, "no longer knows the task", "http_404")
PROVIDER_TIMED_OUT = GenerationError(
    ErrorCode.PROVIDER_TIMEOUT, "timed out", "request_timeout", retriable=True
)
REJECTED = GenerationError(ErrorCode.PROVIDER_REJECTED, "bad prompt", "http_400")
MODERATED = GenerationError(ErrorCode.CONTENT_POLICY, "moderated", "SAFETY.INPUT.TEXT")
CANCELED = GenerationError(ErrorCode.CANCELED, "canceled at the provider", "CANCELLED")

FALLBACK_ROWS: list[tuple[str, GenerationError, TaskMade, bool, bool]] = [
    ("unreachable, no task made", UNAVAILABLE, TaskMade.NONE, False, True),
    ("credentials refused, no task made", CREDENTIALS, TaskMade.NONE, False, True),
    ("unknown whether a task was made: never", UNAVAILABLE, TaskMade.UNKNOWN, True, False),
    ("refused the prompt, no task: not another provider's business", REJECTED, TaskMade.NONE, True, False),
    ("accepted and failed, retriable, not allowed by the client", TASK_FAILED, TaskMade.MADE, False, False),
    ("accepted and failed, retriable, allowed", TASK_FAILED, TaskMade.MADE, True, True),
    ("accepted and timed out at the provider, allowed", PROVIDER_TIMED_OUT, TaskMade.MADE, True, True),
    ("accepted and failed for good, allowed", TASK_FAILED_FOR_GOOD, TaskMade.MADE, True, False),
    ("accepted and moderated, allowed", MODERATED, TaskMade.MADE, True, False),
    ("accepted and canceled at the provider, allowed", CANCELED, TaskMade.MADE, True, False),
]


@pytest.mark.parametrize(
    ("case", "error", "task", "allowed", "expected"), FALLBACK_ROWS, ids=[r[0] for r in FALLBACK_ROWS]
)
def test_whether_a_failed_attempt_may_move_on_without_paying_twice(
    case: str, error: GenerationError, task: TaskMade, allowed: bool, expected: bool
) -> None:
    assert may_fall_back(error, task, fallback_on_failure=allowed) is expected


@pytest.mark.parametrize(
    ("error", "counted"),
    [
        (UNAVAILABLE, True),
        (TASK_FAILED, True),
        (PROVIDER_TIMED_OUT, True),
        (TASK_FAILED_FOR_GOOD, False),
        (REJECTED, False),
        (MODERATED, False),
        (CANCELED, False),
        (GenerationError(ErrorCode.DEADLINE_EXCEEDED, "the client's deadline", retriable=True), False),
        (GenerationError(ErrorCode.MOCK_FAILURE, "#fail"), False),
    ],
)
def test_what_counts_against_a_providers_health(error: GenerationError, counted: bool) -> None:
    assert is_provider_failure(error) is counted
