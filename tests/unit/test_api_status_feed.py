"""The status feed's own ticks, below the broker: keep-alive cues and rechecks are spread over their slots (no
tick touches every waiter), and a recheck reads in full only the generations that changed. The feed is not
started (no broker); each test runs the ticks itself, one slot at a time."""

from __future__ import annotations

import asyncio
import dataclasses
import math
from collections.abc import AsyncIterator, Awaitable, Callable

from videogen_api.status_feed import CUE_SLOTS, RECHECK_SLOTS, Change, Key, StatusFeed
from videogen_common.clock import SystemClock
from videogen_common.domain import Provider
from videogen_common.generations import new_record
from videogen_common.records.generation import GenerationRecord

NOW = SystemClock().now()


def record(generation_id: str, version: int = 1) -> GenerationRecord:
    created = new_record(
        generation_id=generation_id,
        account_id="acct",
        prompt="a fox",
        provider=Provider.MOCK,
        duration=5,
        now=NOW,
    )
    return dataclasses.replace(created, version=version)


class Stored:
    """The generations as the store holds them, and what the feed asked of it."""

    def __init__(self, ids: list[str]) -> None:
        self.records = {i: record(i) for i in ids}
        self.key_reads: list[list[str]] = []
        self.full_reads: list[list[str]] = []

    async def read_keys(self, ids: list[str]) -> dict[str, Key]:
        self.key_reads.append(ids)
        return {i: (self.records[i].version, -1) for i in ids if i in self.records}

    async def read_many(self, ids: list[str]) -> AsyncIterator[GenerationRecord]:
        self.full_reads.append(ids)
        for i in ids:
            if i in self.records:  # those that exist
                yield self.records[i]

    def reader(self, generation_id: str) -> Callable[[], Awaitable[GenerationRecord | None]]:
        async def read() -> GenerationRecord | None:
            return self.records.get(generation_id)

        return read


Followed = tuple[list[list[Change | None]], list[asyncio.Task[None]]]


async def follow(feed: StatusFeed, stored: Stored, ids: list[str], *, cues: bool) -> Followed:
    """One waiter per id, each past its first change (the generation as read); what each gets after that is
    appended to its list. Its tasks end once the feed is released."""
    got: list[list[Change | None]] = [[] for _ in ids]
    started = [asyncio.Event() for _ in ids]

    async def one(n: int, generation_id: str) -> None:
        changes = feed.changes(generation_id, stored.reader(generation_id), cues=cues)
        await anext(changes)
        started[n].set()
        async for change in changes:
            got[n].append(change)

    tasks = [asyncio.create_task(one(n, generation_id)) for n, generation_id in enumerate(ids)]
    for event in started:
        await event.wait()
    return got, tasks


async def settle() -> None:
    """Let every waiter woken take what it was handed."""
    for _ in range(3):
        await asyncio.sleep(0)


async def test_keep_alive_cues_reach_every_stream_once_per_period_a_slot_at_a_time() -> None:
    ids = [f"gen_{n}" for n in range(300)]
    stored = Stored(ids)
    feed = StatusFeed("unused", "unused", stored.read_many, stored.read_keys)
    got, tasks = await follow(feed, stored, ids, cues=True)
    assert feed.waiting == 300
    most = math.ceil(len(ids) / CUE_SLOTS)
    for slot in range(CUE_SLOTS):
        before = sum(len(changes) for changes in got)
        feed.cue_slot(slot)
        await settle()
        cued = sum(len(changes) for changes in got) - before
        assert 0 < cued <= most  # one slot's share, never every stream at once
    assert all(changes == [None] for changes in got)  # each stream cued once in the period, nothing else
    feed.release()
    await asyncio.gather(*tasks)
    assert feed.waiting == 0


async def test_a_recheck_reads_keys_a_slot_at_a_time_and_in_full_only_what_changed() -> None:
    ids = [f"gen_{n}" for n in range(100)]
    stored = Stored(ids)
    feed = StatusFeed("unused", "unused", stored.read_many, stored.read_keys)
    got, tasks = await follow(feed, stored, ids, cues=False)
    changed = {"gen_7", "gen_42", "gen_99"}
    for generation_id in changed:
        stored.records[generation_id] = record(generation_id, version=2)
    for slot in range(RECHECK_SLOTS):
        await feed.recheck_slot(slot)
    await settle()
    assert sorted(i for read in stored.key_reads for i in read) == sorted(ids)  # each once in the period
    assert max(len(read) for read in stored.key_reads) <= math.ceil(len(ids) / RECHECK_SLOTS)
    assert sorted(i for read in stored.full_reads for i in read) == sorted(changed)
    for generation_id, changes in zip(ids, got, strict=True):
        if generation_id in changed:
            assert [change[0] for change in changes if change is not None] == [2]
        else:
            assert changes == []  # without cues asked for, an unchanged generation gives nothing
    # Read again with nothing newer: nothing read in full, nothing handed out.
    stored.full_reads.clear()
    for slot in range(RECHECK_SLOTS):
        await feed.recheck_slot(slot)
    await settle()
    assert stored.full_reads == []
    assert sum(len(changes) for changes in got) == len(changed)
    feed.release()
    await asyncio.gather(*tasks)


async def test_reads_asked_for_at_the_same_moment_are_one_query() -> None:
    ids = [f"gen_{n}" for n in range(300)]
    stored = Stored(ids)
    feed = StatusFeed("unused", "unused", stored.read_many, stored.read_keys)
    found = await asyncio.gather(*(feed.read(i) for i in [*ids, "gen_unknown", "gen_7"]))
    assert [r.id if r is not None else None for r in found] == [*ids, None, "gen_7"]
    assert len(stored.full_reads) == 1  # 301 distinct ids: one query (at most RECHECK_BATCH per query)
    assert sorted(stored.full_reads[0]) == sorted([*ids, "gen_unknown"])
    assert (await feed.read("gen_1")) is not None  # a later read is a query of its own
    assert stored.full_reads[1] == ["gen_1"]


async def test_a_batched_read_that_fails_fails_each_reader() -> None:
    async def failing(ids: list[str]) -> AsyncIterator[GenerationRecord]:
        if ids:
            raise ConnectionError("store away")
        yield record("gen_never")

    feed = StatusFeed("unused", "unused", failing, Stored([]).read_keys)
    results = await asyncio.gather(feed.read("gen_1"), feed.read("gen_2"), return_exceptions=True)
    assert [type(result) for result in results] == [ConnectionError, ConnectionError]
