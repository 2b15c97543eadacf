"""The committed lockfiles pin every package without recording where it was downloaded from: whoever installs
uses the package index or registry they have configured."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
URL = re.compile(r"[a-z][a-z0-9+.-]*://", re.IGNORECASE)
# pip options that name where packages come from: -i, --index…, --extra-index…, --find…
SOURCE_OPTION = re.compile(r"^\s*(-i|-f|--(extra-)?index|--find)\b")


def test_the_python_pins_record_no_index() -> None:
    for name in ("runtime.txt", "dev.txt"):
        for line in (ROOT / "requirements" / name).read_text().splitlines():
            assert not SOURCE_OPTION.match(line), line
            assert not URL.search(line), line


def test_the_typescript_lockfile_records_no_registry_address() -> None:
    lock = json.loads((ROOT / "clients" / "typescript" / "package-lock.json").read_text())
    packages = lock["packages"]
    assert len(packages) > 1, "the lockfile pins nothing"
    assert {name: entry["resolved"] for name, entry in packages.items() if "resolved" in entry} == {}
    # Each is still pinned by its content's hash.
    assert all("integrity" in entry for name, entry in packages.items() if name and not entry.get("link"))
