"""Bearer API keys. Only a hash of each key is stored; a key belongs to exactly one account."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from videogen_api.problems import unauthorized
from videogen_common.repositories.keys import ApiKeyRepository
from videogen_common.signing import hash_api_key
from videogen_common.store import Store


@dataclass(frozen=True, slots=True)
class Caller:
    """Who a request is from: the account, and which of its API keys it presented."""

    account_id: str
    key_id: str


class KeyCache:
    """Resolves a presented key to its account and key id, caching valid keys briefly so each request does
    not cost a store round trip. Unknown keys are not cached (an attacker cannot fill memory with them)."""

    def __init__(
        self, store: Store, ttl_seconds: float, monotonic: Callable[[], float] = time.monotonic
    ) -> None:
        self._keys = ApiKeyRepository(store)
        self._ttl = ttl_seconds
        self._monotonic = monotonic
        self._cache: dict[str, tuple[Caller, float]] = {}

    async def caller_for(self, key: str) -> Caller | None:
        digest = hash_api_key(key)
        hit = self._cache.get(digest)
        now = self._monotonic()
        if hit and hit[1] > now:
            return hit[0]
        key_record = await self._keys.live_by_hash(digest)
        if key_record is None:
            self._cache.pop(digest, None)
            return None
        caller = Caller(key_record.account_id, key_record.id)
        self._cache[digest] = (caller, now + self._ttl)
        return caller


def bearer_token(header: str | None) -> str:
    if not header:
        raise unauthorized("missing Authorization header; send 'Authorization: Bearer <API_KEY>'")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise unauthorized("the Authorization header must be 'Bearer <API_KEY>'")
    return token.strip()
