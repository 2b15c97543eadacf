"""Kafka topic names (from settings, with a prefix) and their explicit creation at start-up."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import TopicAlreadyExistsError


@dataclass(frozen=True)
class Topics:
    prefix: str

    @property
    def requested(self) -> str:
        """generation.requested: the api asks the orchestrator to run a generation."""
        return f"{self.prefix}generation.requested"

    @property
    def status(self) -> str:
        """generation.status: each state change and progress of a generation (the api's waiting and streaming
        requests listen)."""
        return f"{self.prefix}generation.status"

    @property
    def events(self) -> str:
        """events: the events for webhooks (``videogen_common.event_types``), keyed by subject; the notifier
        listens."""
        return f"{self.prefix}events"

    @property
    def callbacks(self) -> str:
        """provider.callbacks: a provider called back about a generation's task (a wake-up, keyed by
        generation id); every orchestrator instance reads all of it (``provider_callbacks``)."""
        return f"{self.prefix}provider.callbacks"

    def all(self) -> list[str]:
        return [self.requested, self.status, self.events, self.callbacks]


async def ensure_topics(
    bootstrap: str, topics: Topics, partitions: int, replication_factor: int = 1
) -> list[str]:
    """Create the topics that do not exist yet; return the names created. Never relies on auto-create."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10_000)
    await admin.start()
    try:
        existing = set(await admin.list_topics())
        missing = [name for name in topics.all() if name not in existing]
        if missing:
            # A concurrent migration may get there first.
            with contextlib.suppress(TopicAlreadyExistsError):
                await admin.create_topics(
                    [
                        NewTopic(name, num_partitions=partitions, replication_factor=replication_factor)
                        for name in missing
                    ]
                )
        return missing
    finally:
        await admin.close()
