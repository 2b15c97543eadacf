"""Generations written straight to the store, as the api creates them, for tests of what happens next."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from videogen_common.domain import Provider
from videogen_common.generations import new_generation
from videogen_common.ids import new_id
from videogen_common.media import MediaStore
from videogen_common.store import Store

Doc = dict[str, Any]

PROMPT = "a red fox running through snow"


async def insert_generation(
    store: Store,
    now: datetime,
    *,
    account_id: str = "acme",
    prompt: str = PROMPT,
    provider: Provider = Provider.MOCK,
    duration: int = 3,
    generation_id: str | None = None,
    **fields: Any,
) -> Doc:
    """A new generation created at ``now`` (``fields`` set on it besides), inserted; returns the document."""
    doc = new_generation(
        generation_id=generation_id or new_id("gen", now),
        account_id=account_id,
        prompt=prompt,
        provider=provider,
        duration=duration,
        now=now,
    )
    doc.update(fields)
    await store.generations.insert_one(doc)
    return doc


async def stored_generation(store: Store, generation_id: str) -> Doc:
    """The generation as stored now (it must exist)."""
    doc = await store.generations.find_one({"_id": generation_id})
    assert doc is not None
    return doc


async def due_generations(
    store: Store, media: MediaStore, now: datetime, count: int, due_at: datetime
) -> list[str]:
    """``count`` completed generations with a video and a thumbnail each, due at ``due_at``."""
    ids = []
    for _ in range(count):
        gid = new_id("gen", now)
        video, thumbnail = f"{gid}/video.mp4", f"{gid}/thumbnail.jpg"
        await insert_generation(
            store,
            now,
            generation_id=gid,
            status="completed",
            media_due_at=due_at,
            video_key=video,
            thumbnail_key=thumbnail,
        )
        for key in (video, thumbnail):
            await media.put(key, b"x")
        ids.append(gid)
    return ids
