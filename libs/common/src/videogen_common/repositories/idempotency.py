"""Idempotency-Keys on the ``generations`` collection: a generation created under a key carries it (scoped to
its account, ``idem``), the request's hash and the response first returned, written by the one insert that
creates it (``records.generation.idempotency_fields``); the unique index on ``idem`` makes a second creation
under the key fail, and ``IdempotencyKeys.saved_reply`` reads what the first one answered."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pymongo import ASCENDING, IndexModel
from pymongo.asynchronous.collection import AsyncCollection

from videogen_common.store import Store

Doc = dict[str, Any]

INDEXES: list[IndexModel] = [
    # "{account_id}\n{key}", set only when the client sent a key. Unique, so creating a generation under a key
    # is one atomic insert; sparse, so generations without a key are not indexed.
    IndexModel([("idem", ASCENDING)], name="one_per_idempotency_key", unique=True, sparse=True),
]


@dataclass(frozen=True, slots=True)
class SavedReply:
    """What a request under an Idempotency-Key was answered: its request's hash and the response body."""

    request_hash: str
    response: Mapping[str, Any]


class IdempotencyKeys:
    def __init__(self, store: Store) -> None:
        self._generations: AsyncCollection[Doc] = store.generations

    async def saved_reply(self, idem: str) -> SavedReply | None:
        """The reply saved under a key (its stored ``idem`` value), or None if no generation holds it."""
        found = await self._generations.find_one(
            {"idem": idem}, projection={"idem_hash": 1, "idem_response": 1}
        )
        return None if found is None else SavedReply(found["idem_hash"], found["idem_response"])
