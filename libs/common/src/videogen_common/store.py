"""MongoDB: the collections every service uses, and their indexes (created by the migration step)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from pymongo import AsyncMongoClient, WriteConcern
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.asynchronous.database import AsyncDatabase
from pymongo.errors import (
    ConnectionFailure,
    DuplicateKeyError,
    PyMongoError,
    ServerSelectionTimeoutError,
    WriteConcernError,
)
from pymongo.monitoring import CommandListener

# The driver's errors the services tell apart (a key already taken, the store unreachable or not answering in
# time, a write not acknowledged as durable, any store failure), named here so that only libs/common imports
# the driver: ``make lint`` forbids the services and the operator's command to import pymongo.
__all__ = [
    "DUPLICATE_KEY",
    "ConnectionFailure",
    "DuplicateKeyError",
    "Durability",
    "Engine",
    "PyMongoError",
    "ServerSelectionTimeoutError",
    "Store",
    "WriteConcernError",
    "connect",
    "unreachable",
]

Doc = dict[str, Any]

# The server's code for a write refused by a unique index (an error of a bulk write carries it).
DUPLICATE_KEY = 11000


class Engine(StrEnum):
    """The server behind the client. Production runs MongoDB; development and the tests run SecantusDB, a
    MongoDB-API server that answers a few query shapes (findAndModify, ``$or``) with a collection scan. The
    repositories use MongoDB's shapes, and ask ``Store.engine()`` only where the embedded one needs
    another."""

    MONGODB = "mongodb"
    SECANTUSDB = "secantusdb"


@dataclass(frozen=True)
class Store:
    """Typed handles on videogen's collections."""

    db: AsyncDatabase[Doc]
    # The engine, when the caller knows it (a test running MongoDB's shapes against the embedded server);
    # otherwise learnt from the server's buildInfo the first time a repository asks, and kept.
    known_engine: Engine | None = None
    _learnt: list[Engine] = field(default_factory=list, compare=False, repr=False)

    async def engine(self) -> Engine:
        if self.known_engine is not None:
            return self.known_engine
        if not self._learnt:
            info = await self.db.client.admin.command("buildInfo")
            self._learnt.append(Engine.SECANTUSDB if "secantusVersion" in info else Engine.MONGODB)
        return self._learnt[0]

    @property
    def generations(self) -> AsyncCollection[Doc]:
        return self.db["generations"]

    @property
    def batches(self) -> AsyncCollection[Doc]:
        """Batches of generations accepted in one request (``records.batch``); their items are generations."""
        return self.db["batches"]

    @property
    def webhooks(self) -> AsyncCollection[Doc]:
        return self.db["webhooks"]

    @property
    def deliveries(self) -> AsyncCollection[Doc]:
        return self.db["deliveries"]

    @property
    def events(self) -> AsyncCollection[Doc]:
        """Each account's owed events as the notifier took them in (see videogen_common.event_types)."""
        return self.db["events"]

    @property
    def api_keys(self) -> AsyncCollection[Doc]:
        return self.db["api_keys"]

    @property
    def audit_events(self) -> AsyncCollection[Doc]:
        """Changes to each account's keys and webhooks (see videogen_common.audit)."""
        return self.db["audit_events"]

    @property
    def budgets(self) -> AsyncCollection[Doc]:
        """Each account's spend limits (a key's own are on the key)."""
        return self.db["budgets"]

    @property
    def budget_counters(self) -> AsyncCollection[Doc]:
        """What each account's and key's generations reserved of their budgets, per month and day."""
        return self.db["budget_counters"]

    @property
    def usage_days(self) -> AsyncCollection[Doc]:
        """Each account's usage by settled UTC day (``repositories.usage``): one per account and day."""
        return self.db["usage_days"]

    @property
    def account_slots(self) -> AsyncCollection[Doc]:
        """The orchestrator's per-account count of generations in flight (one document per account)."""
        return self.db["account_slots"]

    @property
    def provider_pools(self) -> AsyncCollection[Doc]:
        """Each provider key's concurrency slots, shared by every orchestrator instance (admission)."""
        return self.db["provider_pools"]

    @property
    def provider_health(self) -> AsyncCollection[Doc]:
        """One document per provider key: its breaker and recent outcomes (``records.health``)."""
        return self.db["provider_health"]

    @property
    def waiting_lanes(self) -> AsyncCollection[Doc]:
        """Each account's line of generations waiting for a provider, by priority (admission)."""
        return self.db["waiting_lanes"]

    @property
    def orchestrators(self) -> AsyncCollection[Doc]:
        """The orchestrator instances alive, each seen at its last heartbeat (they share provider rates)."""
        return self.db["orchestrators"]

    @property
    def uploads(self) -> AsyncCollection[Doc]:
        """Images clients uploaded for use as a first frame (the bytes are in media storage)."""
        return self.db["uploads"]

    @property
    def rate_limits(self) -> AsyncCollection[Doc]:
        """The api's per-account request counts, one document per (policy, window, account), all replicas'."""
        return self.db["rate_limits"]


class Durability(StrEnum):
    """How durable a write must be before the store acknowledges it (``VIDEOGEN_MONGO_WRITE_CONCERN``).

    Every write goes through the client ``connect`` makes, so this one choice covers creation (before the
    ``202``), state transitions and the events they carry (before they are published), delivery records and
    attempts (before an event's offset is committed), webhooks, keys, leases and account slots."""

    # On a majority of the replica set *and* in its journal: survives the crash of any process, the store's
    # included. The default, and the only choice under which docs/guarantees.md holds.
    MAJORITY_JOURNALED = "majority-journaled"
    # On a majority, journal left to the server (MongoDB journals majority writes unless
    # writeConcernMajorityJournalDefault was turned off; the embedded SecantusDB does not).
    MAJORITY = "majority"
    # The primary's memory only: loses acknowledged writes when the store crashes. For measuring what
    # durability costs, never for a deployment.
    PRIMARY_MEMORY = "primary-memory"


WRITE_CONCERNS: dict[Durability, WriteConcern] = {
    Durability.MAJORITY_JOURNALED: WriteConcern(w="majority", j=True),
    Durability.MAJORITY: WriteConcern(w="majority"),
    Durability.PRIMARY_MEMORY: WriteConcern(w=1, j=False),
}


def unreachable(exc: BaseException) -> bool:
    """Whether ``exc`` says the store could not be reached or did not answer in time (a connection refused
    or reset, no server to select, an operation past its ``timeout_ms``), rather than that it refused the
    operation. Such an operation may or may not have taken effect."""
    if isinstance(exc, ConnectionFailure):  # NetworkTimeout, AutoReconnect, ServerSelectionTimeoutError
        return True
    return isinstance(exc, PyMongoError) and exc.timeout


def connect(
    url: str,
    database: str,
    *,
    app_name: str,
    durability: Durability = Durability.MAJORITY_JOURNALED,
    server_selection_timeout_ms: int | None = None,
    timeout_ms: int | None = None,
    event_listeners: Sequence[CommandListener] = (),
) -> tuple[AsyncMongoClient[Doc], Store]:
    """A client whose every write carries ``durability``'s write concern and whose reads see only what a
    majority acknowledged (so a decision is never taken on a write that a crash could still take back).
    Both are given here, explicitly, so they win over the server's defaults and over options in ``url``.

    ``timeout_ms`` bounds each operation made through the client, all of it (the driver's ``timeoutMS``):
    finding a server, getting a connection, and waiting for the answer, which without it has no bound at all
    on a connection whose peer went silent (a partition: no reset, no answer, until the driver's monitor
    gives the server up some 20-30 s later). Past it the operation raises an error ``unreachable`` knows."""
    concern = WRITE_CONCERNS[durability].document
    options: dict[str, Any] = {"w": concern["w"]}
    if "j" in concern:
        options["journal"] = concern["j"]
    if server_selection_timeout_ms is not None:  # how long a call waits for a store to answer (30 s)
        options["serverSelectionTimeoutMS"] = server_selection_timeout_ms
    if timeout_ms is not None:
        options["timeoutMS"] = timeout_ms
    if event_listeners:  # a benchmark counting its round trips
        options["event_listeners"] = list(event_listeners)
    client: AsyncMongoClient[Doc] = AsyncMongoClient(
        url, appname=app_name, tz_aware=True, readConcernLevel="majority", **options
    )
    return client, Store(client[database])
