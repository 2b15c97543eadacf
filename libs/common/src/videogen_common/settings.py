"""Settings shared by every service. Each service subclasses ``CommonSettings`` once, builds it at start-up
with ``load_settings`` and passes it down; nothing reads the environment at import time."""

from __future__ import annotations

import re
from functools import cached_property
from ipaddress import IPv4Network, IPv6Network
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import Field, SecretStr, ValidationError, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from videogen_common.catalogue import Catalogue, CatalogueError
from videogen_common.destinations.addresses import parse_cidrs
from videogen_common.domain import Provider
from videogen_common.pricing import PriceTable, parse_overrides
from videogen_common.store import Durability

ENV_PREFIX = "VIDEOGEN_"
# Settings named like a credential, whose values are never echoed (``*_api_key(s)``, ``s3_access_key_id``,
# ``*secret*``, ``*password*``; not ``s3_key_prefix`` or ``api_key_cache_seconds``).
_SECRET_NAME = re.compile(r"secret|password|credential|(key|token)s?(_id)?$", re.IGNORECASE)


def is_secret_name(name: str) -> bool:
    return bool(_SECRET_NAME.search(name))


class SettingsError(ValueError):
    """A setting is missing or invalid; the message names the environment variable."""


class CommonSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore", frozen=True)

    kafka_bootstrap: str = "127.0.0.1:9092"
    mongo_url: str = "mongodb://127.0.0.1:27017/"
    mongo_db: str = "videogen"
    # The write concern of every write (videogen_common.store.Durability). Anything but the default gives up
    # guarantee 1 when the store crashes: docs/guarantees.md.
    mongo_write_concern: Durability = Durability.MAJORITY_JOURNALED
    topic_prefix: str = "videogen."
    topic_partitions: int = Field(default=4, ge=1)
    # 1 suits a single broker (the dev stack); a production cluster wants 3.
    topic_replication_factor: int = Field(default=1, ge=1)
    data_dir: Path = Path("var")
    log_level: str = "INFO"
    log_format: str = Field(default="json", pattern="^(json|text)$")
    # How often the workers recount the store-wide gauges on /metrics (backlogs, endpoint states).
    metrics_refresh_seconds: float = Field(default=15.0, gt=0)
    # Media links (video_url, thumbnail_url) are signed with this key and served by the api.
    public_base_url: str = "http://127.0.0.1:8080"
    media_signing_key: SecretStr = SecretStr("dev-media-signing-key-change-me")
    media_retention_days: int = Field(default=30, ge=1)
    # Where media is kept: a folder under data_dir (the embedded stack) or an S3-compatible bucket.
    media_backend: Literal["local", "s3"] = "local"
    s3_bucket: str = Field(default="", validate_default=True)
    s3_key_prefix: str = Field(default="", pattern=r"^[A-Za-z0-9_./-]*$")
    s3_endpoint_url: str | None = None  # None: AWS itself; set it for MinIO, Ceph, R2…
    s3_region: str = "us-east-1"
    # None for both: the default AWS credential chain (environment, web identity, instance profile).
    s3_access_key_id: str | None = None
    s3_secret_access_key: SecretStr | None = Field(default=None, validate_default=True)
    s3_force_path_style: bool = False  # most self-hosted S3-compatible servers need it
    # Each media response being streamed holds one connection to S3 for its duration.
    s3_max_connections: int = Field(default=64, ge=1)
    # The providers this deployment offers (VIDEOGEN_PROVIDERS=mock,runway): the api refuses the others with a
    # 422, and the orchestrator refuses to start without the credentials of each one enabled here.
    providers: Annotated[frozenset[Provider], NoDecode] = frozenset({Provider.MOCK})
    # A first frame, uploaded or fetched from a URL, is at most this large.
    image_max_bytes: int = Field(default=10 * 1024 * 1024, ge=1024)
    # Networks an image URL may point into although they are private (the api refuses such an address when
    # the URL names it; the orchestrator's fetch refuses it after DNS). Empty: none.
    image_fetch_allow_cidrs: str = ""
    # Address ranges webhook URLs may point into although the destination guard refuses them by default
    # (private, loopback, link-local, …), comma-separated CIDRs: the notifier delivers there, and the api
    # registers URLs naming them. Empty in production; the dev stack and the tests open loopback so they can
    # deliver to receivers on 127.0.0.1.
    webhook_allow_cidrs: str = ""
    # Providers' prices over the defaults (videogen_common.pricing), as JSON: {"<provider>": {"<model>": <USD
    # per second> | {"<resolution>": <USD per second>}}}. Empty: the published prices docs/providers.md lists.
    prices: str = ""
    # Models over the built-in catalogue (videogen_common.catalogue), as JSON: {"<provider>": {"<model>": null
    # (remove it) | {<field>: <value>, ...} (add it, or change those fields)}}. Empty: the providers' current
    # models as docs/providers.md lists them.
    models: str = ""

    @property
    def image_fetch_networks(self) -> list[IPv4Network | IPv6Network]:
        return parse_cidrs(self.image_fetch_allow_cidrs)

    @property
    def webhook_networks(self) -> list[IPv4Network | IPv6Network]:
        """Where deliveries may connect although the guard refuses it by default (the notifier), and what the
        api lets a webhook URL name."""
        return parse_cidrs(self.webhook_allow_cidrs)

    @field_validator("image_fetch_allow_cidrs", "webhook_allow_cidrs")
    @classmethod
    def _cidrs(cls, value: str) -> str:
        parse_cidrs(value)
        return value

    @cached_property
    def catalogue(self) -> Catalogue:
        """The built-in models with ``models`` and ``prices`` applied (parsed once per settings object)."""
        return Catalogue.configured(self.models, self.prices)

    @property
    def price_table(self) -> PriceTable:
        """The catalogue's prices with ``prices`` over them (build it once: it parses the settings)."""
        return PriceTable.with_overrides(self.prices, self.catalogue)

    @field_validator("models")
    @classmethod
    def _models(cls, value: str, info: ValidationInfo) -> str:
        try:
            Catalogue.configured(value, info.data.get("prices", ""))
        except CatalogueError as exc:
            raise ValueError(str(exc)) from None
        return value

    @field_validator("prices")
    @classmethod
    def _prices(cls, value: str) -> str:
        parse_overrides(value)
        return value

    @property
    def media_dir(self) -> Path:
        return self.data_dir / "media"

    @field_validator("providers", mode="before")
    @classmethod
    def _provider_list(cls, value: Any) -> Any:
        if isinstance(value, str):
            names = [name.strip().lower() for name in value.split(",") if name.strip()]
            known = {p.value for p in Provider}
            unknown = [name for name in names if name not in known]
            if unknown:
                raise ValueError(
                    f"unknown provider(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}"
                )
            value = names
        if not value:
            raise ValueError("enable at least one provider")
        return value

    @field_validator("s3_bucket")
    @classmethod
    def _bucket_required_for_s3(cls, value: str, info: ValidationInfo) -> str:
        if info.data.get("media_backend") == "s3" and not value:
            raise ValueError("required when VIDEOGEN_MEDIA_BACKEND is s3")
        return value

    @field_validator("s3_secret_access_key")
    @classmethod
    def _keys_come_in_pairs(cls, value: SecretStr | None, info: ValidationInfo) -> SecretStr | None:
        if (value is None) != (info.data.get("s3_access_key_id") is None):
            raise ValueError("set both this and VIDEOGEN_S3_ACCESS_KEY_ID, or neither")
        return value


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
            if not field:  # a rule across settings: its message names the variables
                problems.append(err["msg"])
                continue
            got = "a value (not shown)" if is_secret_name(field) else repr(err.get("input"))
            problems.append(f"{ENV_PREFIX}{field.upper()}: {err['msg']} (got {got})")
        raise SettingsError("invalid settings: " + "; ".join(problems)) from None
