"""The notifier's resources and background loops, as a mode service started and stopped with the worker, and
its side server for probes and metrics."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta
from typing import Any

import aiohttp
from mode import Service
from prometheus_client import CollectorRegistry

from videogen_common.clock import Clock, SystemClock
from videogen_common.destinations.guarded_http import guarded_session
from videogen_common.metrics import new_registry
from videogen_common.periodic import Periodic
from videogen_common.probes import WorkerProbes
from videogen_common.store import Store, connect
from videogen_common.topics import Topics
from videogen_notifier.dispatcher import Dispatcher
from videogen_notifier.metrics import NotifierMetrics
from videogen_notifier.sender import Sender
from videogen_notifier.settings import NotifierSettings

log = logging.getLogger(__name__)

USER_AGENT = "videogen-webhooks/1"


class NotifierRuntime(Service):
    def __init__(
        self,
        settings: NotifierSettings,
        *,
        clock: Clock | None = None,
        registry: CollectorRegistry | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.settings = settings
        self.clock = clock or SystemClock()
        self.ready = asyncio.Event()
        self._client: Any = None
        self._session: aiohttp.ClientSession | None = None
        self._background: Periodic | None = None
        self._gauges: Periodic | None = None
        self.metrics = NotifierMetrics(registry or new_registry())
        self.probes = WorkerProbes(
            host=settings.notifier_host,
            port=settings.notifier_port,
            registry=self.metrics.registry,
            kafka_bootstrap=settings.kafka_bootstrap,
            topics=[Topics(settings.topic_prefix).events],
            started=self.ready.is_set,
        )
        self.store: Store
        self.dispatcher: Dispatcher

    async def on_start(self) -> None:
        settings = self.settings
        await self.probes.start()  # first, so /healthz answers (and a taken port fails) at once
        self._client, self.store = connect(
            settings.mongo_url,
            settings.mongo_db,
            app_name="videogen-notifier",
            durability=settings.mongo_write_concern,
        )
        self.probes.store = self.store
        self._session = guarded_session(settings.webhook_networks, USER_AGENT)
        self.dispatcher = Dispatcher(
            settings=settings,
            store=self.store,
            sender=Sender(
                self._session, settings.delivery_timeout_seconds, on_attempt=self.metrics.observe_attempt
            ),
            clock=self.clock,
            on_closed=lambda status: self.metrics.finished.labels(status).inc(),
        )
        self.metrics.in_flight.set_function(lambda: self.dispatcher.in_flight)
        self._background = Periodic(
            "delivery sweeper", settings.sweep_interval_seconds, self._sweep_once, log
        )
        self._background.start()
        self._gauges = Periodic(
            "metrics refresh", settings.metrics_refresh_seconds, self._refresh_gauges, log
        )
        self._gauges.start()
        self.ready.set()
        log.info("notifier ready")

    async def _sweep_once(self) -> None:
        await self.dispatcher.sweep()

    async def _refresh_gauges(self) -> None:
        settings = self.settings
        await self.metrics.refresh(
            self.store,
            self.clock.now(),
            breaker_failures=settings.breaker_failures,
            breaker_cooldown=timedelta(seconds=settings.breaker_cooldown_seconds),
        )

    async def on_stop(self) -> None:
        self.ready.clear()  # /readyz answers 503 from here on
        try:
            for periodic in (self._background, self._gauges):
                if periodic is not None:
                    await periodic.stop()
            if hasattr(self, "dispatcher"):
                await self.dispatcher.stop()
            if self._session:
                await self._session.close()
            if self._client is not None:
                await self._client.close()
        finally:
            await self.probes.stop()
        log.info("notifier stopped")
