"""How `make test` spreads the suite over parallel pytest processes (pytest-xdist, ``-n N --dist loadscope``).

Each worker is a whole pytest session of its own: its session fixtures start its own broker, store and S3
server on free ports, its autouse blockbuster guard watches its own event loop. What the workers share is the
machine, so the unit of work is what must not be split or run twice at once:

- a test module: its module fixtures (a stack, a browser) start once, on the one worker that runs it;
- every container test together (``tests/containers``): they share one Docker engine, which their session
  starts if none answers, and the images it builds.

The units go out heaviest first, so that the long ones (containers, processes killed and restarted, browsers)
start while the many short ones fill the gaps, instead of one of them starting last and running alone. A
unit's weight is a rough cost per test by kind (``COST``), not a measurement: it only has to put the heavy
ones ahead."""

from __future__ import annotations

from collections import defaultdict

import pytest
from xdist.remote import Producer
from xdist.scheduler import LoadScopeScheduling

CONTAINERS = "tests/containers"

# A test's rough cost, by its markers, else by its directory; a unit's weight is the sum over its tests.
COST_BY_MARKER = {"chaos": 100.0, "load": 100.0, "containers": 20.0, "e2e": 15.0}
COST_BY_DIRECTORY = {"tests/unit": 0.1, "tests/integration": 1.0}
COST_OTHERWISE = 0.5


def unit_of(nodeid: str) -> str:
    """The unit of work a test belongs to: its module, or all of ``tests/containers``."""
    path = nodeid.split("::", 1)[0]
    return CONTAINERS if path.startswith(CONTAINERS + "/") else path


def cost(item: pytest.Item) -> float:
    marked = [COST_BY_MARKER[m.name] for m in item.iter_markers() if m.name in COST_BY_MARKER]
    if marked:
        return max(marked)
    directory = item.nodeid.rsplit("/", 1)[0]
    return COST_BY_DIRECTORY.get(directory, COST_OTHERWISE)


def heaviest_units_first(items: list[pytest.Item]) -> None:
    """Reorder ``items`` (in place, stably) unit by unit, the heaviest unit first."""
    weight: defaultdict[str, float] = defaultdict(float)
    for item in items:
        weight[unit_of(item.nodeid)] += cost(item)
    items.sort(key=lambda item: -weight[unit_of(item.nodeid)])


class ByUnit(LoadScopeScheduling):  # type: ignore[misc]  # xdist ships no types
    """xdist's ``loadscope`` with ``unit_of`` as the scope, sent in the order the workers collected them
    (``heaviest_units_first``) rather than by their number of tests."""

    def __init__(self, config: pytest.Config, log: Producer | None = None) -> None:
        super().__init__(config, log)
        config.option.loadscopereorder = False

    def _split_scope(self, nodeid: str) -> str:
        return unit_of(nodeid)
