"""The file through which a running `videogen dev` tells the `videogen` commands run beside it (`keys`) which
engines it started."""

from __future__ import annotations

import json
from pathlib import Path

from videogen_common.settings import CommonSettings

ENGINES_FILE = "dev-engines.json"
FIELDS = ("mongo_url", "mongo_db", "kafka_bootstrap")


def write_engines_file(data_dir: Path, settings: CommonSettings) -> None:
    engines = {field: getattr(settings, field) for field in FIELDS}
    (data_dir / ENGINES_FILE).write_text(json.dumps(engines, indent=2) + "\n")


def running_engines(data_dir: Path) -> dict[str, str]:
    """The engines of the `videogen dev` whose data folder is ``data_dir``, as settings (field: value; none
    if no dev stack runs there)."""
    try:
        found = json.loads((data_dir / ENGINES_FILE).read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(found, dict):
        return {}
    return {k: v for k, v in found.items() if k in FIELDS and isinstance(v, str)}
