"""Settings shared by every service. Each service subclasses ``CommonSettings`` once, builds it at start-up
with ``load_settings`` and passes it down; nothing reads the environment at import time."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from pydantic import Field, SecretStr, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

ENV_PREFIX = "VIDEOGEN_"


class SettingsError(ValueError):
    """A setting is missing or invalid; the message names the environment variable."""


class CommonSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore", frozen=True)

    kafka_bootstrap: str = "127.0.0.1:9092"
    mongo_url: str = "mongodb://127.0.0.1:27017/"
    mongo_db: str = "videogen"
    topic_prefix: str = "videogen."
    topic_partitions: int = Field(default=4, ge=1)
    data_dir: Path = Path("var")
    log_level: str = "INFO"
    log_format: str = Field(default="json", pattern="^(json|text)$")
    # Media links (video_url, thumbnail_url) are signed with this key and served by the api.
    public_base_url: str = "http://127.0.0.1:8080"
    media_signing_key: SecretStr = SecretStr("dev-media-signing-key-change-me")
    media_retention_days: int = Field(default=30, ge=1)

    @property
    def media_dir(self) -> Path:
        return self.data_dir / "media"


S = TypeVar("S", bound=BaseSettings)


def load_settings(cls: type[S], **overrides: Any) -> S:
    """Build settings from defaults, ``VIDEOGEN_*`` variables and explicit overrides; a bad value raises
    ``SettingsError`` naming the variable."""
    try:
        return cls(**overrides)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            field = ".".join(str(p) for p in err["loc"])
            problems.append(f"{ENV_PREFIX}{field.upper()}: {err['msg']} (got {err.get('input')!r})")
        raise SettingsError("invalid settings: " + "; ".join(problems)) from None
