"""The faust app and its agent: status events in, delivery records created and sent."""

from __future__ import annotations

import logging

import faust

from videogen_common.events import Envelope, EnvelopeError
from videogen_common.streams import faust_options
from videogen_common.topics import Topics
from videogen_notifier.deliveries import deliveries_for
from videogen_notifier.runtime import NotifierRuntime
from videogen_notifier.settings import NotifierSettings

log = logging.getLogger(__name__)


def create_notifier(settings: NotifierSettings) -> tuple[faust.App, NotifierRuntime]:
    app = faust.App(**faust_options(settings, settings.notifier_group))
    status = app.topic(Topics(settings.topic_prefix).status, key_serializer="raw", value_serializer="raw")
    runtime = NotifierRuntime(settings)

    @app.agent(status, name="status-events")
    async def on_status(stream: faust.StreamT[bytes]) -> None:
        async for raw in stream:
            await runtime.ready.wait()
            try:
                envelope = Envelope.from_json(raw)
            except EnvelopeError as exc:
                log.warning("skipped a malformed status message", extra={"error": str(exc)})
                continue
            # The records are durable before the offset is committed; sending happens off the partition.
            for delivery_id, webhook_id in await deliveries_for(runtime.store, envelope, runtime.clock.now()):
                runtime.dispatcher.submit(delivery_id, webhook_id)

    return app, runtime
