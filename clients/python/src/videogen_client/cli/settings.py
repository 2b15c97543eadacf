"""Where ``vg`` finds its API key and base URL: ``--api-key``/``--base-url``, else the environment, else the
file ``vg login`` writes (readable by its owner only)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from videogen_client._client import API_KEY_ENV, BASE_URL_ENV, DEFAULT_BASE_URL

CONFIG_ENV = "VIDEOGEN_CONFIG"


def config_path() -> Path:
    """``$VIDEOGEN_CONFIG``, else ``$XDG_CONFIG_HOME/videogen/config.json`` (``~/.config`` by default)."""
    if explicit := os.environ.get(CONFIG_ENV):
        return Path(explicit)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "videogen" / "config.json"


@dataclass(frozen=True)
class Credentials:
    api_key: str | None
    base_url: str


def resolve(api_key: str | None, base_url: str | None) -> Credentials:
    saved = load()
    return Credentials(
        api_key=api_key or os.environ.get(API_KEY_ENV) or saved.get("api_key"),
        base_url=base_url or os.environ.get(BASE_URL_ENV) or saved.get("base_url") or DEFAULT_BASE_URL,
    )


def load() -> dict[str, str]:
    try:
        found = json.loads(config_path().read_text())
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in found.items() if isinstance(v, str)} if isinstance(found, dict) else {}


def save(api_key: str, base_url: str) -> Path:
    """Write the credentials, creating the file with mode 600 (never readable by others, even briefly)."""
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        json.dump({"api_key": api_key, "base_url": base_url}, out, indent=2)
        out.write("\n")
    path.chmod(0o600)  # an older file keeps its mode through O_TRUNC
    return path
