"""DELETE /v1/generations/{id} against the real store, broker and media storage (a folder, and S3 on the
suite's moto server): what a delete leaves is a tombstone and nothing else of the generation's (no object in
its folder, no prompt, metadata, negative prompt or image URL in its document, its recorded events or its
deliveries' bodies), its links answer 410, usage is unchanged, and video.deleted and an audit event are
written. An unfinished generation is canceled first, its task at the provider canceled, and neither a late
poll nor an actor finishing its media writes anything after the delete. Another account's delete is a 404
that deletes nothing."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import orjson
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from tests.support.api import api_client, bearer
from tests.support.env import settings_for
from tests.support.fake_providers.runway import FakeRunway
from tests.support.fakes import FinishedProvider, ManualClock
from tests.support.images import solid_image
from tests.support.media import PassThroughMedia
from tests.support.orchestration import Orchestration, provider_run
from tests.support.public_fields import as_event_data
from videogen.engines import free_port
from videogen_api.settings import ApiSettings
from videogen_common.media import MediaStore, open_media_store
from videogen_common.outbox import OUTBOX
from videogen_common.records.event import Event
from videogen_common.repositories.events import EventRepository
from videogen_common.repositories.outbox import OutboxRepository
from videogen_common.store import Store
from videogen_notifier.deliveries import deliveries_for
from videogen_orchestrator.providers.base import Output
from videogen_orchestrator.render import Rendered, Scene, render

Client = TestClient[web.Request, web.Application]
Doc = dict[str, Any]

PROMPT = "a lighthouse keeper's daughter on the cliffs at dusk"
NEGATIVE = "no seagulls over the quay"
METADATA = {"customer": "ada-lovelace-7731"}
# Every string a delete must erase, wherever it was stored.
SECRETS = (PROMPT, NEGATIVE, METADATA["customer"], "/first-frame.png")


@pytest.fixture(scope="module")
def rendered() -> Rendered:
    return render(Scene("the video itself; its prompt is another", 3))


@pytest.fixture
async def image_url() -> AsyncIterator[str]:
    """A client's image host on 127.0.0.1, serving the first frame."""
    app = web.Application()
    image = solid_image((220, 30, 40))

    async def serve(request: web.Request) -> web.Response:
        return web.Response(body=image, content_type="image/png")

    app.router.add_get("/first-frame.png", serve)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        yield f"http://127.0.0.1:{port}/first-frame.png"
    finally:
        await runner.cleanup()


@pytest.fixture(params=["local", "s3"])
def env(request: pytest.FixtureRequest, base_env: dict[str, str]) -> dict[str, str]:
    if request.param == "local":
        return base_env
    return {**base_env, **request.getfixturevalue("s3_env"), "VIDEOGEN_S3_KEY_PREFIX": "vg/"}


@asynccontextmanager
async def stack(env: dict[str, str], clock: ManualClock) -> AsyncIterator[tuple[Client, MediaStore]]:
    """The api on this environment's store and media, and the media store the orchestrator writes to."""
    settings = settings_for(ApiSettings, env, api_port=0, rate_limit_enabled=False)
    async with open_media_store(settings) as media, api_client(settings, clock) as client:
        yield client, media


async def ok(client: Client, method: str, path: str, key: str, status: int, **kw: Any) -> Any:
    response = await client.request(method, path, headers=bearer(key), **kw)
    assert response.status == status, await response.text()
    return None if status == 204 else await response.json()


async def take_in(store: Store, generation_id: str, clock: ManualClock) -> list[Event]:
    """What the notifier does with the events a generation owes: record them, make their deliveries, settle
    them (``Dispatcher.take_in``, without sending)."""
    doc = await store.generations.find_one({"_id": generation_id})
    assert doc is not None
    events = [Event.from_doc(e, source="generations", carrier_id=generation_id) for e in doc.get(OUTBOX, ())]
    await EventRepository(store).record(events)
    for event in events:
        await deliveries_for(store, event, clock.now())
    await OutboxRepository(store).settle(events)
    return events


async def everything_stored_of(store: Store, generation_id: str) -> list[bytes]:
    """The generation's document, its recorded events and its deliveries, as bytes to search."""
    found = [await store.generations.find_one({"_id": generation_id})]
    found += await store.events.find({"subject_id": generation_id}).to_list(None)
    found += await store.deliveries.find({"generation_id": generation_id}).to_list(None)
    return [orjson.dumps(doc, default=str) for doc in found]


def path_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.path}?{parts.query}"


async def test_a_deleted_generation_leaves_its_tombstone_and_nothing_else(
    env: dict[str, str], store: Store, key: str, rendered: Rendered, image_url: str
) -> None:
    clock = ManualClock()
    async with stack(env, clock) as (client, media):
        hook = await ok(
            client,
            "POST",
            "/v1/webhooks",
            key,
            201,
            json={"url": "https://example.test/h", "events": ["video.completed", "video.deleted"]},
        )
        orchestration = Orchestration(
            store, env, media, clock=clock, settings={"image_fetch_allow_cidrs": "127.0.0.0/8"}
        )
        done = await orchestration.run_actor(
            FinishedProvider(Output(video=rendered.video)),
            prompt=PROMPT,
            negative_prompt=NEGATIVE,
            metadata=METADATA,
            image={"url": image_url},
        )
        gid = done["_id"]
        assert done["status"] == "completed" and done["media_due_at"] is not None
        assert sorted(await media.keys_in(gid)) == [
            f"{gid}/first_frame.png",
            f"{gid}/thumbnail.jpg",
            f"{gid}/video.mp4",
        ]
        [completed] = await take_in(store, gid, clock)  # video.completed recorded, its delivery made
        assert any(PROMPT.encode() in stored for stored in await everything_stored_of(store, gid))
        usage = await ok(client, "GET", "/v1/usage", key, 200)
        before = await ok(client, "GET", f"/v1/generations/{gid}", key, 200)
        video = await client.get(path_of(done["video_url"]))
        assert video.status == 200

        await ok(client, "DELETE", f"/v1/generations/{gid}", key, 204)

        # Not one object of it is left in its folder.
        assert await media.keys_in(gid) == []
        # Its links answer 410 Gone.
        for link in (done["video_url"], done["thumbnail_url"]):
            gone = await client.get(path_of(link))
            assert gone.status == 410, await gone.text()
            assert (await gone.json())["type"] == "urn:videogen:problem:gone"
        # GET answers the tombstone; lists leave it out; usage still counts it, exactly.
        tombstone = await ok(client, "GET", f"/v1/generations/{gid}", key, 200)
        assert tombstone["deleted"] is True and tombstone["deleted_at"] is not None
        assert (tombstone["id"], tombstone["status"], tombstone["provider"], tombstone["duration"]) == (
            gid,
            "completed",
            "mock",
            3,
        )
        assert (tombstone["prompt"], tombstone["negative_prompt"], tombstone["metadata"]) == ("", None, {})
        assert (tombstone["image"], tombstone["video_url"], tombstone["thumbnail_url"]) == (None, None, None)
        kept = ("created_at", "updated_at", "timeline", "error", "progress", "priority", "seed")
        assert {k: tombstone[k] for k in kept} == {k: before[k] for k in kept}
        assert gid not in [g["id"] for g in (await ok(client, "GET", "/v1/generations", key, 200))["data"]]
        assert await ok(client, "GET", "/v1/usage", key, 200) == usage

        # video.deleted is owed, carried by the delete's own write, with the tombstone as its data.
        stored = await store.generations.find_one({"_id": gid})
        assert stored is not None
        [owed] = stored[OUTBOX]
        assert (owed["_id"], owed["type"]) == (f"evt_{gid}_deleted", "video.deleted")
        assert owed["data"] == as_event_data(tombstone)
        [deleted] = await take_in(store, gid, clock)
        [delivery] = await store.deliveries.find({"event_id": deleted.id}).to_list(None)
        assert delivery["webhook_id"] == hook["id"]
        assert orjson.loads(delivery["body"])["data"]["deleted"] is True
        # The audit trail says who deleted what, and nothing of what was erased.
        audit = await ok(client, "GET", "/v1/audit-events?type=generation.deleted", key, 200)
        [entry] = audit["data"]
        assert entry["target"] == {"type": "generation", "id": gid}
        assert entry["actor"]["type"] == "api_key"
        assert entry["data"] == {"status": "completed", "provider": "mock", "duration": 3}

        # The prompt, the metadata, the negative prompt and the image URL are nowhere: not in the
        # document, not in the recorded video.completed, not in its delivery's stored body.
        everything = await everything_stored_of(store, gid)
        assert len(everything) == 1 + 2 + 2  # the document, two events, two deliveries
        for secret in SECRETS:
            assert not any(secret.encode() in found for found in everything), secret
        recorded = await EventRepository(store).owned(completed.id, "acme")
        assert recorded is not None and recorded.data["status"] == "completed"  # the rest is kept

        # Deleted again: 204, and nothing changes.
        before = await store.generations.find_one({"_id": gid})
        await ok(client, "DELETE", f"/v1/generations/{gid}", key, 204)
        after = await store.generations.find_one({"_id": gid})
        assert after is not None and before is not None
        assert {k: v for k, v in after.items() if k != "media_due_at"} == {
            k: v for k, v in before.items() if k != "media_due_at"
        }


async def test_another_accounts_delete_is_a_404_that_deletes_nothing(
    base_env: dict[str, str], store: Store, key: str, other_key: str, rendered: Rendered
) -> None:
    clock = ManualClock()
    async with stack(base_env, clock) as (client, media):
        done = await Orchestration(store, base_env, media, clock=clock).run_actor(
            FinishedProvider(Output(video=rendered.video)), prompt=PROMPT
        )
        gid = done["_id"]
        keys = await media.keys_in(gid)

        foreign = await client.delete(f"/v1/generations/{gid}", headers=bearer(other_key))
        unknown = await client.delete("/v1/generations/gen_unknown", headers=bearer(other_key))

        assert foreign.status == unknown.status == 404
        assert (
            (await foreign.json())["type"]
            == (await unknown.json())["type"]
            == "urn:videogen:problem:not-found"
        )
        assert await store.generations.find_one({"_id": gid}) == done
        assert await media.keys_in(gid) == keys and len(keys) == 2
        assert (await client.get(path_of(done["video_url"]))).status == 200
        assert await store.audit_events.count_documents({"type": "generation.deleted"}) == 0


class HeldPolls(FakeRunway):
    """Runway, whose status reads wait until the test lets them answer: the actor's poll is in flight while
    the generation is deleted, and answers (the task succeeded) only after."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.polling = asyncio.Event()
        self.answer = asyncio.Event()

    async def read(self, request: web.Request) -> web.Response:
        self.polling.set()
        await self.answer.wait()
        return await super().read(request)


async def test_deleting_an_unfinished_generation_cancels_its_task_and_a_late_poll_writes_nothing(
    base_env: dict[str, str], store: Store, key: str, tmp_path: Path
) -> None:
    clock = ManualClock()
    async with (
        HeldPolls() as fake,
        provider_run(store, base_env, tmp_path / "data" / "media", fake, clock) as run,
        stack(base_env, clock) as (client, media),
    ):
        gid = await run.start(prompt=PROMPT)
        await run.until_submitted(gid)
        await asyncio.wait_for(fake.polling.wait(), 10)  # the actor waits on its poll

        await ok(client, "DELETE", f"/v1/generations/{gid}", key, 204)
        deleted = await run.get(gid)
        assert deleted["status"] == "failed" and deleted["error"]["code"] == "canceled"
        assert deleted["deleted_at"] is not None and deleted["prompt"] == ""

        fake.answer.set()  # the poll answers now: the task succeeded, with a video to fetch
        await asyncio.wait_for(run.runner.wait_idle(), 10)

        [task] = fake.tasks
        assert fake.canceled == [task]  # the provider was told to stop the task
        assert fake.downloads == 0  # nothing of its result was fetched
        assert await run.get(gid) == deleted  # and nothing written after the delete
        assert await media.keys_in(gid) == []
        assert run.sink.envelopes == []  # the actor announced nothing; the api announced the cancel


class HeldPuts(PassThroughMedia):
    """The media folder, whose writes of videos wait until the test lets them through: an actor is storing
    a finished generation's media while the generation is deleted."""

    def __init__(self, inner: MediaStore) -> None:
        super().__init__(inner)
        self.putting = asyncio.Event()
        self.through = asyncio.Event()

    async def put(self, key: str, data: bytes) -> None:
        if key.rsplit("/", 1)[-1].startswith("video"):  # video.mp4, or video-{fence}.mp4 of a lease holder
            self.putting.set()
            await self.through.wait()
        await self.inner.put(key, data)


async def test_an_actor_finishing_after_the_delete_leaves_nothing_behind(
    base_env: dict[str, str], store: Store, key: str, rendered: Rendered
) -> None:
    clock = ManualClock()
    async with stack(base_env, clock) as (client, media):
        held = HeldPuts(media)
        orchestration = Orchestration(store, base_env, held, clock=clock)
        runner = orchestration.runner(providers={"mock": FinishedProvider(Output(video=rendered.video))})
        try:
            doc = await orchestration.insert(prompt=PROMPT)
            gid = doc["_id"]
            assert await runner.start(gid)
            await asyncio.wait_for(held.putting.wait(), 10)  # the task succeeded; its video is being stored

            await ok(client, "DELETE", f"/v1/generations/{gid}", key, 204)
            deleted = await orchestration.get(gid)

            held.through.set()
            await asyncio.wait_for(runner.wait_idle(), 10)
        finally:
            await orchestration.stop()

        assert await orchestration.get(gid) == deleted
        # What the actor stored after the delete it deleted, once its completion was refused.
        assert await media.keys_in(gid) == []
