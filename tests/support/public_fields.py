"""The public field set of a generation, for every test that checks an answer, an event or a webhook carries
it: the server's own lists, so a new public field reaches these tests by itself. The contract is restated,
deliberately and only once, as a check of these lists: ``tests/unit/test_generations.py``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from videogen_common import deliveries
from videogen_common.records import generation

# What clients see of a generation (``GET /v1/generations/{id}``, the create's answer, the SDK's model).
PUBLIC_FIELDS = frozenset(generation.PUBLIC_FIELDS)
# What its events and webhook deliveries carry as ``data``: all of it but its timeline and place in line.
DATA_FIELDS = frozenset(deliveries.DATA_FIELDS)


def as_event_data(view: Mapping[str, Any]) -> dict[str, Any]:
    """A generation as the api answers it (its public view), as its events carry it."""
    return {name: value for name, value in view.items() if name in DATA_FIELDS}
