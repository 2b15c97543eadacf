"""Creation's inserts, grouped: the documents of concurrent POST /v1/generate requests go to the store
together, in one unordered ``insert_many``, and each request is answered only once its own document is
acknowledged (a group commit).

The store is creation's bottleneck, and much of what an insert costs it is per command rather than per
document: grouping halves its CPU per generation (docs/benchmarks.md). A lone request is not held back: it is
sent at the end of the event loop's current pass, with whatever else arrived in that pass. While
``max_in_flight`` commands are out, new documents wait and leave together when one comes back.

Each document succeeds or fails on its own (the command is unordered): a duplicate Idempotency-Key fails
only its own request, with the ``DuplicateKeyError`` an ``insert_one`` would have raised. A failure of the
whole command (the store unreachable) fails every request in it, as each ``insert_one`` would have failed."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from pymongo.errors import BulkWriteError, DuplicateKeyError, WriteConcernError, WriteError

from videogen_common.repositories.generations import GenerationRepository
from videogen_common.store import DUPLICATE_KEY

Doc = dict[str, Any]


class InsertBatcher:
    """``max_in_flight``: one by default. On this project's machines one to sixteen gave the same throughput
    within the noise; one makes the biggest groups (everything that arrives while a command is out leaves
    together when it returns), and a command's cost to the api is mostly per command, not per document: one
    rather than two cut the api's CPU per creation by 7-14% (docs/benchmarks.md, issue 29)."""

    def __init__(
        self, generations: GenerationRepository, *, max_batch: int = 100, max_in_flight: int = 1
    ) -> None:
        if max_batch < 1 or max_in_flight < 1:
            raise ValueError("max_batch and max_in_flight must be at least 1")
        self._generations = generations
        self._max_batch = max_batch
        self._max_in_flight = max_in_flight
        self._waiting: list[tuple[Doc, asyncio.Future[None]]] = []
        self._in_flight = 0
        self._scheduled = False
        self._writes: set[asyncio.Task[None]] = set()

    async def insert(self, doc: Doc) -> None:
        """Insert one document; returns once the store acknowledged it, or raises what its write raised."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append((doc, done))
        self._schedule()
        await done

    def _schedule(self) -> None:
        if not self._scheduled and self._waiting and self._in_flight < self._max_in_flight:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self._send)

    def _send(self) -> None:
        self._scheduled = False
        while self._waiting and self._in_flight < self._max_in_flight:
            batch = self._waiting[: self._max_batch]
            del self._waiting[: self._max_batch]
            self._in_flight += 1
            task = asyncio.create_task(self._write(batch), name="insert-batch")
            self._writes.add(task)
            task.add_done_callback(self._writes.discard)

    async def _write(self, batch: list[tuple[Doc, asyncio.Future[None]]]) -> None:
        try:
            await self._generations.insert_batch([doc for doc, _ in batch])
        except BulkWriteError as exc:
            _settle(batch, exc.details)
        except Exception as exc:
            for _, done in batch:
                if not done.done():
                    done.set_exception(exc)
        else:
            for _, done in batch:
                if not done.done():
                    done.set_result(None)
        finally:
            self._in_flight -= 1
            self._schedule()


def _settle(batch: list[tuple[Doc, asyncio.Future[None]]], details: Mapping[str, Any]) -> None:
    """Each document's own outcome, from an unordered insert's error report."""
    errors = {error["index"]: error for error in details.get("writeErrors", [])}
    concern = details.get("writeConcernErrors") or []
    for index, (_, done) in enumerate(batch):
        if done.done():  # its request was cancelled
            continue
        error = errors.get(index)
        if error is None and not concern:
            done.set_result(None)
        elif error is None:
            done.set_exception(
                WriteConcernError(concern[0].get("errmsg", ""), concern[0].get("code"), concern[0])
            )
        elif error.get("code") == DUPLICATE_KEY:
            done.set_exception(DuplicateKeyError(error.get("errmsg", ""), DUPLICATE_KEY, error))
        else:
            done.set_exception(WriteError(error.get("errmsg", ""), error.get("code"), error))


async def insert_all(generations: GenerationRepository, docs: list[Doc], *, group: int = 1000) -> set[str]:
    """A batch's items (``POST /v1/batches``), in unordered ``insert_many`` commands of ``group`` documents:
    the ids of those that were there already (a re-sent batch's, written before), which are left as they
    are. Any other failure raises (a re-send writes what is missing)."""
    present: set[str] = set()
    for start in range(0, len(docs), group):
        chunk = docs[start : start + group]
        try:
            await generations.insert_batch(chunk)
        except BulkWriteError as exc:
            if exc.details.get("writeConcernErrors"):
                raise
            for error in exc.details.get("writeErrors", []):
                if error.get("code") != DUPLICATE_KEY:
                    raise
                present.add(chunk[error["index"]]["_id"])
    return present
