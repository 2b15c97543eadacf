"""Bearer API keys. Only a hash of each key is stored; a key belongs to exactly one account.

A presented key is looked up by its hash and cached for ``api_key_cache_seconds`` (5 s by default), so a
request costs no store round trip. That is the bound on revocation: a key revoked through another api replica
stops working here at most that long after (at once on the replica that revoked it). An expired key stops
working at its ``expires_at`` on every replica: the cached entry carries it, and each request compares it with
the clock. Unknown keys are not cached (an attacker cannot fill memory with them).

When a key was last used is kept to the minute without a write per request: each replica records a key's
use at most once per minute, with a conditional write that never moves it backwards, in the background."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from videogen_api.problems import unauthorized
from videogen_common.budgets import Limits
from videogen_common.clock import Clock
from videogen_common.records.api_key import ApiKey
from videogen_common.repositories.keys import ApiKeyRepository
from videogen_common.scopes import Scope, granted
from videogen_common.signing import hash_api_key
from videogen_common.store import Store

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Caller:
    """Who a request is from: the account, which of its API keys it presented, what that key may do (every
    scope it holds) and spend (its own budgets), and until when it works."""

    account_id: str
    key_id: str
    scopes: frozenset[Scope]
    budgets: Limits
    expires_at: datetime | None = None

    @classmethod
    def of(cls, key: ApiKey) -> Caller:
        return cls(key.account_id, key.id, granted(key.scopes), key.budgets, key.expires_at)


class KeyCache:
    """Resolves a presented key to its ``Caller``, caching valid keys for ``ttl_seconds``."""

    def __init__(
        self,
        store: Store,
        ttl_seconds: float,
        clock: Clock,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._keys = ApiKeyRepository(store)
        self._ttl = ttl_seconds
        self._clock = clock
        self._monotonic = monotonic
        self._cache: dict[str, tuple[Caller, float]] = {}
        self._digest_of: dict[str, str] = {}  # key id -> the hash it is cached under
        self._used_in: dict[str, datetime] = {}  # key id -> the minute this replica last recorded
        self._writes: set[asyncio.Task[None]] = set()

    async def caller_for(self, key: str) -> Caller | None:
        digest = hash_api_key(key)
        hit = self._cache.get(digest)
        if hit is not None and hit[1] > self._monotonic():
            caller = hit[0]
        else:
            record = await self._keys.live_by_hash(digest)
            if record is None:
                self._cache.pop(digest, None)
                return None
            caller = Caller.of(record)
            self._cache[digest] = (caller, self._monotonic() + self._ttl)
            self._digest_of[caller.key_id] = digest
        now = self._clock.now()
        if caller.expires_at is not None and now >= caller.expires_at:
            return None
        self._record_use(caller.key_id, now)
        return caller

    def forget(self, key_id: str) -> None:
        """Drop the key's cached entry (it was revoked or changed here): its next use reads it again."""
        digest = self._digest_of.pop(key_id, None)
        if digest is not None:
            self._cache.pop(digest, None)

    def _record_use(self, key_id: str, now: datetime) -> None:
        minute = now.replace(second=0, microsecond=0)
        if self._used_in.get(key_id) == minute:
            return
        self._used_in[key_id] = minute
        task = asyncio.create_task(self._keys.used_at(key_id, minute), name="key-last-used")
        self._writes.add(task)
        task.add_done_callback(self._written)

    def _written(self, task: asyncio.Task[None]) -> None:
        self._writes.discard(task)
        if not task.cancelled() and (error := task.exception()) is not None:
            log.warning("could not record when an API key was last used", extra={"error": repr(error)})

    async def writes_done(self) -> None:
        """Wait for the last-used writes under way (at shutdown)."""
        await asyncio.gather(*self._writes, return_exceptions=True)


def bearer_token(header: str | None) -> str:
    if not header:
        raise unauthorized("missing Authorization header; send 'Authorization: Bearer <API_KEY>'")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise unauthorized("the Authorization header must be 'Bearer <API_KEY>'")
    return token.strip()
