"""Serving the api until SIGTERM (or SIGINT), then shutting down the Kubernetes way, each step bounded:

1. drain: ``/readyz`` answers 503 while the api keeps serving for ``shutdown_drain_seconds``, so load
   balancers stop routing to it; responses meanwhile carry ``Connection: close``;
2. stop accepting: the listening socket closes;
3. finish: requests waiting on a generation (``Prefer: wait``) answer at once with what they have; requests in
   flight (also any still arriving on open connections) get ``shutdown_timeout_seconds`` to complete, then are
   cancelled; the idle connections are closed;
4. release: the Kafka producer is flushed and stopped, the store client closed; the process exits 0.

Kubernetes' ``terminationGracePeriodSeconds`` must exceed the drain plus the timeout plus a few seconds."""

from __future__ import annotations

import asyncio
import logging
import signal

from aiohttp import web

from videogen_api import state

log = logging.getLogger(__name__)

# Connections waiting to be accepted (aiohttp's default: 128; the kernel caps it at net.core.somaxconn): a
# burst of thousands, event streams opening at once, waits its turn instead of its handshakes being dropped
# and retried a second or more later.
LISTEN_BACKLOG = 4096


async def serve(app: web.Application) -> None:
    settings, drain = app[state.SETTINGS], app[state.DRAIN]
    loop = asyncio.get_running_loop()
    stopping = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=settings.shutdown_timeout_seconds)
    await runner.setup()
    try:
        await web.TCPSite(runner, settings.api_host, settings.api_port, backlog=LISTEN_BACKLOG).start()
        log.info("serving", extra={"host": settings.api_host, "port": settings.api_port})
        await stopping.wait()
        drain.start()
        log.info("draining: not ready, still serving", extra={"seconds": settings.shutdown_drain_seconds})
        await asyncio.sleep(settings.shutdown_drain_seconds)
        for site in list(runner.sites):
            await site.stop()  # the listener only: open connections and requests in flight carry on
        app[state.FEED].release()  # requests waiting on a generation (Prefer: wait) answer now
        log.info(
            "stopped accepting; finishing requests in flight",
            extra={"in_flight": drain.in_flight, "timeout_seconds": settings.shutdown_timeout_seconds},
        )
        cut_off = await drain.finish(settings.shutdown_timeout_seconds)
        if cut_off:
            log.warning("requests cut off at the shutdown bound", extra={"count": cut_off})
    finally:
        # Closes the remaining (idle) connections, then runs the app's cleanup: producer flush and stop, store
        # close.
        await runner.cleanup()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
    log.info("stopped")
