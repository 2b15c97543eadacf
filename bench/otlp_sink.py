"""An OTLP/HTTP trace sink for ``bench.api_create --traces``: answers every export at once (counting them at
GET /count), so the api pays for making, batching and exporting its spans and nothing waits on a collector."""

from __future__ import annotations

import sys

from aiohttp import web

COUNT = web.AppKey("count", list)


async def export(request: web.Request) -> web.Response:
    await request.read()
    request.app[COUNT][0] += 1
    return web.Response(content_type="application/x-protobuf")


async def count(request: web.Request) -> web.Response:
    return web.Response(text=str(request.app[COUNT][0]))


def main() -> None:
    app = web.Application()
    app[COUNT] = [0]
    app.router.add_post("/v1/traces", export)
    app.router.add_get("/count", count)
    web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), print=None, access_log=None)


if __name__ == "__main__":
    main()
