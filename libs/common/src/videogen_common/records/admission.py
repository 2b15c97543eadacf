"""What admission to the providers keeps in the store, as records: a provider key's pool of concurrency
slots (``ProviderPool``, collection ``provider_pools``) and one account's line of waiting generations at one
provider and priority (``WaitingLane``, collection ``waiting_lanes``). How they are used is
``videogen_orchestrator.admission``; the queries are ``repositories.provider_pools`` and
``repositories.waiting_lanes``."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

# A pool's room when it has no limit of ours: more than any deployment starts at once.
UNLIMITED_ROOM = 1 << 30

Doc = dict[str, Any]

# Separates the parts of a lane's id and of a waiting generation's key; no provider, account id or number
# contains it.
SEP = "\n"
# The number of digits of a place in a lane: keys sort by place as strings.
PLACE_DIGITS = 12


def pool_id(provider: str, name: str | None = None) -> str:
    """A pool's id: the provider's name for its only key, ``provider/name`` for one of several."""
    return provider if name is None else f"{provider}/{name}"


@dataclass(frozen=True, slots=True)
class Holder:
    """A generation holding one of a pool's slots, and its account (fair share counts by account)."""

    generation_id: str
    account_id: str


@dataclass(frozen=True, slots=True)
class ProviderPool:
    """One provider key's concurrency, shared by every orchestrator instance.

    ``limit`` is what the operator configured (None: no limit of ours). ``effective`` is what admission uses
    now: the limit, lowered (halved) when the provider refuses a task for capacity and raised again one at a
    time as it accepts tasks: after each acceptance while below ``ceiling`` (the level it was refused at)
    less one, after ``effective`` acceptances in a row above it; None while unlimited. While
    ``paused_until`` is ahead (the provider's Retry-After, or a backoff) nothing new is started on the pool;
    ``hold_until`` keeps a burst of refusals from halving the limit more than once.

    ``joins`` counts the generations that joined a line at the pool's provider, ``cleared`` is what it was
    when its lines were last found empty: while they differ (or ``joins`` is unknown: a pool from before
    they were kept), someone may wait at the provider (``lines_marked``), and admission looks at its lines
    before letting a newcomer take a slot."""

    id: str
    provider: str
    name: str | None
    limit: int | None
    effective: int | None
    holders: tuple[Holder, ...] = ()
    paused_until: datetime | None = None
    hold_until: datetime | None = None
    successes: int = 0
    refusals_in_row: int = 0
    ceiling: int | None = None
    # What the key is used for: the model the adapter asks for and its resolution unless a request says
    # (registered by the orchestrator; the api prices requests with them).
    model: str | None = None
    resolution: str | None = None
    joins: int | None = None
    cleared: int = 0

    @property
    def lines_marked(self) -> bool:
        """Whether someone may wait in a line at the pool's provider (see the class)."""
        return self.joins is None or self.joins != self.cleared

    @property
    def running(self) -> int:
        return len(self.holders)

    def holds(self, generation_id: str) -> bool:
        return any(h.generation_id == generation_id for h in self.holders)

    def paused(self, now: datetime) -> bool:
        return self.paused_until is not None and self.paused_until > now

    def room(self, now: datetime) -> int:
        """How many more generations may start on it now (a large number when unlimited)."""
        if self.paused(now):
            return 0
        if self.effective is None:
            return UNLIMITED_ROOM
        return max(0, self.effective - self.running)

    def running_by_account(self) -> Counter[str]:
        return Counter(h.account_id for h in self.holders)

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any]) -> ProviderPool:
        return cls(
            id=doc["_id"],
            provider=doc["provider"],
            name=doc.get("name"),
            limit=doc.get("limit"),
            effective=doc.get("effective"),
            holders=tuple(Holder(h["g"], h["a"]) for h in doc.get("holders") or ()),
            paused_until=doc.get("paused_until"),
            hold_until=doc.get("hold_until"),
            successes=doc.get("successes", 0),
            refusals_in_row=doc.get("refusals_in_row", 0),
            ceiling=doc.get("ceiling"),
            model=doc.get("model"),
            resolution=doc.get("resolution"),
            joins=doc.get("joins"),
            cleared=doc.get("cleared", 0),
        )

    def to_doc(self) -> Doc:
        marks: Doc = {} if self.joins is None else {"joins": self.joins, "cleared": self.cleared}
        return {
            "_id": self.id,
            "provider": self.provider,
            "name": self.name,
            "limit": self.limit,
            "effective": self.effective,
            "holders": [{"g": h.generation_id, "a": h.account_id} for h in self.holders],
            "paused_until": self.paused_until,
            "hold_until": self.hold_until,
            "successes": self.successes,
            "refusals_in_row": self.refusals_in_row,
            "ceiling": self.ceiling,
            "model": self.model,
            "resolution": self.resolution,
            **marks,
        }


def lane_id(provider: str, account_id: str, rank: int) -> str:
    return f"{provider}{SEP}{account_id}{SEP}{rank}"


def wait_key(lane: str, place: int, generation_id: str) -> str:
    """A waiting generation's ``slot_wait``: its lane, its place in it, its id. One lane's generations are a
    range of the index in the order they start."""
    return f"{lane}{SEP}{place:0{PLACE_DIGITS}d}{SEP}{generation_id}"


def place_bound(lane: str, place: int) -> str:
    """The lowest key a generation at ``place`` (or later) of ``lane`` can have."""
    return f"{lane}{SEP}{place:0{PLACE_DIGITS}d}"


@dataclass(frozen=True, slots=True)
class WaitingLane:
    """One account's generations waiting for one provider at one priority rank, in the order they start.

    Each waiting generation has a place: ``tail`` is the next place to give; no waiting generation has a
    place below ``head`` (a generation taking a place lowers ``head`` to it if need be, so ``head`` is only
    ever a safe lower bound). Finding the lane's next generation is a look at the places from ``head`` on,
    a few at a time: its cost does not grow with the number waiting. ``pending`` says the lane may hold
    someone; ``waiting`` counts them (kept as they join and leave, set to 0 when the lane is found empty);
    ``since`` is when the lane's current run of waiting began; ``joins`` counts every join ever made, so that
    a reader marks the lane empty only if nobody joined since it read the lane (a generation rejoining at the
    place it kept moves neither ``tail`` nor ``head``)."""

    id: str
    provider: str
    account_id: str
    rank: int
    tail: int = 0
    head: int = 0
    pending: bool = False
    waiting: int = 0
    since: datetime | None = None
    joins: int = 0
    # Those taken out of it to start next and kept ready for a slot (an orchestrator's successor on standby):
    # still ahead of everyone in it.
    standby: tuple[str, ...] = ()

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any]) -> WaitingLane:
        return cls(
            id=doc["_id"],
            provider=doc["provider"],
            account_id=doc["account_id"],
            rank=doc["rank"],
            tail=doc.get("tail", 0),
            head=doc.get("head", 0),
            pending=bool(doc.get("pending", False)),
            waiting=max(0, doc.get("waiting", 0)),
            since=doc.get("since"),
            joins=doc.get("joins", 0),
            standby=tuple(doc.get("standby") or ()),
        )
