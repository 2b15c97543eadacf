"""Pieces the end-to-end tests share: a customer's webhook receiver, an API call, and the customer's check of
both signatures."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
from typing import Any

import aiohttp
import orjson
from aiohttp import web

from videogen.engines import free_port


class Receiver:
    """A customer's webhook endpoint on 127.0.0.1; each delivery resolves a future keyed by generation id."""

    def __init__(self) -> None:
        self.deliveries: dict[str, asyncio.Future[tuple[dict[str, str], bytes]]] = {}
        self.runner: web.AppRunner | None = None
        self.url = ""

    def expect(self, generation_id: str) -> asyncio.Future[tuple[dict[str, str], bytes]]:
        return self.deliveries.setdefault(generation_id, asyncio.get_running_loop().create_future())

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.read()
        generation_id = orjson.loads(body)["data"]["id"]
        future = self.expect(generation_id)
        if not future.done():
            future.set_result((dict(request.headers), body))
        return web.Response(text="ok")

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/hooks", self.handle)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        port = free_port()
        await web.TCPSite(self.runner, "127.0.0.1", port).start()
        self.url = f"http://127.0.0.1:{port}/hooks"

    async def stop(self) -> None:
        if self.runner:
            await self.runner.cleanup()


def verify(secret: str, headers: dict[str, str], body: bytes) -> None:
    """What a customer does: check both signatures with the secret as issued."""
    expected = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(headers["X-Service-Signature"], expected)
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + body
    standard = "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    assert standard in headers["webhook-signature"].split(" ")


async def call(
    session: aiohttp.ClientSession, method: str, url: str, key: str, body: Any = None
) -> tuple[int, Any]:
    async with session.request(
        method, url, json=body, headers={"Authorization": f"Bearer {key}"}
    ) as response:
        return response.status, await response.json()
