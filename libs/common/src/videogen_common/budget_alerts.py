"""A budget's soft threshold: when what an account or key has used in a period reaches
``VIDEOGEN_BUDGET_THRESHOLD_PERCENT`` of a limit, it is announced once in that period — an audit event now,
and the signed webhook event ``account.budget_threshold`` once events are stored records with one outbox
(``budget_threshold_reached`` is the one place it will be emitted from).

Once, across replicas and crashes: whoever sees a threshold reached and not yet marked announces it under an
id derived from the account, owner, budget and period (so a second announcement of the same one is the same
record, kept once), then marks it; a process that dies between the two leaves it unmarked, and the next
creation in the period announces it again under the same id."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from videogen_common import audit
from videogen_common.audit import AuditActorType, AuditEventType
from videogen_common.budgets import ACCOUNT, Limits, Remaining
from videogen_common.clock import isoformat
from videogen_common.ids import derived_id
from videogen_common.repositories.budgets import BudgetCounterRepository
from videogen_common.store import Store


async def announce_thresholds(
    store: Store,
    account_id: str,
    owners: Sequence[tuple[str, Limits]],
    percent: int,
    now: datetime,
    *,
    service: str,
) -> list[Remaining]:
    """Announce each threshold of these owners reached in the current period and not yet announced; returns
    those announced. ``service``: who noticed (the audit event's system actor)."""
    counters = BudgetCounterRepository(store)
    announced: list[Remaining] = []
    for owner, limits in owners:
        if not limits:
            continue
        for state in await counters.thresholds_unannounced(account_id, owner, limits, percent, now):
            await budget_threshold_reached(store, account_id, state, percent, now, service=service)
            await counters.mark_announced(account_id, state, now)
            announced.append(state)
    return announced


async def budget_threshold_reached(
    store: Store, account_id: str, state: Remaining, percent: int, now: datetime, *, service: str
) -> None:
    """The one place a reached threshold is announced from: the audit event, and — once issue 26's stored
    events and their outbox exist — the ``account.budget_threshold`` webhook event, recorded here under the
    same derived id so it too is made once per period (its ``data``: ``threshold_data(state, percent)``)."""
    period = isoformat(state.period_start)
    event = audit.audit_event(
        account_id=account_id,
        type=AuditEventType.BUDGET_THRESHOLD_REACHED,
        actor=(AuditActorType.SYSTEM, service),
        target=("budget", state.owner),
        now=now,
        data=threshold_data(state, percent),
        event_id=derived_id("aud", account_id, state.owner, state.budget.name, period),
    )
    await audit.record(store, event)
    # account.budget_threshold: emitted here (issue 26), with derived_id("evt", account_id, state.owner,
    # state.budget.name, period) as its event id.


def threshold_data(state: Remaining, percent: int) -> dict[str, object]:
    """What a threshold's audit event (and webhook event) says."""
    return {
        "budget": state.budget.name,
        "api_key_id": None if state.owner == ACCOUNT else state.owner,
        "threshold_percent": percent,
        "limit": state.limit,
        "used": state.used,
        "remaining": state.remaining,
        "period_start": isoformat(state.period_start),
        "resets_at": isoformat(state.resets_at),
    }
