"""Webhook receivers for the isolation benchmark: /ok/{n} answers 200 at once; /hole/{n} never answers (a
black hole: the notifier's timeout ends each attempt); /twin/{n} answers 200 at once, uncounted (the control's
healthy neighbours); GET /count says how many /ok requests arrived."""

from __future__ import annotations

import asyncio
import sys

from aiohttp import web

COUNT = web.AppKey("count", list)


async def ok(request: web.Request) -> web.Response:
    await request.read()
    request.app[COUNT][0] += 1
    return web.Response(text="ok")


async def twin(request: web.Request) -> web.Response:
    await request.read()
    return web.Response(text="ok")


async def count(request: web.Request) -> web.Response:
    return web.Response(text=str(request.app[COUNT][0]))


async def hole(request: web.Request) -> web.Response:
    await request.read()
    await asyncio.sleep(3600)
    return web.Response(text="late")


async def health(_: web.Request) -> web.Response:
    return web.Response(text="ok")


def main() -> None:
    app = web.Application()
    app[COUNT] = [0]
    app.router.add_get("/count", count)
    app.router.add_post("/ok/{n}", ok)
    app.router.add_post("/hole/{n}", hole)
    app.router.add_post("/twin/{n}", twin)
    app.router.add_get("/healthz", health)
    web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), print=None, access_log=None)


if __name__ == "__main__":
    main()
