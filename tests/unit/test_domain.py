"""videogen_common.domain: the generation state machine, checked against a table written out by hand."""

from __future__ import annotations

import itertools

import pytest

from videogen_common.domain import (
    MAX_DURATION_S,
    MIN_DURATION_S,
    TERMINAL,
    Status,
    can_transition,
    sources_of,
)

Q, P, C, F = Status.QUEUED, Status.PROCESSING, Status.COMPLETED, Status.FAILED

# queued ⇄ processing → completed | failed, and queued → failed. Terminal states are final.
ALLOWED: frozenset[tuple[Status, Status]] = frozenset({(Q, P), (P, Q), (P, C), (P, F), (Q, F)})

ALL_PAIRS = list(itertools.product(Status, Status))


def test_the_table_covers_every_pair() -> None:
    assert len(ALL_PAIRS) == 16
    assert set(Status) == {Q, P, C, F}


@pytest.mark.parametrize(("current", "target"), ALL_PAIRS, ids=[f"{a}->{b}" for a, b in ALL_PAIRS])
def test_can_transition(current: Status, target: Status) -> None:
    assert can_transition(current, target) is ((current, target) in ALLOWED)


@pytest.mark.parametrize("status", list(Status))
def test_no_state_transitions_to_itself(status: Status) -> None:
    assert not can_transition(status, status)


@pytest.mark.parametrize(("status", "terminal"), [(Q, False), (P, False), (C, True), (F, True)])
def test_terminal_property(status: Status, terminal: bool) -> None:
    assert status.terminal is terminal
    assert (status in TERMINAL) is terminal


@pytest.mark.parametrize("final", [C, F])
def test_terminal_states_are_final(final: Status) -> None:
    assert not any(can_transition(final, target) for target in Status)


@pytest.mark.parametrize(
    ("target", "sources"),
    [
        (Q, {P}),
        (P, {Q}),
        (C, {P}),
        (F, {Q, P}),
    ],
)
def test_sources_of(target: Status, sources: set[Status]) -> None:
    assert sources_of(target) == frozenset(sources)


def test_sources_of_agrees_with_can_transition() -> None:
    for target in Status:
        assert sources_of(target) == frozenset(s for s in Status if can_transition(s, target))


def test_duration_bounds() -> None:
    assert (MIN_DURATION_S, MAX_DURATION_S) == (3, 10)
