"""What the notifier's integration tests share: a harness that builds dispatchers, receivers and second store
clients on the test's clock, and tears them all down, newest first. Each test module subclasses it with the
settings and endpoint shapes it needs."""

from __future__ import annotations

from contextlib import AsyncExitStack
from typing import Any

import aiohttp

from tests.support.env import settings_for
from tests.support.receivers import Receiver, Script
from videogen_common.clock import Clock
from videogen_common.records.event import Event
from videogen_common.settings import CommonSettings
from videogen_common.store import Store, connect
from videogen_notifier.dispatcher import Dispatcher
from videogen_notifier.sender import Sender
from videogen_notifier.settings import NotifierSettings

Doc = dict[str, Any]


def no_jitter() -> float:
    return 0.5


class NotifierHarness:
    def __init__(self, base_env: dict[str, str], store: Store, clock: Clock, stack: AsyncExitStack) -> None:
        self.base_env = base_env
        self.store = store
        self.clock = clock
        self._stack = stack

    async def receiver(self, script: Script | None = None) -> Receiver:
        receiver = Receiver(script)
        await receiver.start()
        self._stack.push_async_callback(receiver.stop)
        return receiver

    def dispatcher_with(
        self, settings: NotifierSettings, session: aiohttp.ClientSession, *, store: Store | None = None
    ) -> Dispatcher:
        """A Dispatcher sending through ``session`` (closed at the end, after the dispatcher stops)."""
        self._stack.push_async_callback(session.close)
        dispatcher = Dispatcher(
            settings=settings,
            store=store or self.store,
            sender=Sender(session, settings.delivery_timeout_seconds),
            clock=self.clock,
            rng=no_jitter,
        )
        self._stack.push_async_callback(dispatcher.stop)
        return dispatcher

    async def other_store(self) -> Store:
        """A second client on the same database, as a second notifier process would have."""
        common = settings_for(CommonSettings, self.base_env)
        client, store = connect(common.mongo_url, common.mongo_db, app_name="notifier-b")
        self._stack.push_async_callback(client.close)
        await store.db.command("ping")  # connected already, so it is not slower off the mark than the first
        return store

    async def handle(self, dispatcher: Dispatcher, event: Event) -> list[tuple[str, str]]:
        """What the notifier's agent does with an event: the dispatcher's intake builds its deliveries,
        stores them, queues them on their lanes and settles the event; returns (delivery id, webhook id)."""
        return await dispatcher.take_in([event])

    async def delivery(self, delivery_id: str) -> Doc:
        doc = await self.store.deliveries.find_one({"_id": delivery_id})
        assert doc is not None
        return doc

    async def endpoint(self, webhook_id: str) -> Doc:
        doc = await self.store.webhooks.find_one({"_id": webhook_id})
        assert doc is not None
        return doc
