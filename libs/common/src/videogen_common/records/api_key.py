"""An API key (``ApiKey``): only the hash of the key is stored; a key belongs to exactly one account."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

Doc = dict[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class ApiKey:
    """A key as stored (document ``api_keys``, ``_id`` its id)."""

    id: str
    key_hash: str
    account_id: str
    created_at: datetime
    revoked_at: datetime | None = None

    @classmethod
    def from_doc(cls, doc: Doc) -> ApiKey:
        return cls(
            id=doc["_id"],
            key_hash=doc["key_hash"],
            account_id=doc["account_id"],
            created_at=doc["created_at"],
            revoked_at=doc.get("revoked_at"),
        )

    def to_doc(self) -> Doc:
        return {
            "_id": self.id,
            "key_hash": self.key_hash,
            "account_id": self.account_id,
            "created_at": self.created_at,
            "revoked_at": self.revoked_at,
        }
