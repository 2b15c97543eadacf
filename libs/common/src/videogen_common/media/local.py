"""A folder on disk: the embedded stack's object storage."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO

from videogen_common.media.storage import (
    CHUNK_BYTES,
    MediaChanged,
    MediaDeleteFailed,
    MediaInfo,
    check_folder,
    check_key,
)


class LocalMediaStore:
    """A folder on disk: the embedded stack's object storage. Writes are atomic (write, then rename), so a
    reader holding a file open keeps reading the version it opened. All file I/O runs in worker threads."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, key: str) -> Path:
        return self.root / check_key(key)

    async def put(self, key: str, data: bytes) -> None:
        await asyncio.to_thread(self._put, self.path(key), data)

    async def get(self, key: str) -> bytes | None:
        return await asyncio.to_thread(self._get, self.path(key))

    async def stat(self, key: str) -> MediaInfo | None:
        return await asyncio.to_thread(self._stat, self.path(key))

    async def delete(self, keys: Sequence[str]) -> None:
        paths = {self.path(key): key for key in keys}
        if paths:
            await asyncio.to_thread(self._delete, paths)

    async def keys_in(self, folder: str) -> list[str]:
        return await asyncio.to_thread(self._keys_in, check_folder(folder))

    @asynccontextmanager
    async def open_range(
        self, key: str, info: MediaInfo, start: int, stop: int
    ) -> AsyncIterator[AsyncIterator[bytes]]:
        file = await asyncio.to_thread(self._open, self.path(key), info, start)
        try:
            yield self._chunks(file, stop - start)
        finally:
            await asyncio.to_thread(file.close)

    @staticmethod
    async def _chunks(file: BinaryIO, count: int) -> AsyncIterator[bytes]:
        while count > 0:
            chunk = await asyncio.to_thread(file.read, min(CHUNK_BYTES, count))
            if not chunk:
                raise MediaChanged("the file is shorter than when it was opened")
            count -= len(chunk)
            yield chunk

    @staticmethod
    def _put(path: Path, data: bytes) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(8)}.partial")
        tmp.write_bytes(data)
        tmp.replace(path)

    @staticmethod
    def _delete(paths: dict[Path, str]) -> None:
        failed: dict[str, str] = {}
        for path, key in paths.items():
            try:
                path.unlink(missing_ok=True)
            except OSError as exc:
                failed[key] = exc.strerror or type(exc).__name__
        # A folder left empty goes too (one still holding a file, or a write under way, stays).
        for folder in {path.parent for path in paths}:
            with contextlib.suppress(OSError):
                folder.rmdir()
        if failed:
            reasons = "; ".join(f"{key}: {why}" for key, why in list(failed.items())[:5])
            raise MediaDeleteFailed(f"{len(failed)} objects not deleted: {reasons}", list(failed))

    def _keys_in(self, folder: str) -> list[str]:
        try:
            names = sorted(entry.name for entry in os.scandir(self.root / folder) if entry.is_file())
        except FileNotFoundError:
            return []
        # A write under way (its temporary file) is not an object yet.
        return [f"{folder}/{name}" for name in names if not name.endswith(".partial")]

    @staticmethod
    def _get(path: Path) -> bytes | None:
        try:
            return path.read_bytes()
        except FileNotFoundError:
            return None

    @staticmethod
    def _info(st: os.stat_result) -> MediaInfo:
        return MediaInfo(
            size=st.st_size,
            etag=f"{st.st_mtime_ns:x}-{st.st_size:x}",
            modified=datetime.fromtimestamp(st.st_mtime, UTC),
        )

    @classmethod
    def _stat(cls, path: Path) -> MediaInfo | None:
        try:
            return cls._info(path.stat())
        except FileNotFoundError:
            return None

    @classmethod
    def _open(cls, path: Path, info: MediaInfo, start: int) -> BinaryIO:
        try:
            file = path.open("rb")
        except FileNotFoundError:
            raise MediaChanged("the file is gone") from None
        if cls._info(os.fstat(file.fileno())) != info:
            file.close()
            raise MediaChanged("the file was replaced")
        file.seek(start)
        return file
