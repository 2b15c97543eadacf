"""Retention, against the real store and media storage: the actor stores media due when its retention says
(the request's ``retention_days``, the account's override, the deployment's: the shortest), its links expire
then, and the retention sweeper (``videogen_orchestrator.retention_sweeper``) deletes what is due and nothing
else as the clock moves; a deleted generation's folder goes again once its events are taken in; two sweepers
at once delete each object once; and one killed with SIGKILL mid-batch (a process of its own, on S3) leaves
work that the next sweeper finishes, the counts matching."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.support.env import settings_for
from tests.support.fakes import FinishedProvider, ManualClock
from tests.support.generations import due_generations, insert_generation
from tests.support.media import PassThroughMedia
from tests.support.orchestration import Orchestration
from tests.support.s3 import s3_client
from videogen.retention import set_retention
from videogen_common.erasure import ERASE_AGAIN_AFTER
from videogen_common.ids import new_id
from videogen_common.media import LocalMediaStore, MediaDeleteFailed, MediaStore, open_media_store
from videogen_common.repositories import audit, deliveries, events
from videogen_common.settings import CommonSettings
from videogen_common.store import Store
from videogen_orchestrator.providers.base import Output
from videogen_orchestrator.render import Rendered, Scene, render
from videogen_orchestrator.retention_sweeper import RETRY_FAILED_AFTER, RetentionSweeper, Swept

Doc = dict[str, Any]
DAY = timedelta(days=1)
REPO = Path(__file__).parents[2]


@pytest.fixture(scope="module")
def rendered() -> Rendered:
    return render(Scene("kept for a while", 3))


@pytest.fixture
def media(tmp_path: Path) -> LocalMediaStore:
    return LocalMediaStore(tmp_path / "media")


def sweeper(
    store: Store, media: MediaStore, clock: ManualClock, owner: str = "orch-a", **kw: Any
) -> RetentionSweeper:
    options: dict[str, Any] = {"lease": timedelta(seconds=30), "batch": 100, **kw}
    return RetentionSweeper(store=store, media=media, clock=clock, owner=owner, **options)


async def upload(store: Store, media: MediaStore, now: datetime, expires_at: datetime) -> tuple[str, str]:
    """An upload as the api makes it: its image in storage, then its document. Returns (id, key)."""
    upload_id = new_id("upl", now)
    key = f"{upload_id}/image.png"
    await media.put(key, b"\x89PNG")
    await store.uploads.insert_one(
        {
            "_id": upload_id,
            "account_id": "acme",
            "key": key,
            "content_type": "image/png",
            "bytes": 4,
            "width": 1,
            "height": 1,
            "created_at": now,
            "expires_at": expires_at,
        }
    )
    return upload_id, key


async def stored(store: Store, generation_id: str) -> Doc:
    doc = await store.generations.find_one({"_id": generation_id})
    assert doc is not None
    return doc


def link_expiry(url: str) -> datetime:
    return datetime.fromtimestamp(int(parse_qs(urlsplit(url).query)["exp"][0]), UTC)


async def test_media_is_due_when_its_retention_says_and_the_sweeper_deletes_what_is_due_and_nothing_else(
    store: Store, base_env: dict[str, str], media: LocalMediaStore, rendered: Rendered
) -> None:
    clock = ManualClock()
    start = clock.now()
    await set_retention(store, "globex", 2, longest=30, now=start)  # an operator shortened globex's
    later_upload, later_key = await upload(store, media, start, start + 40 * DAY)
    soon_upload, soon_key = await upload(store, media, start, start + DAY / 2)
    orchestration = Orchestration(store, base_env, media, clock=clock)
    provider = FinishedProvider(Output(video=rendered.video))
    asked = await orchestration.run_actor(provider, retention_days=1)  # the request asked for 1 day
    default = await orchestration.run_actor(provider)  # the deployment's 30
    account = await orchestration.run_actor(provider, account_id="globex", retention_days=5)  # globex's 2
    from_upload = await orchestration.run_actor(
        provider,
        retention_days=1,
        image={"upload_id": later_upload},
        image_key=later_key,
        image_type="image/png",
    )
    for doc, days in ((asked, 1), (default, 30), (account, 2), (from_upload, 1)):
        assert doc["status"] == "completed"
        assert doc["media_due_at"] == start + days * DAY  # the clock stood still while it ran
        expiry = (start + days * DAY).replace(microsecond=0)  # a link's expiry is in whole seconds
        assert link_expiry(doc["video_url"]) == link_expiry(doc["thumbnail_url"]) == expiry
        assert len(await media.keys_in(doc["_id"])) == 2
    sweeping = sweeper(store, media, clock)

    assert await sweeping.run_once() == Swept()  # nothing is due yet
    clock.set(start + DAY)
    swept = await sweeping.run_once()

    assert (swept.generations, swept.uploads, swept.objects) == (2, 1, 2 + 2 + 1)
    for gone in (asked, from_upload):
        assert await media.keys_in(gone["_id"]) == []
        after = await stored(store, gone["_id"])
        assert "media_due_at" not in after and after["media_deleted_at"] == start + DAY
        assert after["prompt"] == gone["prompt"]  # retention deletes media, not the generation
    for kept in (default, account):
        assert len(await media.keys_in(kept["_id"])) == 2
        assert (await stored(store, kept["_id"]))["media_due_at"] == kept["media_due_at"]
    assert await store.uploads.find_one({"_id": soon_upload}) is None
    assert await media.get(soon_key) is None
    # The upload a swept generation was made from is the upload's, and it is not due.
    assert await media.get(later_key) == b"\x89PNG"
    assert await store.uploads.find_one({"_id": later_upload}) is not None

    clock.set(start + 2 * DAY)
    assert (await sweeping.run_once()).generations == 1
    assert await media.keys_in(account["_id"]) == []
    assert len(await media.keys_in(default["_id"])) == 2

    # An operator shortens acme's retention: what acme has stored comes forward, and goes when due.
    assert await set_retention(store, "acme", 10, longest=30, now=clock.now()) == 1
    assert (await stored(store, default["_id"]))["media_due_at"] == default["updated_at"] + 10 * DAY
    with pytest.raises(ValueError, match="between 1 and 30"):
        await set_retention(store, "acme", 31, longest=30)
    clock.set(start + 10 * DAY)
    assert (await sweeping.run_once()).generations == 1
    assert await media.keys_in(default["_id"]) == []
    assert await store.audit_events.count_documents({"type": "retention.updated"}) == 2


async def test_a_deleted_generations_folder_goes_again_once_its_events_are_taken_in(
    store: Store, media: LocalMediaStore
) -> None:
    clock = ManualClock()
    now = clock.now()
    owing = await insert_generation(
        store, now, status="completed", deleted_at=now, media_due_at=now, outbox=[{"_id": "evt_1"}]
    )
    settled = await insert_generation(store, now, status="completed", deleted_at=now, media_due_at=now)
    for doc in (owing, settled):
        # What a late actor left in the folder after the delete's own erasure.
        await media.put(f"{doc['_id']}/video.mp4", b"late")

    swept = await sweeper(store, media, clock).run_once()

    assert (swept.generations, swept.postponed) == (1, 1)
    assert await media.keys_in(settled["_id"]) == []
    assert (await stored(store, settled["_id"]))["media_deleted_at"] == now
    # Still owing its events: it is looked at again later, its folder left until then.
    assert await media.keys_in(owing["_id"]) == [f"{owing['_id']}/video.mp4"]
    assert (await stored(store, owing["_id"]))["media_due_at"] == now + ERASE_AGAIN_AFTER


class Counting(PassThroughMedia):
    """A media store that counts every key it is asked to delete, and can hold its deletes until the test
    lets them through (``through``)."""

    def __init__(self, inner: MediaStore) -> None:
        super().__init__(inner)
        self.deleted: Counter[str] = Counter()
        self.deleting = asyncio.Event()
        self.through = asyncio.Event()
        self.through.set()

    async def delete(self, keys: Sequence[str]) -> None:
        self.deleting.set()
        await self.through.wait()
        self.deleted.update(keys)
        await self.inner.delete(keys)


async def test_two_sweepers_at_once_delete_each_object_once(store: Store, media: LocalMediaStore) -> None:
    clock = ManualClock()
    now = clock.now()
    ids = await due_generations(store, media, now, 30, now)
    counting = Counting(media)
    one = sweeper(store, counting, clock, "orch-a", batch=7)
    other = sweeper(store, counting, clock, "orch-b", batch=7)

    counting.through.clear()  # the first sweeper stops in its first batch's delete, holding the lock
    first = asyncio.create_task(one.run_once())
    await asyncio.wait_for(counting.deleting.wait(), 10)
    second = await other.run_once()  # meanwhile the second one finds the lock held
    counting.through.set()
    swept = await first

    assert second == Swept(held=False) and not second.held
    assert (swept.generations, swept.objects) == (30, 60)
    assert set(counting.deleted.values()) == {1} and len(counting.deleted) == 60
    for gid in ids:
        assert await media.keys_in(gid) == []
    # The lock was let go: the next pass may run anywhere.
    assert (await other.run_once()).held


class Refusing(PassThroughMedia):
    """A media store that, like S3 answering DeleteObjects with ``Errors`` (AccessDenied, an object lock),
    deletes every key asked except those in ``refused``, and says which it kept."""

    def __init__(self, inner: MediaStore) -> None:
        super().__init__(inner)
        self.refused: set[str] = set()

    async def delete(self, keys: Sequence[str]) -> None:
        await self.inner.delete([key for key in keys if key not in self.refused])
        kept = [key for key in keys if key in self.refused]
        if kept:
            raise MediaDeleteFailed(f"{len(kept)} objects not deleted: AccessDenied", kept)


async def test_an_object_the_storage_refuses_to_delete_holds_up_nothing_else(
    store: Store, media: LocalMediaStore
) -> None:
    clock = ManualClock()
    now = clock.now()
    stuck, *others = await due_generations(store, media, now, 5, now - DAY)  # the oldest page's first
    stuck_upload, stuck_image = await upload(store, media, now, now - DAY)
    gone_upload, gone_image = await upload(store, media, now, now - DAY)
    refusing = Refusing(media)
    refusing.refused = {f"{stuck}/video.mp4", stuck_image}
    sweeping = sweeper(store, refusing, clock, batch=2)  # the refused one in every page until moved on

    swept = await sweeping.run_once()

    assert (swept.generations, swept.uploads, swept.failed) == (4, 1, 2)
    for gid in others:
        assert await media.keys_in(gid) == []
        assert "media_due_at" not in await stored(store, gid)
    # The refused generation is due again later, its other object gone; the refused upload waits for the next
    # pass; the lock was let go.
    assert (await stored(store, stuck))["media_due_at"] == now + RETRY_FAILED_AFTER
    assert await media.keys_in(stuck) == [f"{stuck}/video.mp4"]
    assert await store.uploads.find_one({"_id": stuck_upload}) is not None
    assert await store.uploads.find_one({"_id": gone_upload}) is None and await media.get(gone_image) is None
    assert (await sweeper(store, refusing, clock, owner="orch-b").run_once()).held

    refusing.refused.clear()  # the object lock lifted
    assert (await sweeping.run_once()).uploads == 1
    clock.set(now + RETRY_FAILED_AFTER)
    assert (await sweeping.run_once()).generations == 1
    assert await media.keys_in(stuck) == []


async def test_a_failed_pass_lets_go_of_the_lock(store: Store, media: LocalMediaStore) -> None:
    clock = ManualClock()
    await due_generations(store, media, clock.now(), 1, clock.now() - DAY)

    class Unreachable(PassThroughMedia):
        async def delete(self, keys: Sequence[str]) -> None:
            raise ConnectionError("the storage cannot be reached")

    with pytest.raises(ConnectionError):
        await sweeper(store, Unreachable(media), clock).run_once()
    assert (await sweeper(store, media, clock, owner="orch-b").run_once()).generations == 1


async def sweeper_process(env: dict[str, str], *args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.support.sweeper_process",
        *args,
        cwd=REPO,
        env={**os.environ, **env},
        stdout=asyncio.subprocess.PIPE,
    )


async def s3_keys(env: dict[str, str]) -> set[str]:
    """Every object in the test's bucket, without its prefix."""
    prefix, bucket, keys = env["VIDEOGEN_S3_KEY_PREFIX"], env["VIDEOGEN_S3_BUCKET"], set()
    async with s3_client(env["VIDEOGEN_S3_ENDPOINT_URL"]) as raw:
        page = await raw.list_objects_v2(Bucket=bucket)
        while True:
            keys |= {obj["Key"].removeprefix(prefix) for obj in page.get("Contents", ())}
            if not page.get("IsTruncated"):
                return keys
            page = await raw.list_objects_v2(Bucket=bucket, ContinuationToken=page["NextContinuationToken"])


async def test_a_sweeper_killed_mid_batch_leaves_work_the_next_one_finishes(
    store: Store, base_env: dict[str, str], s3_env: dict[str, str]
) -> None:
    env = {**base_env, **s3_env, "VIDEOGEN_S3_KEY_PREFIX": "vg/"}
    now = datetime.now(UTC).replace(microsecond=0)
    async with open_media_store(settings_for(CommonSettings, env)) as media:
        due = await due_generations(store, media, now, 200, now - DAY)
        kept = await due_generations(store, media, now, 20, now + 10 * DAY)
        due_uploads = [await upload(store, media, now, now - DAY) for _ in range(10)]
        kept_uploads = [await upload(store, media, now, now + DAY) for _ in range(5)]
        kept_keys = {f"{gid}/{name}" for gid in kept for name in ("video.mp4", "thumbnail.jpg")}
        kept_keys |= {key for _, key in kept_uploads}
        assert len(await s3_keys(env)) == 2 * 220 + 15

        process = await sweeper_process(
            env, "--owner", "orch-a", "--batch", "40", "--lease", "30", "--hang-after", "2"
        )
        try:
            assert process.stdout is not None
            for _ in range(2):  # two batches' objects deleted; the second batch not marked
                line = await asyncio.wait_for(process.stdout.readline(), 60)
                assert line == b"deleted 80\n", line
            process.send_signal(signal.SIGKILL)
            assert await process.wait() == -signal.SIGKILL
        finally:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()

        swept_before = await store.generations.count_documents({"media_deleted_at": {"$ne": None}})
        assert swept_before == 40  # the first batch only
        assert len(await s3_keys(env)) == 2 * 220 + 15 - 2 * 80  # the second batch's objects are gone too

        # Restarted elsewhere: the lock is taken once the dead sweeper's lease has run out.
        clock = ManualClock(datetime.now(UTC))
        counting = Counting(media)
        restarted = sweeper(store, counting, clock, "orch-b", batch=40, lease=timedelta(seconds=30))
        assert not (await restarted.run_once()).held  # the dead one's lease still runs
        clock.advance(timedelta(seconds=31))
        swept = await restarted.run_once()

    # The second batch again (its objects already deleted: not an error), then the rest; all counts match.
    assert (swept.generations, swept.uploads, swept.objects) == (160, 10, 160 * 2 + 10)
    assert set(counting.deleted.values()) == {1}
    assert await store.generations.count_documents({"media_deleted_at": {"$ne": None}}) == 200
    assert await store.generations.count_documents({"_id": {"$in": due}, "media_due_at": {"$ne": None}}) == 0
    assert await store.uploads.count_documents({}) == 5
    # Nothing not yet due was deleted, and nothing due is left.
    assert await s3_keys(env) == kept_keys
    assert {doc["_id"] async for doc in store.uploads.find()} == {uid for uid, _ in kept_uploads}
    assert await store.uploads.count_documents({"_id": {"$in": [uid for uid, _ in due_uploads]}}) == 0


async def test_the_sweeper_removes_events_deliveries_and_audit_past_their_keeping_and_nothing_newer(
    store: Store, media: LocalMediaStore
) -> None:
    clock = ManualClock()
    now = clock.now()
    kept = {"events": events.KEPT, "deliveries": deliveries.KEPT, "audit_events": audit.KEPT}
    for name, keeping in kept.items():
        await store.db[name].insert_many(
            [
                {"_id": f"{name}-old", "account_id": "acme", "created_at": now - keeping - DAY},
                {
                    "_id": f"{name}-due",
                    "account_id": "acme",
                    "created_at": now - keeping - timedelta(seconds=1),
                },
                {
                    "_id": f"{name}-kept",
                    "account_id": "acme",
                    "created_at": now - keeping + timedelta(seconds=1),
                },
                {"_id": f"{name}-new", "account_id": "acme", "created_at": now},
            ]
        )

    swept = await sweeper(store, media, clock).run_once()

    assert swept.expired == {"events": 2, "deliveries": 2, "audit_events": 2}
    for name in kept:
        left = {doc["_id"] for doc in await store.db[name].find().to_list(None)}
        assert left == {f"{name}-kept", f"{name}-new"}
    # The next pass finds nothing more until the clock moves past the next one's keeping.
    assert (await sweeper(store, media, clock).run_once()).expired == {}
    clock.set(now + 2 * timedelta(seconds=1))
    assert (await sweeper(store, media, clock).run_once()).expired == {
        "events": 1,
        "deliveries": 1,
        "audit_events": 1,
    }
