"""A budget's soft threshold: when what an account or key has used in a period reaches
``VIDEOGEN_BUDGET_THRESHOLD_PERCENT`` of a limit, it is announced once in that period: an audit event, and the
owed, signed webhook event ``account.budget_threshold``.

Once, across replicas and crashes: whoever sees a threshold reached and not yet marked writes the audit event
under an id derived from the account, owner, budget and period (a second one of the same is the same record,
kept once), then marks the budget's counter announced with one conditional write that also carries the webhook
event (``outbox.owing``): the one write that marks it owes the event, and the reconciler republishes it until
the notifier has taken it in. A process that dies before the mark leaves it unmarked, and the next creation in
the period announces it again under the same ids."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from videogen_common import audit
from videogen_common.audit import AuditActorType, AuditEventType
from videogen_common.budgets import ACCOUNT, Limits, Remaining, month_key
from videogen_common.clock import isoformat
from videogen_common.event_types import ACCOUNT_BUDGET_THRESHOLD, Account
from videogen_common.ids import derived_id
from videogen_common.outbox import EventSink, publish
from videogen_common.records.event import Event
from videogen_common.repositories.budgets import BudgetCounterRepository, counter_id
from videogen_common.store import Store


async def announce_thresholds(
    store: Store,
    account_id: str,
    owners: Sequence[tuple[str, Limits]],
    percent: int,
    now: datetime,
    *,
    service: str,
    sink: EventSink | None = None,
) -> list[Remaining]:
    """Announce each threshold of these owners reached in the current period and not yet announced; returns
    those this call announced. ``service``: who noticed (the audit event's system actor); ``sink``: where the
    webhook event is published at once (else the reconciler publishes it, after its grace)."""
    counters = BudgetCounterRepository(store)
    announced: list[Remaining] = []
    for owner, limits in owners:
        if not limits:
            continue
        for state in await counters.thresholds_unannounced(account_id, owner, limits, percent, now):
            event = await budget_threshold_reached(store, account_id, state, percent, now, service=service)
            if await counters.mark_announced(account_id, state, now, owes=event):
                if sink is not None:
                    await publish(sink, event)
                announced.append(state)
    return announced


async def budget_threshold_reached(
    store: Store, account_id: str, state: Remaining, percent: int, now: datetime, *, service: str
) -> Event:
    """The audit event of a reached threshold, written now, and the ``account.budget_threshold`` event to
    carry with the mark (both under ids derived from the account, owner, budget and period)."""
    period = isoformat(state.period_start)
    data = threshold_data(state, percent)
    record = audit.audit_event(
        account_id=account_id,
        type=AuditEventType.BUDGET_THRESHOLD_REACHED,
        actor=(AuditActorType.SYSTEM, service),
        target=("budget", state.owner),
        now=now,
        data=data,
        event_id=derived_id("aud", account_id, state.owner, state.budget.name, period),
    )
    await audit.record(store, record)
    return ACCOUNT_BUDGET_THRESHOLD.event(
        Account(account_id, data),
        change=f"{state.owner}_{state.budget.name}_{period}",
        at=now,
        carried_by=counter_id(account_id, state.owner, month_key(now)),
    )


def threshold_data(state: Remaining, percent: int) -> dict[str, object]:
    """What a threshold's audit event (and webhook event) says."""
    return {
        "budget": state.budget.name,
        "api_key_id": None if state.owner == ACCOUNT else state.owner,
        "threshold_percent": percent,
        **state.amounts(),
        "period_start": isoformat(state.period_start),
        "resets_at": isoformat(state.resets_at),
    }
