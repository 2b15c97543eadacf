"""What the retention sweeper costs: the media of N generations past their retention (a video and a thumbnail
each) deleted by ``RetentionSweeper.run_once`` on the real store and a real media storage, beside two floors
measured in the same run.

- ``raw deletes``: as many objects deleted by the same media store, in calls of the same size (one per sweeper
  batch: twice ``batch`` keys, one S3 DeleteObjects per 1,000), with no store work: the storage's floor;
- ``raw marks``: N other due generations marked swept by id, ``batch`` a command (the very ``update_many``
  the sweeper sends), with no read and no storage call: the store's floor;
- ``sweeper``: one pass over the N due generations (and nothing else due), ``batch`` a page: its lock, its
  pages through ``by_media_due``, the deletes and the marks.

Reported per backend (the local folder; S3 on moto's server, as the tests run it): generations and objects
per second, the sweeper's time over the two floors' sum (1.0: it adds nothing of its own), and per generation
the store commands (round trips, by name) and storage requests. After the pass every due generation is marked
swept and no object is left, or the run fails.

    .venv/bin/python -m bench.retention_sweeper [--generations N] [--batch B] [--backend local|s3 ...]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.common import Commands, engines, migrated_store
from tests.support.media import PassThroughMedia
from tests.support.s3 import endpoint_url, new_bucket, s3_media_env, s3_server
from videogen_common.clock import SystemClock
from videogen_common.domain import Provider, Status
from videogen_common.generations import new_generation
from videogen_common.ids import new_id
from videogen_common.media import MediaStore, open_media_store
from videogen_common.settings import CommonSettings
from videogen_common.store import Store
from videogen_orchestrator.retention_sweeper import RetentionSweeper

Doc = dict[str, Any]
PUT_CONCURRENCY = 32
S3_DELETE_BATCH = 1000  # keys per DeleteObjects


class CountingMedia(PassThroughMedia):
    """``inner``, counting its delete calls and the storage requests they make (one per 1,000 keys on S3,
    one per key on the local folder)."""

    def __init__(self, inner: MediaStore, keys_per_request: int) -> None:
        super().__init__(inner)
        self.keys_per_request = keys_per_request
        self.calls = 0
        self.requests = 0
        self.keys = 0

    async def delete(self, keys: Sequence[str]) -> None:
        if keys:
            self.calls += 1
            self.requests += math.ceil(len(keys) / self.keys_per_request)
            self.keys += len(keys)
        await self.inner.delete(keys)


async def put_all(media: MediaStore, keys: list[str]) -> None:
    body = b"\x00" * 256
    for start in range(0, len(keys), PUT_CONCURRENCY):
        await asyncio.gather(*(media.put(key, body) for key in keys[start : start + PUT_CONCURRENCY]))


async def due_generations(store: Store, media: MediaStore, count: int) -> list[str]:
    """``count`` completed generations whose media (a video and a thumbnail, stored) was due yesterday."""
    now = datetime.now(UTC)
    docs, keys = [], []
    for _ in range(count):
        gid = new_id("gen", now)
        video, thumbnail = f"{gid}/video.mp4", f"{gid}/thumbnail.jpg"
        doc = new_generation(
            generation_id=gid,
            account_id="bench",
            prompt="a red fox running through fresh snow at dawn, cinematic",
            provider=Provider.MOCK,
            duration=5,
            now=now,
        )
        doc.update(
            status=Status.COMPLETED.value,
            video_key=video,
            thumbnail_key=thumbnail,
            media_due_at=now - timedelta(days=1),
        )
        docs.append(doc)
        keys += [video, thumbnail]
    for start in range(0, len(docs), 1000):
        await store.generations.insert_many(docs[start : start + 1000])
    await put_all(media, keys)
    return [doc["_id"] for doc in docs]


@dataclass(frozen=True)
class Figures:
    backend: str
    generations: int
    raw_seconds: float
    marks_seconds: float
    sweep_seconds: float
    commands: Counter[str]
    storage_requests: int
    delete_calls: int

    def lines(self) -> list[str]:
        name, n = self.backend, self.generations
        objects = 2 * n
        floors = self.raw_seconds + self.marks_seconds
        commands = ", ".join(f"{cmd} {k / n:.4f}" for cmd, k in self.commands.most_common())
        total = sum(self.commands.values()) / n
        return [
            f"{name}: raw deletes   {objects / self.raw_seconds:9.0f} objects/s ({self.raw_seconds:.2f} s)",
            f"{name}: raw marks     {n / self.marks_seconds:9.0f} generations/s ({self.marks_seconds:.2f} s)",
            f"{name}: sweeper       {objects / self.sweep_seconds:9.0f} objects/s, "
            f"{n / self.sweep_seconds:.0f} generations/s ({self.sweep_seconds:.2f} s); "
            f"sweeper / (deletes + marks) {self.sweep_seconds / floors:.2f}",
            f"{name}: per generation {total:.4f} store commands ({commands}); "
            f"{self.storage_requests / n:.4f} storage requests ({self.delete_calls} delete calls)",
        ]


@asynccontextmanager
async def media_for(backend: str, workdir: Path, s3_endpoint: str | None) -> AsyncIterator[MediaStore]:
    env: dict[str, Any] = {"data_dir": workdir / "data"}
    if backend == "s3":
        assert s3_endpoint is not None
        given = s3_media_env(s3_endpoint, await new_bucket(s3_endpoint))
        env.update({name.removeprefix("VIDEOGEN_").lower(): value for name, value in given.items()})
    async with open_media_store(CommonSettings(**env)) as media:
        yield media


async def measure(
    backend: str, generations: int, batch: int, workdir: Path, s3_endpoint: str | None
) -> Figures:
    per_request = S3_DELETE_BATCH if backend == "s3" else 1
    async with engines(workdir / backend) as urls:
        commands = Commands()
        client, store = await migrated_store(urls, workdir / backend, "bench_sweeper", commands=commands)
        try:
            async with media_for(backend, workdir / backend, s3_endpoint) as media:
                # Baseline: the same objects' worth of deletes, nothing of the store.
                raw_keys = [
                    f"raw_{n:06d}/{name}" for n in range(generations) for name in ("video.mp4", "b.jpg")
                ]
                await put_all(media, raw_keys)
                started = time.perf_counter()
                for start in range(0, len(raw_keys), 2 * batch):
                    await media.delete(raw_keys[start : start + 2 * batch])
                raw_seconds = time.perf_counter() - started

                # Baseline: the same marks on other due generations, nothing of the storage.
                others = await due_generations(store, media, generations)
                now = datetime.now(UTC)
                started = time.perf_counter()
                for start in range(0, len(others), batch):
                    await store.generations.update_many(
                        {"_id": {"$in": others[start : start + batch]}, "media_due_at": {"$lte": now}},
                        {"$unset": {"media_due_at": ""}, "$set": {"media_deleted_at": now}},
                    )
                marks_seconds = time.perf_counter() - started
                await media.delete(
                    [f"{gid}/{name}" for gid in others for name in ("video.mp4", "thumbnail.jpg")]
                )

                ids = await due_generations(store, media, generations)
                counting = CountingMedia(media, per_request)
                sweeper = RetentionSweeper(
                    store=store,
                    media=counting,
                    clock=SystemClock(),
                    owner="bench",
                    lease=timedelta(seconds=120),
                    batch=batch,
                )
                commands.by_name.clear()
                started = time.perf_counter()
                swept = await sweeper.run_once()
                sweep_seconds = time.perf_counter() - started
                counted = Counter(commands.by_name)

                assert (swept.generations, swept.objects) == (generations, 2 * generations), swept
                marked = await store.generations.count_documents(
                    {"_id": {"$in": ids}, "media_deleted_at": {"$ne": None}}
                )
                assert marked == generations
                for gid in ids[:: max(1, generations // 50)]:  # a sample: nothing left in their folders
                    assert await media.keys_in(gid) == [], gid
                return Figures(
                    backend,
                    generations,
                    raw_seconds,
                    marks_seconds,
                    sweep_seconds,
                    counted,
                    counting.requests,
                    counting.calls,
                )
        finally:
            await client.close()


async def run(generations: int, batch: int, backends: list[str]) -> list[Figures]:
    results = []
    with tempfile.TemporaryDirectory(prefix="vg-bench-") as tmp:
        workdir = Path(tmp)
        server = s3_server(workdir / "s3.log") if "s3" in backends else None
        if server is not None:
            await asyncio.to_thread(server.start)
        try:
            for backend in backends:
                (workdir / backend).mkdir()
                endpoint = endpoint_url(server) if server is not None else None
                figures = await measure(backend, generations, batch, workdir, endpoint)
                for line in figures.lines():
                    print(line, flush=True)
                results.append(figures)
        finally:
            if server is not None:
                await asyncio.to_thread(server.stop)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--generations", type=int, default=10_000)
    parser.add_argument(
        "--batch", type=int, default=300, help="generations a page (VIDEOGEN_MEDIA_SWEEP_BATCH)"
    )
    parser.add_argument("--backend", action="append", choices=["local", "s3"], help="default: both")
    args = parser.parse_args()
    asyncio.run(run(args.generations, args.batch, args.backend or ["local", "s3"]))


if __name__ == "__main__":
    main()
