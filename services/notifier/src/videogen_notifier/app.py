"""The faust app and its agent: events in, delivery records created and sent."""

from __future__ import annotations

import logging

import faust

from videogen_common.streams import faust_options
from videogen_common.topics import Topics
from videogen_notifier.intake import parse, take_in, uninterrupted
from videogen_notifier.runtime import NotifierRuntime
from videogen_notifier.settings import NotifierSettings

log = logging.getLogger(__name__)


def create_notifier(settings: NotifierSettings) -> tuple[faust.App, NotifierRuntime]:
    app = faust.App(**faust_options(settings, settings.notifier_group))
    events = app.topic(Topics(settings.topic_prefix).events, key_serializer="raw", value_serializer="raw")
    runtime = NotifierRuntime(settings)
    runtime.probes.watch(app)  # readiness waits for the group join; /metrics shows the consumer's lag

    @app.agent(events, name="events")
    async def on_events(stream: faust.StreamT[bytes]) -> None:
        # Events come in batches (as many as are waiting, up to status_batch_size): their records are
        # written together, and are durable before the batch's offsets are committed; sending happens off
        # the partition, in each endpoint's lane.
        batches = stream.take(settings.status_batch_size, within=settings.status_batch_seconds)
        async for raws in batches:
            await runtime.ready.wait()
            # A stop must not cut a batch short: faust commits its offsets as the agent leaves it.
            await uninterrupted(take_in(runtime.dispatcher, parse(raws)), settings.shutdown_timeout_seconds)

    return app, runtime
