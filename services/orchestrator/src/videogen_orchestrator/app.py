"""The faust app and its agent: generation requests in, actors started."""

from __future__ import annotations

import asyncio
import logging
from functools import partial
from typing import cast

import faust

from videogen_common.domain import Priority
from videogen_common.events import Envelope, EnvelopeError
from videogen_common.streams import faust_options
from videogen_common.topics import Topics
from videogen_orchestrator.runtime import OrchestratorRuntime
from videogen_orchestrator.settings import OrchestratorSettings

log = logging.getLogger(__name__)


def create_orchestrator(settings: OrchestratorSettings) -> tuple[faust.App, OrchestratorRuntime]:
    topics = Topics(settings.topic_prefix)
    # Stopping (or a rebalance) must not wait for the agent to finish its message: it may be waiting for a
    # free slot on this instance. Unfinished requests stay uncommitted and go to the partition's next owner.
    app = faust.App(**faust_options(settings, settings.orchestrator_group), stream_wait_empty=False)
    requested = app.topic(topics.requested, key_serializer="raw", value_serializer="raw")
    status = app.topic(topics.status, key_serializer="raw", value_serializer="raw")
    events = app.topic(topics.events, key_serializer="raw", value_serializer="raw")
    runtime = OrchestratorRuntime(settings, status, events)
    runtime.probes.watch(app)  # readiness waits for the group join; /metrics shows the consumer's lag

    @app.agent(requested, name="generation-requests")
    async def on_request(stream: faust.StreamT[bytes]) -> None:
        # Acknowledged by hand, once the generation is started: a request taken while this instance stops is
        # never acknowledged (faust acknowledges an event whose agent was cancelled, unless acks are manual),
        # so its offset stays uncommitted and the partition's next owner gets it at once.
        requests = cast("faust.Stream[bytes]", stream).noack()
        async for event in requests.events():
            await runtime.ready.wait()
            try:
                envelope = Envelope.from_json(event.value)
            except EnvelopeError as exc:
                log.warning("skipped a malformed request message", extra={"error": str(exc)})
                await requests.ack(event)
                continue
            if envelope.generation.get("priority") == Priority.LOW.value:
                # A batch's item (or other low-priority work): started in the background, in turn by
                # account, acknowledged once started; the requests behind it are not held up.
                runtime.runner.intake.put(
                    envelope.account_id, envelope.generation_id, partial(requests.ack, event)
                )
                continue
            # Claims the lease and starts the actor; waits only when this instance is at capacity.
            with runtime.runner.intake.first():
                await runtime.runner.start(envelope.generation_id)
            if runtime.runner.stopping:
                await asyncio.Event().wait()  # until the agent is cancelled, unacknowledged
            await requests.ack(event)

    return app, runtime
