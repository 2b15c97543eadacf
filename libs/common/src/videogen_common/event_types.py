"""Every kind of event a webhook endpoint can receive, each defined once, here (``EVENT_TYPES``): its name,
whether it is owed or best effort, what it is about (its subject), and how its data is made from that subject.
docs/architecture.md shows these definitions as a table, and a test holds the table to them.

**Owed** events are carried by the write that makes the change they report (in the changed document's
``outbox``: ``videogen_common.outbox``), and reach every active endpoint of the account subscribed to them at
least once: the notifier records each (collection ``events``) and its deliveries, then settles it; until then
the orchestrator's reconciler puts it on the events topic again. **Best-effort** events are put on the topic
and never recorded: one lost on the way is not sent. ``webhook.test`` is the one type an endpoint cannot
subscribe to: the api records it with its one delivery, to the endpoint it was asked for.

Adding a type is its definition here (with the collection its changes are written to, ``source``) and, where
the change is made, the change's update made with ``videogen_common.outbox.owing`` and the event published.
The api (subscriptions, ``GET /v1/events``, the OpenAPI document) reads this catalog; the notifier sends every
type alike, knowing none."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, Generic, Protocol, TypeVar

from videogen_common.clock import isoformat
from videogen_common.deliveries import generation_data
from videogen_common.ids import derived_id
from videogen_common.records.batch import BatchRecord
from videogen_common.records.event import Event
from videogen_common.records.generation import GenerationRecord
from videogen_common.records.webhook import WebhookEndpoint

Data = Mapping[str, Any]

# What an event id spelled out of its subject and change may hold: what a URL path, the console's routes and
# the ``Event`` schema take as they are. Ids of generations and webhooks are; an account's name may not be.
_READABLE = re.compile(r"[0-9a-z_]{1,96}")


def event_id(subject_id: str, change: str) -> str:
    """The id of the event ``change`` of subject ``subject_id`` made: ``evt_{subject id}_{change}`` when both
    are lowercase letters, digits and underscores, else a hash of the two (``ids.derived_id``). Either way the
    same subject and change always give the same id."""
    if _READABLE.fullmatch(subject_id) and _READABLE.fullmatch(change):
        return f"evt_{subject_id}_{change}"
    return derived_id("evt", subject_id, change)


class SubjectType(StrEnum):
    """What an event is about."""

    GENERATION = "generation"
    WEBHOOK = "webhook"
    ACCOUNT = "account"
    BATCH = "batch"


class Subject(Protocol):
    """Anything an event can be about: it has an id, and belongs to an account. The store's records of
    generations and webhook endpoints are subjects; ``Account`` makes the account itself one."""

    @property
    def id(self) -> str: ...

    @property
    def account_id(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Account:
    """The account itself as an event's subject (``SubjectType.ACCOUNT``), with whatever its data needs."""

    account_id: str
    details: Data | None = None

    @property
    def id(self) -> str:
        return self.account_id


S_contra = TypeVar("S_contra", bound=Subject, contravariant=True)
T = TypeVar("T", bound=Subject)


@dataclass(frozen=True)
class EventType(Generic[S_contra]):
    """One kind of event. ``owed``: recorded, and delivered at least once (see the module's docstring);
    ``source``: the collection whose documents' writes carry it while it is owed (None: recorded by its maker
    directly, or best effort); ``subscribable``: endpoints may list it in their ``events``; ``data``: the
    ``data`` of its deliveries, made from its subject as the change left it."""

    name: str
    owed: bool
    subject: SubjectType
    description: str
    data: Callable[[S_contra], Data]
    source: str | None = None
    subscribable: bool = True

    def event(
        self,
        subject: S_contra,
        *,
        change: str,
        at: datetime,
        trace_id: str | None = None,
        traceparent: str | None = None,
        carried_by: str | None = None,
    ) -> Event:
        """The event of this type that ``change`` of ``subject`` made, at ``at``. Its id is derived from the
        subject and the change (``event_id``), so whoever makes it, and however often, makes
        the same event: ``change`` must name the change uniquely among the subject's, e.g. the status and
        version a generation reached. ``carried_by``: the id of the document of ``source`` whose write
        carries it, when that is not the subject's own (an account's budget counter, say)."""
        return Event(
            id=event_id(subject.id, change),
            type=self.name,
            account_id=subject.account_id,
            subject_type=self.subject.value,
            subject_id=subject.id,
            data=dict(self.data(subject)),
            created_at=at,
            trace_id=trace_id,
            traceparent=traceparent,
            owed=self.owed,
            source=self.source,
            carrier_id=(carried_by or subject.id) if self.source is not None else None,
        )


class EventTypes:
    """The catalog: every event type by name, in the order defined."""

    def __init__(self) -> None:
        self._types: dict[str, EventType[Any]] = {}

    def define(self, event_type: EventType[T]) -> EventType[T]:
        if event_type.name in self._types:
            raise ValueError(f"event type {event_type.name!r} is defined already")
        self._types[event_type.name] = event_type
        return event_type

    @contextmanager
    def defined(self, event_type: EventType[T]) -> Iterator[EventType[T]]:
        """``event_type`` defined for the ``with`` block only (a test's own type)."""
        self.define(event_type)
        try:
            yield event_type
        finally:
            del self._types[event_type.name]

    def get(self, name: str) -> EventType[Any] | None:
        return self._types.get(name)

    def __iter__(self) -> Iterator[EventType[Any]]:
        return iter(list(self._types.values()))

    def names(self) -> list[str]:
        """Every type's name."""
        return list(self._types)

    def subscribable(self) -> list[str]:
        """The names an endpoint may list in its ``events``."""
        return [name for name, event_type in self._types.items() if event_type.subscribable]

    def sources(self) -> list[str]:
        """The collections whose documents may carry owed events (the reconciler looks in each)."""
        return list(dict.fromkeys(t.source for t in self._types.values() if t.owed and t.source))


EVENT_TYPES = EventTypes()


def generation_data_of(record: GenerationRecord) -> Data:
    """The data of a generation's events: every public field of the generation but its timeline."""
    return generation_data(record.public_view())


def _disabled(endpoint: WebhookEndpoint) -> Data:
    disabled_at = isoformat(endpoint.disabled_at) if endpoint.disabled_at is not None else None
    return {
        "id": endpoint.id,
        "url": endpoint.url,
        "reason": endpoint.disabled_reason or "disabled",
        "disabled_at": disabled_at,
    }


def _account_details(account: Account) -> Data:
    return dict(account.details or {})


def _batch(batch: BatchRecord) -> Data:
    return batch.public_view()


def _test(endpoint: WebhookEndpoint) -> Data:
    return {"webhook_id": endpoint.id}


VIDEO_COMPLETED = EVENT_TYPES.define(
    EventType(
        "video.completed",
        owed=True,
        subject=SubjectType.GENERATION,
        source="generations",
        description="A generation completed: its video and thumbnail links are in the data.",
        data=generation_data_of,
    )
)
VIDEO_FAILED = EVENT_TYPES.define(
    EventType(
        "video.failed",
        owed=True,
        subject=SubjectType.GENERATION,
        source="generations",
        description="A generation failed (a canceled one too): why is its error.",
        data=generation_data_of,
    )
)
VIDEO_PROCESSING = EVENT_TYPES.define(
    EventType(
        "video.processing",
        owed=False,
        subject=SubjectType.GENERATION,
        description="The provider took a generation's task (best effort).",
        data=generation_data_of,
    )
)
VIDEO_PROGRESS = EVENT_TYPES.define(
    EventType(
        "video.progress",
        owed=False,
        subject=SubjectType.GENERATION,
        description="How far a generation is, at most every few seconds (best effort).",
        data=generation_data_of,
    )
)
VIDEO_DELETED = EVENT_TYPES.define(
    EventType(
        "video.deleted",
        owed=True,
        subject=SubjectType.GENERATION,
        source="generations",
        description=(
            "A generation was deleted: its media is gone and its prompt, metadata and links are erased (the "
            "data is its tombstone)."
        ),
        data=generation_data_of,
    )
)
WEBHOOK_DISABLED = EVENT_TYPES.define(
    EventType(
        "webhook.disabled",
        owed=True,
        subject=SubjectType.WEBHOOK,
        source="webhooks",
        description="One of the account's other endpoints was disabled after failing for too long.",
        data=_disabled,
    )
)
ACCOUNT_BUDGET_THRESHOLD = EVENT_TYPES.define(
    EventType(
        "account.budget_threshold",
        owed=True,
        subject=SubjectType.ACCOUNT,
        source="budget_counters",
        description="The account, or one of its keys, has used VIDEOGEN_BUDGET_THRESHOLD_PERCENT of a budget "
        "in its period (once per period): which budget, its limit, what is used and left, when it resets.",
        data=_account_details,
    )
)
BATCH_COMPLETED = EVENT_TYPES.define(
    EventType(
        "batch.completed",
        owed=True,
        subject=SubjectType.BATCH,
        source="batches",
        description="Every item of a batch has ended (once per batch): the batch, with its status "
        "(completed, canceled, or failed: its acceptance was cut short before any item was written), its "
        "counts by outcome and its cost.",
        data=_batch,
    )
)
WEBHOOK_TEST = EVENT_TYPES.define(
    EventType(
        "webhook.test",
        owed=True,
        subject=SubjectType.WEBHOOK,
        description="A test event, sent to the endpoint it was asked for whatever it subscribes to.",
        data=_test,
        subscribable=False,
    )
)
