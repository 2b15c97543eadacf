"""Reading a Prometheus text exposition in tests: one sample's value by name and exact labels."""

from __future__ import annotations

import re

_LINE = re.compile(r"([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)")
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def sample(text: str, name: str, **labels: str) -> float | None:
    """The value of the sample ``name`` whose labels are exactly ``labels`` (in any order), or None."""
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        match = _LINE.fullmatch(line)
        if match is None or match.group(1) != name:
            continue
        if dict(_LABEL.findall(match.group(2) or "")) == labels:
            return float(match.group(3))
    return None
