"""The faust worker both worker services run: a stop (SIGTERM) ends the process within a bound, even when the
broker or the store is unreachable and a call hangs (then with exit code 70), so Kubernetes never has to kill
it at the end of its grace period."""

from __future__ import annotations

import logging
import os
import threading
from typing import Any

import faust

log = logging.getLogger(__name__)

OVERRAN_EXIT_CODE = 70


class BoundedWorker(faust.Worker):
    """``faust.Worker`` whose stop, once begun, ends the process within ``stop_within`` seconds."""

    def __init__(self, *services: Any, stop_within: float, **kwargs: Any) -> None:
        super().__init__(*services, **kwargs)
        self._stop_within = stop_within

    async def on_stop(self) -> None:
        # The worker's own on_stop runs before its services (the app, the runtime) are stopped.
        _exit_after(self._stop_within)
        await super().on_stop()


def _exit_after(seconds: float) -> None:
    def overran() -> None:
        log.error("shutdown overran its bound; exiting now", extra={"seconds": seconds})
        os._exit(OVERRAN_EXIT_CODE)

    # A thread, not the event loop: what overruns may be the loop itself.
    timer = threading.Timer(seconds, overran)
    timer.daemon = True
    timer.start()
