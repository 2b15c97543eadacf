"""Building a service's settings object from a test's environment dict, the way the service itself would."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic_settings import BaseSettings

from videogen_common.settings import ENV_PREFIX, load_settings

S = TypeVar("S", bound=BaseSettings)


def settings_for(cls: type[S], env: dict[str, str], **overrides: Any) -> S:
    fields = {k.removeprefix(ENV_PREFIX).lower(): v for k, v in env.items() if k.startswith(ENV_PREFIX)}
    known = {k: v for k, v in fields.items() if k in cls.model_fields}
    return load_settings(cls, **{**known, **overrides})
