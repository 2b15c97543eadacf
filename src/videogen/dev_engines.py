"""The file through which a running `videogen dev` tells the `videogen` commands run beside it (`keys`) which
engines it started."""

from __future__ import annotations

import json
from pathlib import Path

from videogen_common.settings import CommonSettings

ENGINES_FILE = "dev-engines.json"


def write_engines_file(data_dir: Path, settings: CommonSettings) -> None:
    engines = {
        "VIDEOGEN_MONGO_URL": settings.mongo_url,
        "VIDEOGEN_MONGO_DB": settings.mongo_db,
        "VIDEOGEN_KAFKA_BOOTSTRAP": settings.kafka_bootstrap,
    }
    (data_dir / ENGINES_FILE).write_text(json.dumps(engines, indent=2) + "\n")


def running_engines(data_dir: Path) -> dict[str, str]:
    """The engines of the `videogen dev` whose data folder is ``data_dir``, as VIDEOGEN_* variables (none if
    no dev stack has run there)."""
    try:
        found = json.loads((data_dir / ENGINES_FILE).read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(found, dict):
        return {}
    return {k: v for k, v in found.items() if isinstance(k, str) and isinstance(v, str)}
