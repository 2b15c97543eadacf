"""A webhook endpoint (``WebhookEndpoint``), its signing secrets (``Secret``) and its health (``Health``),
kept on its document (``health``) so every notifier instance sees the same run of failures: it opens the
endpoint's circuit breaker and, if it goes on long enough, disables it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

Doc = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Health:
    consecutive_failures: int = 0
    # The first failure since the last success (or since the endpoint was created); None while healthy.
    failing_since: datetime | None = None
    last_success_at: datetime | None = None
    last_failure_at: datetime | None = None

    @classmethod
    def of(cls, endpoint: Doc) -> Health:
        """The health stored on an endpoint's document (healthy if it has none)."""
        return cls.from_doc(endpoint.get("health") or {})

    @classmethod
    def from_doc(cls, health: Doc) -> Health:
        return cls(
            consecutive_failures=int(health.get("consecutive_failures") or 0),
            failing_since=health.get("failing_since"),
            last_success_at=health.get("last_success_at"),
            last_failure_at=health.get("last_failure_at"),
        )

    def to_doc(self) -> Doc:
        return {
            "consecutive_failures": self.consecutive_failures,
            "failing_since": self.failing_since,
            "last_success_at": self.last_success_at,
            "last_failure_at": self.last_failure_at,
        }

    def paused_until(self, failures: int, cooldown: timedelta) -> datetime | None:
        """When the breaker lets attempts through again, if ``failures`` in a row have opened it. Derived
        from the stored health alone, so it holds across instances and restarts: after the cooldown, the
        next attempts go out, and each further failure starts a new cooldown."""
        if self.consecutive_failures < failures or self.last_failure_at is None:
            return None
        return self.last_failure_at + cooldown

    def needs_success_recorded(self, now: datetime, refresh: timedelta = timedelta(minutes=1)) -> bool:
        """A success must be written when it ends a run of failures; on an already healthy endpoint only its
        ``last_success_at`` would change, so that is refreshed at most once per ``refresh``. Writing every
        success made concurrent attempts contend on one hot document in the store."""
        if self.consecutive_failures or self.failing_since is not None:
            return True
        return self.last_success_at is None or now - self.last_success_at >= refresh

    def failing_for(self, now: datetime) -> timedelta:
        return now - self.failing_since if self.failing_since is not None else timedelta(0)


@dataclass(frozen=True, slots=True)
class Secret:
    """A signing secret: the current one has no expiry; one a rotation replaced signs until it expires."""

    secret: str
    created_at: datetime
    expires_at: datetime | None = None

    @classmethod
    def from_doc(cls, doc: Doc) -> Secret:
        return cls(secret=doc["secret"], created_at=doc["created_at"], expires_at=doc.get("expires_at"))

    def to_doc(self) -> Doc:
        return {"secret": self.secret, "created_at": self.created_at, "expires_at": self.expires_at}

    def live(self, now: datetime) -> bool:
        return self.expires_at is None or self.expires_at > now


@dataclass(frozen=True, slots=True, kw_only=True)
class WebhookEndpoint:
    """An account's webhook endpoint as stored (document ``webhooks``, ``_id`` its id)."""

    id: str
    account_id: str
    url: str
    events: tuple[str, ...]
    secrets: tuple[Secret, ...] = ()
    active: bool = True
    created_at: datetime
    updated_at: datetime
    # Why and when it was disabled (by the notifier, or by its account).
    disabled_reason: str | None = None
    disabled_at: datetime | None = None
    health: Health = field(default_factory=Health)

    @classmethod
    def from_doc(cls, doc: Doc) -> WebhookEndpoint:
        return cls(
            id=doc["_id"],
            account_id=doc["account_id"],
            url=doc["url"],
            events=tuple(doc.get("events", ())),
            secrets=tuple(Secret.from_doc(s) for s in doc.get("secrets", ())),
            active=bool(doc.get("active", False)),
            created_at=doc["created_at"],
            updated_at=doc["updated_at"],
            disabled_reason=doc.get("disabled_reason"),
            disabled_at=doc.get("disabled_at"),
            health=Health.of(doc),
        )

    def to_doc(self) -> Doc:
        """The document of a new endpoint (what is unset stays out of it, as the api has always stored it)."""
        doc: Doc = {
            "_id": self.id,
            "account_id": self.account_id,
            "url": self.url,
            "events": list(self.events),
            "secrets": [s.to_doc() for s in self.secrets],
            "active": self.active,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }
        if self.disabled_reason is not None:
            doc["disabled_reason"] = self.disabled_reason
        if self.disabled_at is not None:
            doc["disabled_at"] = self.disabled_at
        if self.health != Health():
            doc["health"] = self.health.to_doc()
        return doc

    def live_secrets(self, now: datetime) -> list[str]:
        """The secrets deliveries are signed with at ``now``: the current one and those still overlapping."""
        return [s.secret for s in self.secrets if s.live(now)]

    @property
    def current_secret(self) -> str | None:
        return self.secrets[0].secret if self.secrets else None
