"""Store writes held at their decisive point: a race's order forced instead of left to timing.

``HeldWrites`` holds every ``update_one`` the test picks (by collection, filter and update) at the moment the
driver would send it, whoever makes it (the api in the test's event loop, a repository the test drives),
until the test lets the held writes go, all at once. Nothing is mocked: a released write goes to the real
store as it would have, and finds there whatever the other side wrote meanwhile."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from pymongo.asynchronous.collection import AsyncCollection

Doc = Mapping[str, Any]
Picks = Callable[[str, Doc, Doc], bool]


class HeldWrites:
    """``with HeldWrites(picks).installed() as held:`` — ``picks(collection_name, filter, update)`` says which
    writes to hold; ``await held.until_held(n)`` returns once ``n`` of them wait; ``held.release()`` sends
    every one held (and lets later picked writes through)."""

    def __init__(self, picks: Picks) -> None:
        self._picks = picks
        self.held = 0
        self._arrived = asyncio.Condition()
        self._released = asyncio.Event()

    @contextmanager
    def installed(self) -> Iterator[HeldWrites]:
        original = AsyncCollection.update_one
        held = self

        async def update_one(
            collection: AsyncCollection[Any], filter: Any, update: Any, *a: Any, **k: Any
        ) -> Any:
            if held._picks(collection.name, filter, update):
                await held._hold()
            return await original(collection, filter, update, *a, **k)

        setattr(AsyncCollection, "update_one", update_one)  # noqa: B010 — typed unlike the driver's method
        try:
            yield self
        finally:
            setattr(AsyncCollection, "update_one", original)  # noqa: B010
            self.release()

    async def _hold(self) -> None:
        async with self._arrived:
            self.held += 1
            self._arrived.notify_all()
        await self._released.wait()

    async def until_held(self, count: int = 1, timeout: float = 10.0) -> None:
        """Until ``count`` picked writes wait here; an ``AssertionError`` if they do not within ``timeout``
        seconds (the side to hold never reached its write, or writes another way than ``update_one``)."""
        try:
            async with asyncio.timeout(timeout), self._arrived:
                await self._arrived.wait_for(lambda: self.held >= count)
        except TimeoutError:
            raise AssertionError(f"{self.held} of {count} picked writes held after {timeout:g} s") from None

    def release(self) -> None:
        self._released.set()


def terminal_write_of(generation_id: str, *statuses: str) -> Picks:
    """Picks the writes that move generation ``generation_id`` to one of ``statuses`` (a compare-and-set
    transition's ``update_one``)."""

    def picks(collection: str, filter: Doc, update: Doc) -> bool:
        moved_to = (update.get("$set") or {}).get("status")
        return collection == "generations" and filter.get("_id") == generation_id and moved_to in statuses

    return picks


class HeldPuts:
    """A media store (``MediaStore``) that passes everything to ``inner`` but holds each ``put`` of a key
    ``picks`` chooses until the test lets them go (``release``): a copy forced to land after what the test
    does meanwhile. ``await until_held(n)`` returns once ``n`` puts wait."""

    def __init__(self, inner: Any, picks: Callable[[str], bool]) -> None:
        self._inner = inner
        self._picks = picks
        self.held = 0
        self._arrived = asyncio.Condition()
        self._released = asyncio.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def put(self, key: str, data: bytes) -> None:
        if self._picks(key):
            async with self._arrived:
                self.held += 1
                self._arrived.notify_all()
            await self._released.wait()
        await self._inner.put(key, data)

    async def until_held(self, count: int = 1, timeout: float = 10.0) -> None:
        try:
            async with asyncio.timeout(timeout), self._arrived:
                await self._arrived.wait_for(lambda: self.held >= count)
        except TimeoutError:
            raise AssertionError(f"{self.held} of {count} picked puts held after {timeout:g} s") from None

    def release(self) -> None:
        self._released.set()
