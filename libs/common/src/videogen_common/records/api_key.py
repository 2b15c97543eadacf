"""An API key (``ApiKey``): only the hash of the key is stored, with its last four characters to tell it
by; a key belongs to exactly one account."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from videogen_common.budgets import Limits

Doc = dict[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class ApiKey:
    """A key as stored (document ``api_keys``, ``_id`` its id). Keys made before names, scopes, expiry and
    budgets existed have none of them stored: no name, every scope (``scopes`` None), no expiry, no budget."""

    id: str
    key_hash: str
    account_id: str
    created_at: datetime
    revoked_at: datetime | None = None
    name: str | None = None
    # The scopes it was given (``videogen_common.scopes``); None: all of them.
    scopes: tuple[str, ...] | None = None
    # Its last four characters, to tell it by (None for keys made before they were kept).
    last_four: str | None = None
    expires_at: datetime | None = None
    # When it was last used, to the minute (written at most once a minute per key and api replica).
    last_used_at: datetime | None = None
    budgets: Limits = field(default_factory=Limits)

    def usable(self, now: datetime) -> bool:
        """Neither revoked nor expired at ``now``."""
        return self.revoked_at is None and (self.expires_at is None or now < self.expires_at)

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any]) -> ApiKey:
        scopes = doc.get("scopes")
        return cls(
            id=doc["_id"],
            key_hash=doc["key_hash"],
            account_id=doc["account_id"],
            created_at=doc["created_at"],
            revoked_at=doc.get("revoked_at"),
            name=doc.get("name"),
            scopes=None if scopes is None else tuple(scopes),
            last_four=doc.get("last_four"),
            expires_at=doc.get("expires_at"),
            last_used_at=doc.get("last_used_at"),
            budgets=Limits.from_doc(doc.get("budgets")),
        )

    def to_doc(self) -> Doc:
        doc: Doc = {
            "_id": self.id,
            "key_hash": self.key_hash,
            "account_id": self.account_id,
            "created_at": self.created_at,
            "revoked_at": self.revoked_at,
        }
        optional = {
            "name": self.name,
            "scopes": None if self.scopes is None else list(self.scopes),
            "last_four": self.last_four,
            "expires_at": self.expires_at,
            "last_used_at": self.last_used_at,
            "budgets": self.budgets.to_doc() or None,
        }
        doc.update({k: v for k, v in optional.items() if v is not None})
        return doc
