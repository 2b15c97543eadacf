"""The orchestrator's resources and background loops, as a mode service started and stopped with the faust
worker: the store connection, the orchestrator's parts (built in one place: ``assembly.assemble``), the
reconciler's passes, the retention sweeper, the provider callbacks' feed (with ``provider_callbacks`` on), and
the side server for probes and metrics."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from contextlib import AsyncExitStack
from datetime import timedelta
from typing import Any

import faust
from mode import Service
from prometheus_client import CollectorRegistry

from videogen_common.clock import Clock, SystemClock
from videogen_common.events import Envelope, event_message, trace_headers
from videogen_common.media import open_media_store
from videogen_common.metrics import new_registry
from videogen_common.periodic import Periodic
from videogen_common.probes import WorkerProbes
from videogen_common.records.event import Event
from videogen_common.store import Store, connect
from videogen_common.topics import Topics
from videogen_orchestrator.assembly import Orchestrator, Resources, assemble
from videogen_orchestrator.callback_feed import CallbackFeed
from videogen_orchestrator.metrics import OrchestratorMetrics, measured
from videogen_orchestrator.providers.base import ProviderAdapter
from videogen_orchestrator.providers.rate import RateLimiter
from videogen_orchestrator.providers.registry import build_limiters, build_providers, close_providers
from videogen_orchestrator.reconciler import Reconciler
from videogen_orchestrator.retention_sweeper import RetentionSweeper
from videogen_orchestrator.runner import Runner
from videogen_orchestrator.settings import OrchestratorSettings

log = logging.getLogger(__name__)


class FaustTopicSink:
    """Sends status envelopes (keyed by generation id) and events (keyed by subject id) through the faust
    app's producer, each send waiting for the broker's acknowledgement."""

    def __init__(self, status_topic: faust.TopicT, events_topic: faust.TopicT) -> None:
        self._status = status_topic
        self._events = events_topic

    async def send(self, envelope: Envelope) -> None:
        pending = await self._status.send(
            key=envelope.generation_id.encode(),
            value=envelope.to_json(),
            headers=envelope.kafka_headers(),
        )
        await pending

    async def send_event(self, event: Event) -> None:
        pending = await self._events.send(
            key=event.subject_id.encode(),
            value=event_message(event),
            headers=trace_headers(event.trace_id, event.traceparent),
        )
        await pending


class OrchestratorRuntime(Service):
    def __init__(
        self,
        settings: OrchestratorSettings,
        status_topic: faust.TopicT,
        events_topic: faust.TopicT,
        *,
        clock: Clock | None = None,
        providers: dict[str, ProviderAdapter] | None = None,
        registry: CollectorRegistry | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.settings = settings
        self.clock = clock or SystemClock()
        self.limiters: dict[Any, RateLimiter] = build_limiters(settings) if providers is None else {}
        self.providers = providers or build_providers(settings, self.limiters)
        self.sink = FaustTopicSink(status_topic, events_topic)
        self.ready = asyncio.Event()
        self._client: Any = None
        self._background: Periodic | None = None
        self._gauges: Periodic | None = None
        self._sweeps: Periodic | None = None
        self._callbacks: CallbackFeed | None = None
        self.metrics = OrchestratorMetrics(registry or new_registry())
        topics = Topics(settings.topic_prefix)
        self.probes = WorkerProbes(
            host=settings.orchestrator_host,
            port=settings.orchestrator_port,
            registry=self.metrics.registry,
            kafka_bootstrap=settings.kafka_bootstrap,
            topics=topics.all(),
            started=self.ready.is_set,
        )
        self._media = AsyncExitStack()
        self.store: Store
        # The orchestrator's parts (``assembly``), once started.
        self.parts: Orchestrator
        self.runner: Runner
        self.reconciler: Reconciler
        self.sweeper: RetentionSweeper

    async def on_start(self) -> None:
        settings = self.settings
        await self.probes.start()  # first, so /healthz answers (and a taken port fails) at once
        self._client, self.store = connect(
            settings.mongo_url,
            settings.mongo_db,
            app_name="videogen-orchestrator",
            durability=settings.mongo_write_concern,
        )
        self.probes.store = self.store
        media = await self._media.enter_async_context(open_media_store(settings))
        providers = measured(self.providers, self.metrics)
        resources = Resources(settings, self.store, media, providers, self.sink, self.clock, self.metrics)
        self.parts = assemble(resources, limiters=self.limiters.values())
        self.runner, self.reconciler = self.parts.runner, self.parts.reconciler
        self.metrics.in_flight.set_function(lambda: self.runner.in_flight)
        self._background = Periodic(
            "reconciler", settings.reconcile_interval_seconds, self._reconcile_once, log
        )
        self._background.start()
        self._gauges = Periodic(
            "metrics refresh", settings.metrics_refresh_seconds, self._refresh_gauges, log
        )
        self._gauges.start()
        self.sweeper = RetentionSweeper(
            store=self.store,
            media=media,
            clock=self.clock,
            owner=settings.orchestrator_instance,
            lease=timedelta(seconds=settings.media_sweep_lease_seconds),
            batch=settings.media_sweep_batch,
            on_swept=self.metrics.observe_swept,
        )
        self._sweeps = Periodic(
            "retention sweeper", settings.media_sweep_interval_seconds, self.sweeper.run_once, log
        )
        self._sweeps.start()
        if settings.provider_callbacks:  # the providers' callbacks wake the actors waiting on their tasks
            topic = Topics(settings.topic_prefix).callbacks
            feed = self._callbacks = CallbackFeed(settings.kafka_bootstrap, topic, self.parts.watch.wake)
            self.metrics.callbacks_reading.set_function(lambda: float(feed.ready.is_set()))
            feed.start()
        self.ready.set()
        log.info("orchestrator ready", extra={"instance": settings.orchestrator_instance})

    async def _reconcile_once(self) -> None:
        started, republished = await self.reconciler.run_once()
        self.metrics.resumed.inc(started)
        self.metrics.republished.inc(republished)

    async def _refresh_gauges(self) -> None:
        await self.metrics.refresh(self.store, self.clock.now())

    async def on_stop(self) -> None:
        """Stop taking work (the agent waits on ``ready``), cancel the actors and hand their leases back, then
        close the store. The faust app, stopped beside this, commits the offsets of the requests started."""
        self.ready.clear()  # /readyz answers 503 from here on
        try:
            for periodic in (self._background, self._gauges, self._sweeps):
                if periodic is not None:
                    await periodic.stop()
            if self._callbacks is not None:
                await self._callbacks.stop()
            if hasattr(self, "runner"):
                await self.runner.stop()
            if hasattr(self, "reconciler"):
                with contextlib.suppress(Exception):
                    await self.reconciler.stopped()
            await close_providers(self.providers)
            await self._media.aclose()
            if self._client is not None:
                await self._client.close()
        finally:
            await self.probes.stop()
        log.info("orchestrator stopped")
