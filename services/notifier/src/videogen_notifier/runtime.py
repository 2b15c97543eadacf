"""The notifier's resources and background loop, as a mode service started and stopped with the worker."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import aiohttp
from mode import Service

from videogen_common.clock import Clock, SystemClock
from videogen_common.periodic import Periodic
from videogen_common.store import Store, connect
from videogen_notifier.dispatcher import Dispatcher
from videogen_notifier.guarded_http import guarded_session
from videogen_notifier.sender import Sender
from videogen_notifier.settings import NotifierSettings

log = logging.getLogger(__name__)


class NotifierRuntime(Service):
    def __init__(self, settings: NotifierSettings, *, clock: Clock | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.settings = settings
        self.clock = clock or SystemClock()
        self.ready = asyncio.Event()
        self._client: Any = None
        self._session: aiohttp.ClientSession | None = None
        self._background: Periodic | None = None
        self.store: Store
        self.dispatcher: Dispatcher

    async def on_start(self) -> None:
        settings = self.settings
        self._client, self.store = connect(
            settings.mongo_url, settings.mongo_db, app_name="videogen-notifier"
        )
        self._session = guarded_session(settings)
        self.dispatcher = Dispatcher(
            settings=settings,
            store=self.store,
            sender=Sender(self._session, settings.delivery_timeout_seconds),
            clock=self.clock,
        )
        self._background = Periodic(
            "delivery sweeper", settings.sweep_interval_seconds, self._sweep_once, log
        )
        self._background.start()
        self.ready.set()
        log.info("notifier ready")

    async def _sweep_once(self) -> None:
        await self.dispatcher.sweep()
        await self.dispatcher.finish_pending_notices()

    async def on_stop(self) -> None:
        self.ready.clear()
        if self._background is not None:
            await self._background.stop()
        if hasattr(self, "dispatcher"):
            await self.dispatcher.stop()
        if self._session:
            await self._session.close()
        if self._client is not None:
            await self._client.close()
        log.info("notifier stopped")
