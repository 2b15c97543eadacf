"""`videogen retention`: an account's media kept for less than the deployment's
``VIDEOGEN_MEDIA_RETENTION_DAYS``, where a tenant asks for it. Like a zero-data-retention agreement, it is
agreed with whoever operates the deployment rather than set by an API key. Setting it also brings forward the
deletion of the account's media already stored (at most ``days`` after each generation finished); clearing it
keeps new media as long as the deployment does (what is already due sooner stays so). Each change is in the
account's audit trail, made by an operator."""

from __future__ import annotations

from datetime import datetime

from videogen_common import audit
from videogen_common.audit import AuditActorType, AuditEventType
from videogen_common.clock import SystemClock
from videogen_common.repositories.account_settings import AccountSettingsRepository
from videogen_common.repositories.deletions import GenerationDeletions
from videogen_common.store import Store


async def set_retention(
    store: Store, account: str, days: int | None, *, longest: int, now: datetime | None = None
) -> int:
    """Keep ``account``'s media ``days`` (None: as long as the deployment, ``longest`` days); returns how
    many of its generations' media became due sooner. Longer than the deployment's is refused
    (``ValueError``): retention only ever shortens."""
    if days is not None and not 1 <= days <= longest:
        raise ValueError(f"days must be between 1 and {longest} (VIDEOGEN_MEDIA_RETENTION_DAYS)")
    now = now or SystemClock().now()
    await AccountSettingsRepository(store).set_retention_days(account, days, now)
    shortened = 0 if days is None else await GenerationDeletions(store).shorten_retention(account, days)
    await audit.record(
        store,
        audit.audit_event(
            account_id=account,
            type=AuditEventType.RETENTION_UPDATED,
            actor=(AuditActorType.OPERATOR, None),
            target=("account", account),
            now=now,
            data={"media_retention_days": days, "brought_forward": shortened},
        ),
    )
    return shortened


async def retention_of(store: Store, account: str) -> int | None:
    """The days ``account``'s media is kept, if shortened."""
    return await AccountSettingsRepository(store).retention_days(account)
