"""Putting status events on the status topic as the orchestrator does, for the api's waiting and streaming
requests to hear."""

from __future__ import annotations

from typing import Any

from aiokafka import AIOKafkaProducer

from videogen_common.clock import SystemClock
from videogen_common.generations import status_envelope
from videogen_common.records.generation import GenerationRecord
from videogen_common.settings import CommonSettings
from videogen_common.topics import Topics


async def publish_status(settings: CommonSettings, doc: dict[str, Any], *, progress: bool = False) -> None:
    """The status event of ``doc`` (a generation document as the orchestrator holds it), keyed by its id."""
    envelope = status_envelope(GenerationRecord.from_doc(doc), SystemClock().now(), progress=progress)
    producer = AIOKafkaProducer(bootstrap_servers=settings.kafka_bootstrap)
    await producer.start()
    try:
        await producer.send_and_wait(
            Topics(settings.topic_prefix).status,
            envelope.to_json(),
            key=envelope.generation_id.encode(),
            headers=envelope.kafka_headers(),
        )
    finally:
        await producer.stop()
