"""POST /v1/generations/{id}/cancel against the real store and broker: an unfinished generation becomes failed
with error code ``canceled`` and its status event goes out like the orchestrator's; a finished one is a 409;
a cancel racing the orchestrator's completion leaves exactly one terminal state; the orchestrator's actor
stops once its generation is canceled."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from tests.support.api import bearer
from tests.support.held_writes import HeldWrites, terminal_write_of
from tests.support.orchestration import Orchestration
from tests.support.topic_reads import topic_records
from tests.support.waiting import eventually
from videogen_api.settings import ApiSettings
from videogen_common.domain import Status
from videogen_common.events import STATUS, Envelope, read_event_message
from videogen_common.generations import status_envelope
from videogen_common.records.event import Event
from videogen_common.records.generation import GenerationRecord
from videogen_common.repositories.generations import GenerationRepository
from videogen_common.store import Store
from videogen_common.topics import Topics
from videogen_orchestrator.providers.mock import MockProvider

Client = TestClient[web.Request, web.Application]
Doc = dict[str, Any]
VALID = {"prompt": "a red fox running through snow", "provider": "mock", "duration": 3}
CANCELED = {
    "code": "canceled",
    "message": "canceled by the client",
    "provider_code": None,
    "retriable": False,
}
OWNER = "orch-a"


async def create(client: Client, key: str) -> dict[str, Any]:
    response = await client.post("/v1/generate", json=VALID, headers=bearer(key))
    assert response.status == 202, await response.text()
    body: dict[str, Any] = await response.json()
    return body


async def stored(store: Store, generation_id: str) -> Doc:
    doc = await store.generations.find_one({"_id": generation_id})
    assert doc is not None
    return doc


async def lease(store: Store, generation_id: str) -> Doc:
    """Take the lease the way the orchestrator's runner does, so its writes can carry the owner filter."""
    created = await stored(store, generation_id)
    doc = await store.generations.find_one_and_update(
        {"_id": generation_id},
        {"$set": {"lease_owner": OWNER, "lease_expires_at": created["created_at"] + timedelta(seconds=30)}},
        return_document=True,
    )
    assert doc is not None
    return doc


def cancel(client: Client, key: str, generation_id: str) -> Any:
    return client.post(f"/v1/generations/{generation_id}/cancel", headers=bearer(key))


@pytest.mark.parametrize("start", [Status.PROCESSING, Status.QUEUED])
async def test_cancel_fails_an_unfinished_generation_with_the_canceled_error(
    client: Client, key: str, store: Store, start: Status
) -> None:
    created = await create(client, key)
    doc = await lease(store, created["id"])
    if start is Status.QUEUED:
        moved = await GenerationRepository(store).transition(doc, Status.QUEUED, now=doc["updated_at"])
        assert moved is not None
        doc = moved

    response = await cancel(client, key, created["id"])

    assert response.status == 200
    assert response.content_type == "application/json"
    body = await response.json()
    assert body["status"] == "failed" and body["error"] == CANCELED
    assert body["id"] == created["id"] and body["created_at"] == created["created_at"]
    assert body == await (await client.get(f"/v1/generations/{created['id']}", headers=bearer(key))).json()
    after = await stored(store, created["id"])
    assert after["version"] == doc["version"] + 1
    assert after["lease_owner"] is None and after["lease_expires_at"] is None
    # Its video.failed event, carried by the same write, owed to the notifier until it records the event.
    [event] = after["outbox"]
    assert (
        event["_id"] == f"evt_{created['id']}_failed_{after['version']}" and event["type"] == "video.failed"
    )
    assert event["data"]["error"] == CANCELED and after["outbox_at"] == after["updated_at"]


async def test_cancel_publishes_the_status_event_the_orchestrator_would(
    client: Client, key: str, store: Store, topics: Topics, api_settings: ApiSettings
) -> None:
    created = await create(client, key)
    response = await cancel(client, key, created["id"])
    assert response.status == 200
    body = await response.json()
    doc = await stored(store, created["id"])

    # Both sent in the background after the answer: read until they are there.
    [record] = await topic_records(api_settings.kafka_bootstrap, topics.status, bool)
    envelope = Envelope.from_json(record.value or b"")
    request_id = response.headers["X-Request-Id"]
    assert record.key == created["id"].encode()
    assert envelope == status_envelope(GenerationRecord.from_doc(doc), doc["updated_at"], request_id)
    assert envelope.type == STATUS
    assert envelope.event_id == f"evt_{created['id']}_failed_{doc['version']}"
    assert envelope.generation == body
    assert ("x-request-id", request_id.encode()) in list(record.headers)

    # And its event, for the notifier: the one the transition's write carries.
    [event_record] = await topic_records(api_settings.kafka_bootstrap, topics.events, bool)
    event = read_event_message(event_record.value or b"")
    [owed] = doc["outbox"]
    assert event == Event.from_doc(owed, source="generations", carrier_id=created["id"])
    assert event.id == envelope.event_id
    assert (event.type, event.subject_id) == ("video.failed", created["id"])
    assert event.trace_id == doc["trace_id"]  # the generation's, as the carried event and a republish have
    # The generation as GET answers it, but its timeline and (read alone) its place in line.
    assert event.data == {k: v for k, v in body.items() if k not in ("timeline", "queue_position")}
    assert event_record.key == created["id"].encode()


@pytest.mark.parametrize("final", [Status.COMPLETED, Status.FAILED])
async def test_cancel_of_a_finished_generation_is_409_and_changes_nothing(
    client: Client, key: str, store: Store, final: Status
) -> None:
    created = await create(client, key)
    doc = await stored(store, created["id"])
    assert await GenerationRepository(store).transition(doc, final, now=doc["updated_at"]) is not None
    before = await stored(store, created["id"])

    response = await cancel(client, key, created["id"])

    assert response.status == 409
    assert response.content_type == "application/problem+json"
    problem = await response.json()
    assert problem["type"] == "urn:videogen:problem:generation-terminal"
    assert problem["status"] == 409
    assert await stored(store, created["id"]) == before


async def test_a_second_cancel_is_409(client: Client, key: str) -> None:
    created = await create(client, key)
    assert (await cancel(client, key, created["id"])).status == 200
    again = await cancel(client, key, created["id"])
    assert again.status == 409
    assert (await again.json())["type"] == "urn:videogen:problem:generation-terminal"


async def test_cancel_of_another_accounts_generation_answers_like_an_unknown_id(
    client: Client, key: str, other_key: str, store: Store
) -> None:
    created = await create(client, key)
    before = await stored(store, created["id"])

    foreign = await cancel(client, other_key, created["id"])
    unknown = await cancel(client, other_key, "gen_doesnotexist")

    assert foreign.status == unknown.status == 404
    assert foreign.content_type == unknown.content_type == "application/problem+json"
    assert (
        (await foreign.json())["type"] == (await unknown.json())["type"] == "urn:videogen:problem:not-found"
    )
    assert await stored(store, created["id"]) == before


# Which write lands first in a cancel racing the orchestrator's completion, forced at the decisive point:
# both sides have read the generation unfinished (at the same version) and hold their compare-and-set until
# the test lets it go. "at once" lets both go together, and either may win: the race itself, a few times.
ORDERS = {"cancel first": 1, "completion first": 1, "at once": 5}


@pytest.mark.parametrize("order", list(ORDERS))
async def test_cancel_racing_the_orchestrators_completion_ends_in_exactly_one_terminal_state(
    client: Client, key: str, store: Store, order: str
) -> None:
    for _ in range(ORDERS[order]):
        created = await create(client, key)
        doc = await lease(store, created["id"])

        async def complete(doc: Doc = doc) -> Doc | None:
            """The orchestrator's completion, from the generation as it read it (before the cancel)."""
            return await GenerationRepository(store).transition(
                doc,
                Status.COMPLETED,
                now=doc["updated_at"] + timedelta(seconds=1),
                fields={"video_url": "https://media.invalid/v.mp4"},
                owner=OWNER,
            )

        held_first = {"cancel first": "completed", "completion first": "failed", "at once": None}[order]
        picked = (held_first,) if held_first else ("completed", "failed")
        with HeldWrites(terminal_write_of(created["id"], *picked)).installed() as held:
            if order == "cancel first":
                # The completion waits at its write while the cancel reads, writes and answers.
                completing = asyncio.ensure_future(complete())
                await held.until_held(1)
                response = await cancel(client, key, created["id"])
                held.release()
                completed = await completing
            elif order == "completion first":
                # The cancel has read the generation unfinished and waits at its write while it completes.
                canceling = asyncio.ensure_future(cancel(client, key, created["id"]))
                await held.until_held(1)
                completed = await complete()
                assert completed is not None
                held.release()
                response = await canceling
            else:
                # Both have read it unfinished and wait at their writes; both go at the same moment.
                completing = asyncio.ensure_future(complete())
                canceling = asyncio.ensure_future(cancel(client, key, created["id"]))
                await held.until_held(2)
                held.release()
                completed, response = await completing, await canceling
        final = await stored(store, created["id"])

        assert final["version"] == doc["version"] + 1  # exactly one transition landed
        if order != "at once":
            assert (completed is not None) == (order == "completion first")
        if completed is not None:
            assert response.status == 409
            assert (await response.json())["type"] == "urn:videogen:problem:generation-terminal"
            assert final == completed
            assert final["status"] == "completed" and final["error"] is None
        else:
            assert response.status == 200
            body = await response.json()
            assert body["status"] == "failed" and body["error"] == CANCELED
            assert final["status"] == "failed" and final["error"] == CANCELED
            assert final["video_url"] is None
            assert len(final["outbox"]) == 1


async def test_cancel_retries_past_concurrent_unfinished_moves_and_wins(
    client: Client, key: str, store: Store
) -> None:
    for _ in range(20):
        created = await create(client, key)
        doc = await lease(store, created["id"])

        async def flip(doc: Doc = doc) -> int:
            """queued ⇄ processing, as an actor mirroring its provider does, until the cancel lands."""
            moves = 0
            for _ in range(3):
                target = Status.QUEUED if doc["status"] == "processing" else Status.PROCESSING
                moved = await GenerationRepository(store).transition(
                    doc, target, now=doc["updated_at"], owner=OWNER
                )
                if moved is None:
                    break
                doc, moves = moved, moves + 1
            return moves

        moves, response = await asyncio.gather(flip(), cancel(client, key, created["id"]))

        assert response.status == 200, await response.text()
        final = await stored(store, created["id"])
        assert final["status"] == "failed" and final["error"] == CANCELED
        assert final["version"] == doc["version"] + moves + 1


async def test_the_orchestrators_actor_stops_once_its_generation_is_canceled(
    client: Client, key: str, store: Store, base_env: dict[str, str], tmp_path: Path
) -> None:
    media_root = tmp_path / "orchestrator-media"
    provider = MockProvider(latency_ms=500)  # each poll takes half a second, then the video is ready
    orchestration = Orchestration(
        store,
        base_env,
        media_root,
        providers={"mock": provider},
        settings={"orchestrator_instance": OWNER, "max_in_flight": 4},
    )
    sink = orchestration.sink
    runner = orchestration.runner()
    try:
        created = await create(client, key)
        assert await runner.start(created["id"])

        async def submitted() -> bool:
            return (await stored(store, created["id"]))["provider_task_id"] is not None

        await eventually(submitted)  # the actor is now waiting on its poll
        response = await cancel(client, key, created["id"])
        assert response.status == 200
        await asyncio.wait_for(runner.wait_idle(), 10)
    finally:
        await orchestration.stop()

    final = await stored(store, created["id"])
    assert final["status"] == "failed" and final["error"] == CANCELED
    assert final["video_url"] is None and final["lease_owner"] is None
    assert provider.submitted == [created["id"]]
    assert sink.envelopes == []  # the actor announced nothing; the api announced the cancel
    assert not await asyncio.to_thread(lambda: list(media_root.rglob("*.*")) if media_root.exists() else [])
