"""docs/guarantees.md names the test behind each guarantee: every test it names exists (a renamed or removed
test would leave a guarantee backed by nothing)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "guarantees.md"


def test_every_test_the_guarantees_name_exists() -> None:
    text = DOC.read_text()
    every_test = "\n".join(path.read_text() for path in (ROOT / "tests").rglob("test_*.py"))
    missing = []
    for path, name in re.findall(r"`(tests/[\w/]+\.py)(?:::(\w+))?", text):
        file = ROOT / path
        if not file.exists() or (name and not re.search(rf"def {name}\(", file.read_text())):
            missing.append(f"{path}::{name}")
    # "…::name" is a test of the file named before it in the same table.
    shorthand = re.findall(r"`…::(\w+)", text)
    missing += [name for name in shorthand if not re.search(rf"def {name}\(", every_test)]
    assert re.findall(r"`(tests/[\w/]+\.py)", text), "the document names no test"
    assert missing == []
