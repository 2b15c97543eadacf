"""What carrying an event costs a change: terminal transitions per second on the real store, at the durable
write concern, four ways measured in the same run.

- ``before``: the compare-and-set alone, marking the generation owed with a flag (``outbox_pending``/
  ``outbox_at``), as the terminal transition was written before events were records: the baseline;
- ``event in its write``: ``GenerationRepository.transition`` as it is, the compare-and-set carrying the event
  in the generation's ``outbox`` (``videogen_common.outbox.owing``);
- ``transaction``: the compare-and-set and the event's insert in one multi-document transaction, the way
  built first and dropped (docs/architecture.md: beside concurrent writes to the same documents the embedded
  store livelocks; alone, as here, it is merely slower);
- ``record and clear``: the change with its event, then the event's insert and the mark's removal, each a
  journaled write of its own, as a writer that recorded the event itself would.

    .venv/bin/python -m bench.event_outbox [--transitions N] [--concurrency C] [--rounds R]

Each round runs the four one after the other on fresh generations, in an order that turns each round, and
states each one's rate as a ratio to ``before`` in the same round; the figure is the median over rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.common import closed_loop, engines, migrated_store
from videogen_common.domain import Provider, Status
from videogen_common.generations import new_generation, terminal_event
from videogen_common.ids import new_id
from videogen_common.outbox import owing
from videogen_common.records.event import Event
from videogen_common.records.generation import GenerationRecord
from videogen_common.repositories.generations import GenerationRepository
from videogen_common.store import Store

Doc = dict[str, Any]
BEFORE, NOW, TRANSACTION, RECORD = "before", "event in its write", "transaction", "record and clear"


async def prepared(store: Store, count: int) -> list[Doc]:
    """``count`` running generations, as the actor holds them before its terminal write."""
    now = datetime.now(UTC)
    docs = [
        {
            **new_generation(
                generation_id=new_id("gen", now),
                account_id="bench",
                prompt="a red fox running through fresh snow at dawn, cinematic",
                provider=Provider.MOCK,
                duration=5,
                now=now,
            ),
            "lease_owner": "bench",
        }
        for _ in range(count)
    ]
    await store.generations.insert_many(docs)
    return docs


def _cas(doc: Doc, now: datetime, extra: Doc) -> tuple[Doc, Doc]:
    query = {"_id": doc["_id"], "status": doc["status"], "version": doc["version"], "lease_owner": "bench"}
    update = {
        "$set": {"status": Status.COMPLETED.value, "updated_at": now, "lease_owner": None, **extra},
        "$inc": {"version": 1},
        "$push": {"timeline": {"status": Status.COMPLETED.value, "at": now}},
    }
    return query, update


def way(name: str, store: Store, docs: list[Doc]) -> Callable[[], Awaitable[None]]:
    waiting = iter(docs)
    generations = GenerationRepository(store)
    client = store.db.client

    def event_of(doc: Doc, now: datetime) -> Event:
        moved = {**doc, "status": Status.COMPLETED.value, "updated_at": now, "version": doc["version"] + 1}
        return terminal_event(GenerationRecord.from_doc(moved))

    async def before() -> None:
        now = datetime.now(UTC)
        query, update = _cas(next(waiting), now, {"outbox_pending": True, "outbox_at": now})
        assert (await store.generations.update_one(query, update)).modified_count == 1

    async def event_in_its_write() -> None:
        doc = next(waiting)
        assert await generations.transition(doc, Status.COMPLETED, now=datetime.now(UTC), owner="bench")

    async def transaction() -> None:
        doc, now = next(waiting), datetime.now(UTC)
        query, update = _cas(doc, now, {})
        async with client.start_session() as session:
            await session.start_transaction()
            assert (await store.generations.update_one(query, update, session=session)).modified_count == 1
            await store.events.insert_one(event_of(doc, now).to_doc(), session=session)
            await session.commit_transaction()

    async def record_and_clear() -> None:
        doc, now = next(waiting), datetime.now(UTC)
        event = event_of(doc, now)
        query, update = _cas(doc, now, {})
        assert (await store.generations.update_one(query, owing(update, event))).modified_count == 1
        await store.events.insert_one(event.to_doc())
        await store.generations.update_one({"_id": doc["_id"]}, {"$unset": {"outbox": "", "outbox_at": ""}})

    return {
        BEFORE: before,
        NOW: event_in_its_write,
        TRANSACTION: transaction,
        RECORD: record_and_clear,
    }[name]


async def run(transitions: int, concurrency: int, rounds: int) -> dict[str, list[float]]:
    rates: dict[str, list[float]] = {BEFORE: [], NOW: [], TRANSACTION: [], RECORD: []}
    names = list(rates)
    with tempfile.TemporaryDirectory(prefix="vg-bench-") as tmp:
        async with engines(Path(tmp)) as urls:
            client, store = await migrated_store(urls, Path(tmp), "bench_outbox")
            try:
                warm = await prepared(store, 200)  # connections open, caches warm
                await closed_loop(
                    "warm-up", way(TRANSACTION, store, warm), total=200, concurrency=concurrency
                )
                for n in range(rounds):
                    order = names[n % len(names) :] + names[: n % len(names)]
                    for name in order:
                        docs = await prepared(store, transitions)
                        result = await closed_loop(
                            name, way(name, store, docs), total=transitions, concurrency=concurrency
                        )
                        rates[name].append(result.rate)
                        print(f"round {n + 1}: {result.line()}", flush=True)
            finally:
                await client.close()
    return rates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--transitions", type=int, default=1500, help="per way and round")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rates = asyncio.run(run(args.transitions, args.concurrency, args.rounds))
    for name, found in rates.items():
        ratios = [rate / base for rate, base in zip(found, rates[BEFORE], strict=True)]
        listed = ", ".join(f"{r:.2f}" for r in ratios)
        print(
            f"{name:<22} {statistics.median(found):7.0f}/s (median)   "
            f"/ before: {statistics.median(ratios):.2f} (median of {listed})"
        )


if __name__ == "__main__":
    main()
