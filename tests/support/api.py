"""Running the real api application in the test's event loop, on a real socket on 127.0.0.1."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from videogen_api.app import create_app
from videogen_api.settings import ApiSettings
from videogen_common.clock import Clock


@asynccontextmanager
async def api_client(
    settings: ApiSettings, clock: Clock | None = None
) -> AsyncIterator[TestClient[web.Request, web.Application]]:
    server = TestServer(create_app(settings, clock=clock), host="127.0.0.1")
    client: TestClient[web.Request, web.Application] = TestClient(server)
    await client.start_server()
    try:
        yield client
    finally:
        await client.close()


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}
