"""`videogen config --service X`: a service's effective settings, built from the environment exactly as the
service builds them at start-up (so validated the same way), with every secret masked."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit, urlunsplit

import orjson
from pydantic import SecretStr
from pydantic_settings import BaseSettings

from videogen_api.settings import ApiSettings
from videogen_common.settings import ENV_PREFIX, is_secret_name, load_settings
from videogen_notifier.settings import NotifierSettings
from videogen_orchestrator.settings import OrchestratorSettings

SERVICES: dict[str, type[BaseSettings]] = {
    "api": ApiSettings,
    "orchestrator": OrchestratorSettings,
    "notifier": NotifierSettings,
}
MASK = "********"


def effective_settings(service: str) -> dict[str, Any]:
    """``{VIDEOGEN_NAME: value}`` for every setting of the service, secrets masked. Raises ``SettingsError``
    (naming the variable) when the environment holds a bad value."""
    settings = load_settings(SERVICES[service])
    dumped = settings.model_dump(mode="json")
    values: dict[str, Any] = {}
    for name in sorted(type(settings).model_fields):
        values[f"{ENV_PREFIX}{name.upper()}"] = _shown(name, getattr(settings, name), dumped[name])
    return values


def _shown(name: str, value: Any, dumped: Any) -> Any:
    if isinstance(value, SecretStr):
        return MASK if value.get_secret_value() else ""
    if isinstance(dumped, str) and dumped and is_secret_name(name):  # a credential not typed as a secret
        return MASK
    if isinstance(dumped, str):
        return _without_password(dumped)
    if isinstance(dumped, list):
        return sorted(dumped, key=str) if isinstance(value, set | frozenset) else dumped
    return dumped


def _without_password(value: str) -> str:
    """A URL's password (``mongodb://user:pass@host``) is masked; anything else is returned as is."""
    if "://" not in value or "@" not in value:
        return value
    try:
        parts = urlsplit(value)
        password = parts.password
    except ValueError:
        return value
    if not password:
        return value
    userinfo, _, hosts = parts.netloc.rpartition("@")
    user = userinfo.split(":", 1)[0]
    return urlunsplit(parts._replace(netloc=f"{user}:{MASK}@{hosts}"))


def as_json(values: dict[str, Any]) -> str:
    return orjson.dumps(values, option=orjson.OPT_INDENT_2).decode()


def as_env(values: dict[str, Any]) -> str:
    """``KEY=value`` lines, as the services read them back (a list as comma-separated items); an unset
    optional setting as a comment, since ``KEY=`` would set it to an empty string."""
    lines = []
    for key, value in values.items():
        if value is None:
            lines.append(f"# {key} is not set")
            continue
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, str | int | float):
            text = str(value)
        elif isinstance(value, list) and all(isinstance(item, str) for item in value):
            text = ",".join(value)
        else:
            text = orjson.dumps(value).decode()
        lines.append(f"{key}={text}")
    return "\n".join(lines)
