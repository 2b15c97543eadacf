"""The SDK against the real stack (api, orchestrator and notifier as processes, the real broker and store, the
mock provider): what a tenant does with it, from code."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from tests.support.images import solid_image, video_seconds
from tests.support.receivers import receiving
from tests.support.stack import Stack
from videogen_client import (
    AsyncClient,
    AuthenticationError,
    Client,
    Generation,
    GenerationFailedError,
    NotFoundError,
    ValidationError,
)
from videogen_client.webhooks import unwrap

pytestmark = pytest.mark.e2e
WAIT_S = 120.0


async def test_create_and_wait_completes_and_the_download_is_a_video_that_decodes(
    stack: Stack, tmp_path: Path
) -> None:
    seen: list[Generation] = []
    progress: list[tuple[int, int | None]] = []
    async with AsyncClient(api_key=stack.key, base_url=f"{stack.base}/v1") as client:
        generation = await client.generations.create_and_wait(
            prompt="a red fox in snow", provider="mock", duration=4, on_progress=seen.append, timeout=WAIT_S
        )
        assert generation.status == "completed" and generation.video_url is not None
        assert seen[0].status == "processing" and seen[-1].status == "completed"

        path = tmp_path / "fox.mp4"
        written = await client.generations.download(
            generation.id, path, on_progress=lambda done, total: progress.append((done, total))
        )
        data = await asyncio.to_thread(path.read_bytes)
        assert written == len(data) > 0
        assert progress[-1] == (written, written)
        assert await asyncio.to_thread(video_seconds, data) == pytest.approx(4.0)

        streamed = b"".join([chunk async for chunk in client.generations.iter_video(generation.id)])
        assert streamed == data


async def test_a_failed_generation_raises_with_its_error(stack: Stack) -> None:
    async with AsyncClient(api_key=stack.key, base_url=f"{stack.base}/v1") as client:
        with pytest.raises(GenerationFailedError) as caught:
            await client.generations.create_and_wait(
                prompt="a storm #fail", provider="mock", duration=3, timeout=WAIT_S
            )
    failed = caught.value.generation
    assert failed.status == "failed" and failed.error is not None


async def test_the_listing_walks_every_page_and_filters(stack: Stack) -> None:
    async with AsyncClient(api_key=stack.key, base_url=f"{stack.base}/v1") as client:
        made = [
            (await client.generations.create(prompt=f"clip {n}", provider="mock", duration=3)).id
            for n in range(5)
        ]
        walked = [g.id async for g in client.generations.list(page_size=2)]  # three pages
        assert walked == made[::-1]  # newest first, none skipped or repeated
        page = await client.generations.list_page(limit=2)
        assert len(page.data) == 2 and page.next_cursor is not None
        later = [
            g.id async for g in client.generations.list(created_after=datetime.now(UTC) + timedelta(days=1))
        ]
        assert later == []

        # The account's usage: each generation once, seconds as asked, all by this test's one key.
        usage = await client.usage.get()
        assert (usage.total.generations, usage.total.seconds) == (5, 15)
        assert [(k.generations, k.seconds) for k in usage.api_keys] == [(5, 15)]
        assert {row.provider for row in usage.data} == {"mock"}

        with pytest.raises(NotFoundError) as missing:
            await client.generations.get("gen_does_not_exist")
        assert missing.value.request_id
        with pytest.raises(ValidationError) as invalid:
            await client.generations.create(prompt="too long", provider="mock", duration=30)
        assert [e.field for e in invalid.value.errors] == ["duration"]
    async with AsyncClient(api_key="vg_not_a_key", base_url=f"{stack.base}/v1") as stranger:
        with pytest.raises(AuthenticationError):
            await stranger.generations.get(made[0])


async def test_a_deleted_generation_reads_as_its_tombstone_and_an_upload_is_read_then_deleted(
    stack: Stack,
) -> None:
    async with AsyncClient(api_key=stack.key, base_url=f"{stack.base}/v1") as client:
        upload = await client.uploads.create(solid_image((200, 40, 40)))
        assert (await client.uploads.get(upload.id)) == upload
        made = await client.generations.create_and_wait(
            prompt="a secret plan",
            provider="mock",
            duration=3,
            metadata={"user": "u_1"},
            image=upload.id,
            retention_days=1,
            timeout=WAIT_S,
        )
        assert made.video_url is not None
        # Both ended before usage is read, so only the deletion could move the totals.
        kept = await client.generations.create_and_wait(
            prompt="kept", provider="mock", duration=3, timeout=WAIT_S
        )
        before = await client.usage.get()

        await client.generations.delete(made.id)
        await client.generations.delete(made.id)  # again: not an error

        tombstone = await client.generations.get(made.id)
        assert tombstone.deleted and tombstone.deleted_at is not None
        assert (tombstone.status, tombstone.provider, tombstone.duration) == ("completed", "mock", 3)
        assert (tombstone.prompt, tombstone.metadata, tombstone.image) == ("", {}, None)
        assert tombstone.video_url is None and tombstone.thumbnail_url is None
        assert [g.id async for g in client.generations.list()] == [kept.id]
        assert (await client.usage.get()).total == before.total
        async with httpx.AsyncClient() as raw:
            assert (await raw.get(made.video_url)).status_code == 410
        trail = [e.type async for e in client.audit_events.list(target_id=made.id)]
        assert trail == ["generation.deleted"]

        # The upload is its own: deleted, it is gone.
        await client.uploads.delete(upload.id)
        with pytest.raises(NotFoundError):
            await client.uploads.get(upload.id)
        with pytest.raises(NotFoundError):
            await client.uploads.delete(upload.id)
        with pytest.raises(NotFoundError):
            await client.generations.delete("gen_does_not_exist")


async def test_the_sync_client_manages_webhooks_and_its_test_delivery_verifies(stack: Stack) -> None:
    # A sync caller: each call in a thread, off the test's event loop.
    client = await asyncio.to_thread(Client, api_key=stack.key, base_url=f"{stack.base}/v1")
    try:
        async with receiving() as receiver:
            hook = await asyncio.to_thread(
                client.webhooks.create, url=receiver.url(), events=["video.completed"]
            )
            assert hook.secret.startswith("whsec_")
            assert [w.id for w in await asyncio.to_thread(client.webhooks.list)] == [hook.id]
            updated = await asyncio.to_thread(
                client.webhooks.update, hook.id, events=["video.completed", "video.failed"]
            )
            assert updated.events == ["video.completed", "video.failed"]

            delivery = await asyncio.to_thread(client.webhooks.send_test, hook.id)
            arrived = await receiver.request_where(
                lambda r: r.headers.get("webhook-id") == delivery.id, timeout=30
            )
            event = unwrap(hook.secret, arrived.headers, arrived.body)
            assert event.event == "webhook.test" and event.generation is None
            assert (await asyncio.to_thread(client.deliveries.get, delivery.id)).id == delivery.id
            listed = await asyncio.to_thread(lambda: [d.id for d in client.webhooks.deliveries(hook.id)])
            assert listed == [delivery.id]

            rotated = await asyncio.to_thread(client.webhooks.rotate_secret, hook.id)
            assert rotated.secret != hook.secret
            since = datetime.now(UTC) - timedelta(hours=1)
            assert await asyncio.to_thread(client.webhooks.recover, hook.id, since=since) == 0
            await asyncio.to_thread(client.webhooks.delete, hook.id)
            with pytest.raises(NotFoundError):
                await asyncio.to_thread(client.webhooks.get, hook.id)

            # Each change is in the account's audit trail, made by this key.
            trail = await asyncio.to_thread(lambda: list(client.audit_events.list(target_id=hook.id)))
            assert sorted(e.type for e in trail) == [
                "webhook.created",
                "webhook.deleted",
                "webhook.recovery_requested",
                "webhook.secret_rotated",
                "webhook.updated",
            ]
            assert {e.actor.type for e in trail} == {"api_key"}
    finally:
        await asyncio.to_thread(client.close)
