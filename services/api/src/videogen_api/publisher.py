"""Publishes generation requests to Kafka. MongoDB is the source of truth: a publish that fails or times out
is logged, not surfaced, because the orchestrator's reconciler picks the generation up from the store."""

from __future__ import annotations

import asyncio
import logging

from aiokafka import AIOKafkaProducer

from videogen_common.events import Envelope

log = logging.getLogger(__name__)


class RequestPublisher:
    def __init__(self, producer: AIOKafkaProducer, topic: str, timeout_seconds: float) -> None:
        self._producer = producer
        self._topic = topic
        self._timeout = timeout_seconds
        self._healthy = True

    def connected(self) -> bool:
        """False after a publish failed, until one succeeds again: the readiness signal."""
        return self._healthy

    async def publish(self, envelope: Envelope) -> bool:
        try:
            await asyncio.wait_for(
                self._producer.send_and_wait(
                    self._topic,
                    envelope.to_json(),
                    key=envelope.generation_id.encode(),
                    headers=envelope.kafka_headers(),
                ),
                self._timeout,
            )
        except Exception as exc:  # any broker failure: the reconciler will dispatch it
            log.warning(
                "publish failed; left to the reconciler",
                extra={"generation_id": envelope.generation_id, "error": repr(exc)},
            )
            self._healthy = False
            return False
        self._healthy = True
        return True
