"""API key administration at the command line: an account's first key (tenants make the others themselves,
POST /v1/api-keys). Keys are shown once; only their hash and last four characters are stored. A key made here
holds every scope (stored as none: all) and has no budget of its own."""

from __future__ import annotations

from datetime import datetime

from videogen_common import audit
from videogen_common.audit import AuditActorType, AuditEventType
from videogen_common.clock import SystemClock
from videogen_common.ids import new_id
from videogen_common.records.api_key import ApiKey
from videogen_common.repositories.keys import ApiKeyRepository
from videogen_common.signing import hash_api_key, new_api_key
from videogen_common.store import DuplicateKeyError, Store


async def create_key(
    store: Store,
    account: str,
    *,
    key: str | None = None,
    now: datetime | None = None,
    name: str | None = None,
) -> str:
    """Create a key for ``account`` (a fixed ``key`` is accepted for the dev stack); idempotent for a fixed
    key that already belongs to the same account."""
    key = key or new_api_key()
    now = now or SystemClock().now()
    key_id = new_id("key", now)
    keys = ApiKeyRepository(store)
    try:
        await keys.insert(
            ApiKey(
                id=key_id,
                key_hash=hash_api_key(key),
                account_id=account,
                created_at=now,
                name=name,
                last_four=key[-4:],
            )
        )
    except DuplicateKeyError:
        existing = await keys.by_hash(hash_api_key(key))
        if existing is None or existing.account_id != account:
            raise ValueError("that key already belongs to another account") from None
        return key
    await _audit(store, AuditEventType.API_KEY_CREATED, account, key_id, now)
    return key


async def revoke_key(store: Store, key: str, *, now: datetime | None = None) -> bool:
    now = now or SystemClock().now()
    keys = ApiKeyRepository(store)
    found = await keys.live_by_hash(hash_api_key(key))
    if found is None or not await keys.revoke(found.id, now):
        return False
    await _audit(store, AuditEventType.API_KEY_REVOKED, found.account_id, found.id, now)
    return True


async def _audit(store: Store, type: AuditEventType, account: str, key_id: str, now: datetime) -> None:
    """Keys are made and revoked at the command line, by whoever operates the deployment."""
    event = audit.audit_event(
        account_id=account,
        type=type,
        actor=(AuditActorType.OPERATOR, None),
        target=("api_key", key_id),
        now=now,
    )
    await audit.record(store, event)
