"""The SDK's ``wait`` against a small real HTTP server on 127.0.0.1 scripted per request: it follows the
generation's event stream, resumes a dropped one where it left off, falls back to ``Prefer: wait`` when the
API refuses a stream, and gives up at its timeout. Pauses go through an injected sleep that records them."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
import pytest
from aiohttp import web

from videogen_client import AsyncClient, GenerationFailedError, WaitTimeoutError

Answer = Callable[[web.Request], Awaitable[web.StreamResponse]]
STREAM = "/v1/generations/gen_1/events"


def generation(status: str = "processing", progress: int | None = None, **fields: Any) -> dict[str, Any]:
    return {
        "id": "gen_1",
        "status": status,
        "prompt": "a fox",
        "provider": "mock",
        "duration": 3,
        "video_url": "http://127.0.0.1:1/v1/media/gen_1/video.mp4" if status == "completed" else None,
        "thumbnail_url": None,
        "error": None,
        "progress": progress,
        "created_at": "2026-11-25T10:00:00.000Z",
        "updated_at": "2026-11-25T10:00:00.000Z",
        **fields,
    }


def frame(event_id: str, view: dict[str, Any]) -> bytes:
    return f"id: {event_id}\nevent: generation\ndata: ".encode() + orjson.dumps(view) + b"\n\n"


def stream(*frames: bytes, then: str = "end") -> Answer:
    """An event stream of ``frames``; ``then``: "end" (a clean end), "break" (the connection cut), or "hold"
    (keep-alive comments until the client leaves)."""

    async def answer(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for data in frames:
            await response.write(data)
        if then == "break":
            assert request.transport is not None
            request.transport.close()
            return response
        while then == "hold":
            await response.write(b": keep-alive\n\n")
            await asyncio.sleep(0.05)
        await response.write_eof()
        return response

    return answer


def json(body: dict[str, Any], status: int = 200, content_type: str = "application/json") -> Answer:
    async def answer(_: web.Request) -> web.StreamResponse:
        return web.json_response(body, status=status, content_type=content_type)

    return answer


@dataclass
class Api:
    answers: list[Answer] = field(default_factory=list)
    requests: list[web.Request] = field(default_factory=list)
    base: str = ""

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.requests.append(request)
        return await self.answers[min(len(self.requests), len(self.answers)) - 1](request)


@pytest.fixture
async def api() -> AsyncIterator[Api]:
    fake = Api()
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", fake.handle)
    runner = web.AppRunner(app, shutdown_timeout=0.5)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    fake.base = f"http://127.0.0.1:{runner.addresses[0][1]}/v1"
    try:
        yield fake
    finally:
        await runner.cleanup()


@pytest.fixture
def waits() -> list[float]:
    return []


@pytest.fixture
async def client(api: Api, waits: list[float]) -> AsyncIterator[AsyncClient]:
    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    async with AsyncClient(api_key="vg_test", base_url=api.base, sleep=sleep) as client:
        yield client


async def test_wait_follows_the_event_stream_and_is_told_each_change(api: Api, client: AsyncClient) -> None:
    api.answers = [
        stream(
            frame("2:", generation()),
            frame("3:40", generation(progress=40)),
            frame("3:80", generation(progress=80)),
            frame("4:100", generation("completed", 100)),
        )
    ]
    seen: list[tuple[str, int | None]] = []
    done = await client.generations.wait("gen_1", on_progress=lambda g: seen.append((g.status, g.progress)))
    assert done.status == "completed" and done.video_url
    assert seen == [("processing", None), ("processing", 40), ("processing", 80), ("completed", 100)]
    [request] = api.requests  # one request for the whole wait
    assert request.path == STREAM and request.headers["Accept"] == "text/event-stream"
    assert request.headers["Authorization"] == "Bearer vg_test"
    assert "Last-Event-ID" not in request.headers


@pytest.mark.parametrize("then", ["end", "break"])
async def test_a_stream_that_stops_early_is_resumed_after_the_last_event_seen(
    api: Api, client: AsyncClient, waits: list[float], then: str
) -> None:
    api.answers = [
        stream(frame("2:", generation()), frame("3:40", generation(progress=40)), then=then),
        stream(frame("4:100", generation("completed", 100))),
    ]
    seen: list[int | None] = []
    done = await client.generations.wait("gen_1", on_progress=lambda g: seen.append(g.progress))
    assert done.status == "completed"
    assert seen == [None, 40, 100]
    assert [r.path for r in api.requests] == [STREAM, STREAM]
    assert api.requests[1].headers["Last-Event-ID"] == "3:40"
    # A clean end (the api shutting down) is resumed at once; a cut connection after a pause.
    assert waits == ([] if then == "end" else [0.5])


async def test_a_failed_generation_raises_with_its_error(api: Api, client: AsyncClient) -> None:
    error = {"code": "mock_failure", "message": "it broke", "provider_code": None, "retriable": False}
    api.answers = [stream(frame("2:", generation()), frame("3:", generation("failed", error=error)))]
    with pytest.raises(GenerationFailedError) as raised:
        await client.generations.wait("gen_1")
    assert raised.value.generation.error is not None
    assert raised.value.generation.error.code == "mock_failure"


async def test_a_refused_stream_falls_back_to_prefer_wait(api: Api, client: AsyncClient) -> None:
    too_many = {
        "type": "urn:videogen:problem:too-many-streams",
        "title": "Too Many Event Streams",
        "status": 429,
        "detail": "this account has 100 event streams open here already; close one first",
    }
    api.answers = [
        json(too_many, 429, "application/problem+json"),
        json(generation(progress=50)),
        json(generation("completed", 100)),
    ]
    seen: list[int | None] = []
    done = await client.generations.wait("gen_1", on_progress=lambda g: seen.append(g.progress))
    assert done.status == "completed" and seen == [50, 100]
    assert [r.path for r in api.requests] == [STREAM, "/v1/generations/gen_1", "/v1/generations/gen_1"]
    # Each asks the API to hold the answer: less than the client's 30 s read timeout.
    assert [r.headers.get("Prefer") for r in api.requests[1:]] == ["wait=25", "wait=25"]


async def test_a_wait_gives_up_at_its_timeout_with_the_last_state_seen(api: Api, client: AsyncClient) -> None:
    api.answers = [stream(frame("3:40", generation(progress=40)), then="hold")]
    with pytest.raises(WaitTimeoutError) as raised:
        await client.generations.wait("gen_1", timeout=0.3)
    assert raised.value.generation.progress == 40
    assert len(api.requests) == 1
