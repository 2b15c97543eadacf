"""Baseline: a bare aiohttp JSON endpoint that parses the body and answers JSON (no store, no broker)."""

from __future__ import annotations

import sys

import orjson
from aiohttp import web


async def handle(request: web.Request) -> web.Response:
    body = orjson.loads(await request.read())
    return web.Response(
        body=orjson.dumps({"id": "x", "status": "processing", **body}),
        status=202,
        content_type="application/json",
    )


async def health(_: web.Request) -> web.Response:
    return web.Response(text="ok")


def main() -> None:
    app = web.Application()
    app.router.add_post("/v1/generate", handle)
    app.router.add_get("/healthz", health)
    web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), print=None, access_log=None)


if __name__ == "__main__":
    main()
