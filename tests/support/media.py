"""A media store that passes every call on to another: what a test's wrapper subclasses, overriding only the
calls it watches or holds (``videogen_common.media.MediaStore``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager

from videogen_common.media import MediaInfo, MediaStore


class PassThroughMedia:
    def __init__(self, inner: MediaStore) -> None:
        self.inner = inner

    async def put(self, key: str, data: bytes) -> None:
        await self.inner.put(key, data)

    async def get(self, key: str) -> bytes | None:
        return await self.inner.get(key)

    async def stat(self, key: str) -> MediaInfo | None:
        return await self.inner.stat(key)

    def open_range(
        self, key: str, info: MediaInfo, start: int, stop: int
    ) -> AbstractAsyncContextManager[AsyncIterator[bytes]]:
        return self.inner.open_range(key, info, start, stop)

    async def delete(self, keys: Sequence[str]) -> None:
        await self.inner.delete(keys)

    async def keys_in(self, folder: str) -> list[str]:
        return await self.inner.keys_in(folder)
