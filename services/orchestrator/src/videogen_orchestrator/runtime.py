"""The orchestrator's resources and background loops, as a mode service started and stopped with the faust
worker: the store connection, the runner of actors and the reconciler."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta
from typing import Any

import faust
from mode import Service

from videogen_common.clock import Clock, SystemClock
from videogen_common.events import Envelope
from videogen_common.media import LocalMediaStore
from videogen_common.periodic import Periodic
from videogen_common.store import Store, connect
from videogen_orchestrator.actor import GenerationActor
from videogen_orchestrator.providers.base import ProviderAdapter
from videogen_orchestrator.providers.mock import MockProvider
from videogen_orchestrator.reconciler import Reconciler
from videogen_orchestrator.runner import Runner
from videogen_orchestrator.settings import OrchestratorSettings

log = logging.getLogger(__name__)


class FaustTopicSink:
    """Sends status envelopes through the faust app's producer, keyed by generation id."""

    def __init__(self, topic: faust.TopicT) -> None:
        self._topic = topic

    async def send(self, envelope: Envelope) -> None:
        pending = await self._topic.send(
            key=envelope.generation_id.encode(),
            value=envelope.to_json(),
            headers=envelope.kafka_headers(),
        )
        await pending  # wait for the broker's acknowledgement


def default_providers(settings: OrchestratorSettings) -> dict[str, ProviderAdapter]:
    return {
        "mock": MockProvider(latency_ms=settings.mock_latency_ms, failure_rate=settings.mock_failure_rate)
    }


class OrchestratorRuntime(Service):
    def __init__(
        self,
        settings: OrchestratorSettings,
        status_topic: faust.TopicT,
        *,
        clock: Clock | None = None,
        providers: dict[str, ProviderAdapter] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.settings = settings
        self.clock = clock or SystemClock()
        self.providers = providers or default_providers(settings)
        self.sink = FaustTopicSink(status_topic)
        self.ready = asyncio.Event()
        self._client: Any = None
        self._background: Periodic | None = None
        self.store: Store
        self.runner: Runner
        self.reconciler: Reconciler

    async def on_start(self) -> None:
        settings = self.settings
        self._client, self.store = connect(
            settings.mongo_url, settings.mongo_db, app_name="videogen-orchestrator"
        )
        actor = GenerationActor(
            settings=settings,
            store=self.store,
            media=LocalMediaStore(settings.media_dir),
            providers=self.providers,
            sink=self.sink,
            clock=self.clock,
        )
        self.runner = Runner(
            store=self.store,
            actor=actor,
            clock=self.clock,
            lease=timedelta(seconds=settings.lease_seconds),
            max_in_flight=settings.max_in_flight,
        )
        self.reconciler = Reconciler(
            store=self.store,
            runner=self.runner,
            sink=self.sink,
            clock=self.clock,
            grace=timedelta(seconds=settings.dispatch_grace_seconds),
        )
        self._background = Periodic(
            "reconciler", settings.reconcile_interval_seconds, self.reconciler.run_once, log
        )
        self._background.start()
        self.ready.set()
        log.info("orchestrator ready", extra={"instance": settings.orchestrator_instance})

    async def on_stop(self) -> None:
        self.ready.clear()
        if self._background is not None:
            await self._background.stop()
        if hasattr(self, "runner"):
            await self.runner.stop()
        if self._client is not None:
            await self._client.close()
        log.info("orchestrator stopped")
