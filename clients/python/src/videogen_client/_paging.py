"""Walking a cursor-paged listing, one page per request, as the caller iterates."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from datetime import datetime
from typing import Protocol, TypedDict, TypeVar

T_co = TypeVar("T_co", covariant=True)
T = TypeVar("T")


class CreatedBetween(TypedDict, total=False):
    """The filters of every listing: only what was created after, and before, these moments."""

    created_after: datetime | None
    created_before: datetime | None


class Page(Protocol[T_co]):
    @property
    def data(self) -> Sequence[T_co]: ...

    @property
    def next_cursor(self) -> str | None: ...


async def walk(fetch: Callable[[str | None], Awaitable[Page[T]]]) -> AsyncIterator[T]:
    """Every item of every page: ``fetch(cursor)`` reads the page at ``cursor`` (None: the first)."""
    cursor: str | None = None
    while True:
        page = await fetch(cursor)
        for item in page.data:
            yield item
        if page.next_cursor is None:
            return
        cursor = page.next_cursor
