"""Publishes envelopes to Kafka: generation requests to ``generation.requested`` and the status events of the
api's own transitions (a cancel) to ``generation.status``. The envelope's type picks the topic.

MongoDB is the source of truth: a publish that fails or times out is logged, not surfaced. The orchestrator's
reconciler dispatches a generation whose request never arrived, and republishes a status event whose
generation is still marked ``outbox_pending``."""

from __future__ import annotations

import asyncio
import logging

from aiokafka import AIOKafkaProducer

from videogen_common.events import REQUESTED, STATUS, Envelope
from videogen_common.topics import Topics

log = logging.getLogger(__name__)


class EventPublisher:
    def __init__(self, producer: AIOKafkaProducer, topics: Topics, timeout_seconds: float) -> None:
        self._producer = producer
        self._topics = {REQUESTED: topics.requested, STATUS: topics.status}
        self._timeout = timeout_seconds
        self._healthy = True

    def connected(self) -> bool:
        """False after a publish failed, until one succeeds again: the readiness signal."""
        return self._healthy

    async def publish(self, envelope: Envelope) -> bool:
        """Put the envelope on its topic, keyed by generation id; True once the broker acknowledged it."""
        topic = self._topics.get(envelope.type)
        if topic is None:
            raise ValueError(f"no topic for envelope type {envelope.type!r}")
        try:
            await asyncio.wait_for(
                self._producer.send_and_wait(
                    topic,
                    envelope.to_json(),
                    key=envelope.generation_id.encode(),
                    headers=envelope.kafka_headers(),
                ),
                self._timeout,
            )
        except Exception as exc:  # any broker failure: the reconciler will repair it
            log.warning(
                "publish failed; left to the reconciler",
                extra={"generation_id": envelope.generation_id, "topic": topic, "error": repr(exc)},
            )
            self._healthy = False
            return False
        self._healthy = True
        return True
