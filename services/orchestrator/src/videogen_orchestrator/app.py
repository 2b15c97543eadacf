"""The faust app and its agent: generation requests in, actors started."""

from __future__ import annotations

import logging

import faust

from videogen_common.events import Envelope, EnvelopeError
from videogen_common.streams import faust_options
from videogen_common.topics import Topics
from videogen_orchestrator.runtime import OrchestratorRuntime
from videogen_orchestrator.settings import OrchestratorSettings

log = logging.getLogger(__name__)


def create_orchestrator(settings: OrchestratorSettings) -> tuple[faust.App, OrchestratorRuntime]:
    topics = Topics(settings.topic_prefix)
    app = faust.App(**faust_options(settings, settings.orchestrator_group))
    requested = app.topic(topics.requested, key_serializer="raw", value_serializer="raw")
    status = app.topic(topics.status, key_serializer="raw", value_serializer="raw")
    runtime = OrchestratorRuntime(settings, status)

    @app.agent(requested, name="generation-requests")
    async def on_request(stream: faust.StreamT[bytes]) -> None:
        async for raw in stream:
            await runtime.ready.wait()
            try:
                envelope = Envelope.from_json(raw)
            except EnvelopeError as exc:
                log.warning("skipped a malformed request message", extra={"error": str(exc)})
                continue
            # Claims the lease and starts the actor; waits only when this instance is at capacity.
            await runtime.runner.start(envelope.generation_id)

    return app, runtime
