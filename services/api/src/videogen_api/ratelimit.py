"""Per-account request rate limits, one global budget per account and policy across every api replica, at no
store round trip per request.

A policy allows ``quota`` requests per fixed window of ``window`` seconds (windows start on multiples of
``window`` since the epoch). The count that matters is the account's across all replicas: it lives in
MongoDB, one document per (policy, window, account), and each replica keeps a local view of it:

- ``synced``: the shared count as this replica last read it;
- ``in_flight`` and ``pending``: what this replica admitted since, being written or not yet written.

A request is admitted while ``synced + in_flight + pending < quota``, decided in memory. Every
``sync_seconds`` (and sooner, once a replica has admitted half its share since its last sync) a replica adds
what it admitted to the shared counts with ``$inc`` and reads the totals back: two store round trips for all
of its accounts at once, never one per request. A replica admits at most ``share`` requests of an account
between two syncs; at its share it waits for a sync before admitting more.

What that guarantees with N replicas (argued in docs/api.md, "Limits"; tests/unit/test_ratelimit.py):

- no 429 before the account has really made ``quota`` requests in the window: the local view never counts
  more than happened (counts only grow within a window);
- at most ``quota + (N - 1) * share`` requests admitted per window: whatever a replica admitted before its
  last sync is in every later read, and after it each replica admits at most ``share`` more.

When the store cannot be reached, a replica stops waiting for syncs and limits on its own view (each replica
then admits up to ``quota``, so up to ``N * quota`` in all) until a sync succeeds again.

The headers follow draft-ietf-httpapi-ratelimit-headers-10: a quota policy item ``"name";q=QUOTA;w=WINDOW``
in ``RateLimit-Policy`` and a service limit item ``"name";r=REMAINING;t=RESET`` in ``RateLimit``, both
structured-field lists (RFC 9651)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from videogen_api.settings import ApiSettings
from videogen_common.clock import Clock, from_millis, to_millis
from videogen_common.repositories.rate_limits import RateLimitRepository
from videogen_common.store import Store

log = logging.getLogger(__name__)

POLICY_HEADER = "RateLimit-Policy"
LIMIT_HEADER = "RateLimit"
# A window's shared count outlives the window by this much before the store's TTL monitor removes it.
KEEP_AFTER_WINDOW = timedelta(minutes=5)


@dataclass(frozen=True)
class Policy:
    """``quota`` requests per fixed window of ``window`` seconds; a replica admits at most ``share`` of them
    between two syncs with the shared count."""

    name: str
    quota: int
    window: int
    share: int

    def __post_init__(self) -> None:
        if not self.name.replace("-", "").isalnum() or self.quota < 1 or self.window < 1:
            raise ValueError(f"invalid rate limit policy {self!r}")
        if not 1 <= self.share <= self.quota:
            raise ValueError(f"a policy's share must be 1 to its quota, got {self.share}")

    @classmethod
    def of(cls, name: str, quota: int, window: int, local_share: float) -> Policy:
        """A policy whose per-replica share is ``local_share`` of its quota (at least 1)."""
        return cls(name, quota, window, min(quota, max(1, math.ceil(quota * local_share))))

    @property
    def header(self) -> str:
        return f'"{self.name}";q={self.quota};w={self.window}'

    def window_at(self, millis: int) -> int:
        return millis // (self.window * 1000)

    def seconds_left(self, window: int, millis: int) -> int:
        """Whole seconds until ``window`` ends, rounded up: at least 1 while it lasts."""
        return max(1, -(-((window + 1) * self.window * 1000 - millis) // 1000))


GENERATE = "generate"
DEFAULT = "default"


@dataclass(frozen=True)
class Policies:
    """The deployment's policies: creation has its own budget (each generation costs provider time), every
    other authenticated request shares the default one."""

    generate: Policy
    default: Policy

    @classmethod
    def from_settings(cls, settings: ApiSettings) -> Policies:
        share = settings.rate_limit_local_share
        return cls(
            Policy.of(
                GENERATE,
                settings.rate_limit_generate_quota,
                settings.rate_limit_generate_window_seconds,
                share,
            ),
            Policy.of(
                DEFAULT, settings.rate_limit_default_quota, settings.rate_limit_default_window_seconds, share
            ),
        )

    def for_request(self, method: str, path: str) -> Policy:
        return self.generate if method == "POST" and path == "/v1/generate" else self.default


@dataclass(frozen=True)
class Decision:
    """One request's verdict under one policy, and what its headers say."""

    policy: Policy
    allowed: bool
    remaining: int
    reset_seconds: int

    @property
    def headers(self) -> dict[str, str]:
        return {
            POLICY_HEADER: self.policy.header,
            LIMIT_HEADER: f'"{self.policy.name}";r={self.remaining};t={self.reset_seconds}',
        }


@dataclass(frozen=True)
class WindowKey:
    """One account's count under one policy in one window: the id of its shared document."""

    policy: str
    window_seconds: int
    window: int
    account_id: str

    @property
    def id(self) -> str:
        # The account comes last, so the id is unambiguous whatever characters an account id holds.
        return f"{self.policy}:{self.window_seconds}:{self.window}:{self.account_id}"

    @property
    def expires_at(self) -> datetime:
        return from_millis((self.window + 1) * self.window_seconds * 1000) + KEEP_AFTER_WINDOW


class SharedCounts(Protocol):
    """The counts every replica shares: ``add`` is an atomic increment per key, ``totals`` reads them."""

    async def add(self, deltas: Mapping[WindowKey, int]) -> None: ...

    async def totals(self, keys: Iterable[WindowKey]) -> dict[WindowKey, int]: ...


class MongoCounts:
    """Shared counts in the store (``RateLimitRepository``): one document per key, ``$inc`` upserts, expired
    by a TTL index on ``expires_at``."""

    def __init__(self, store: Store) -> None:
        self._counts = RateLimitRepository(store)

    async def add(self, deltas: Mapping[WindowKey, int]) -> None:
        await self._counts.add({(key.id, key.account_id, key.expires_at): n for key, n in deltas.items()})

    async def totals(self, keys: Iterable[WindowKey]) -> dict[WindowKey, int]:
        by_id = {key.id: key for key in keys}
        return {by_id[counter_id]: n for counter_id, n in (await self._counts.totals(by_id)).items()}


@dataclass
class _Bucket:
    key: WindowKey
    synced: int = 0
    in_flight: int = 0
    pending: int = 0

    @property
    def used(self) -> int:
        return self.synced + self.in_flight + self.pending

    @property
    def unsynced(self) -> int:
        return self.in_flight + self.pending


class RateLimiter:
    """One replica's side of the shared per-account limits (see the module's docstring)."""

    def __init__(
        self, policies: Policies, counts: SharedCounts, clock: Clock, *, sync_seconds: float
    ) -> None:
        self.policies = policies
        self._counts = counts
        self._clock = clock
        self._sync_seconds = sync_seconds
        self._buckets: dict[tuple[str, str], _Bucket] = {}
        self._sync: asyncio.Task[None] | None = None
        self._loop: asyncio.Task[None] | None = None
        # False after a sync failed: limit on the local view alone rather than wait for a store that is away.
        self._shared = True

    async def check(self, account_id: str, policy: Policy) -> Decision:
        """Admit one request of the account under the policy (counting it), or refuse it."""
        while True:
            millis = to_millis(self._clock.now())
            window = policy.window_at(millis)
            bucket = self._bucket(account_id, policy, window)
            reset = policy.seconds_left(window, millis)
            if bucket.used >= policy.quota:
                return Decision(policy, False, 0, reset)
            if self._shared and bucket.unsynced >= policy.share:
                # This replica has admitted its share since it last knew the total: learn it first.
                await asyncio.shield(self._start_sync())
                continue
            bucket.pending += 1
            if self._shared and bucket.unsynced * 2 >= policy.share:
                self._start_sync()  # early, in the background, so the next request need not wait
            return Decision(policy, True, policy.quota - bucket.used, reset)

    def _bucket(self, account_id: str, policy: Policy, window: int) -> _Bucket:
        bucket = self._buckets.get((policy.name, account_id))
        if bucket is None or bucket.key.window != window or bucket.key.window_seconds != policy.window:
            # A new window starts from what this replica knows of it: nothing yet.
            bucket = _Bucket(WindowKey(policy.name, policy.window, window, account_id))
            self._buckets[(policy.name, account_id)] = bucket
        return bucket

    def _start_sync(self) -> asyncio.Task[None]:
        """The sync in progress, or a new one: one at a time, so a read always precedes the next write."""
        if self._sync is None or self._sync.done():
            self._sync = asyncio.create_task(self.sync(), name="rate-limit-sync")
        return self._sync

    async def sync(self) -> None:
        """Add what this replica admitted to the shared counts and read the totals of its current windows.
        Buckets of windows that have ended are dropped (what they admitted no longer limits anything)."""
        millis = to_millis(self._clock.now())
        current: list[_Bucket] = []
        for slot, bucket in list(self._buckets.items()):
            if millis // (bucket.key.window_seconds * 1000) != bucket.key.window:
                del self._buckets[slot]
            else:
                current.append(bucket)
        if not current:
            return
        sent = [(bucket, bucket.pending) for bucket in current]
        for bucket, delta in sent:
            bucket.in_flight, bucket.pending = delta, 0
        try:
            await self._counts.add({bucket.key: delta for bucket, delta in sent if delta})
        except Exception as exc:
            for bucket, delta in sent:  # not written: keep it for the next sync
                bucket.pending += delta
                bucket.in_flight = 0
            self._lost_store(exc)
            return
        try:
            totals = await self._counts.totals(bucket.key for bucket in current)
        except Exception as exc:
            # Written but not read back: count it as synced-by-us until the next read.
            for bucket, delta in sent:
                bucket.synced += delta
                bucket.in_flight = 0
            self._lost_store(exc)
            return
        for bucket, delta in sent:
            # The total includes what we just added, and everything any replica added before it.
            bucket.synced = max(totals.get(bucket.key, 0), bucket.synced + delta)
            bucket.in_flight = 0
        self._shared = True

    def _lost_store(self, exc: Exception) -> None:
        if self._shared:
            log.warning(
                "rate limit sync failed; limiting on this replica's own counts", extra={"error": repr(exc)}
            )
        self._shared = False

    def start(self) -> None:
        self._loop = asyncio.create_task(self._run(), name="rate-limit-sync-loop")

    async def stop(self) -> None:
        for task in (self._loop, self._sync):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._loop = self._sync = None

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self._sync_seconds)
            try:
                await asyncio.shield(self._start_sync())
            except Exception:  # sync() handles the store's failures; anything else is a bug to report
                log.exception("rate limit sync failed")
