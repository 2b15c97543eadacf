"""Publishes to Kafka: generation requests to ``generation.requested`` and the status messages of the api's
own transitions (a cancel) to ``generation.status`` (the envelope's type picks the topic), and the events the
api's changes make (a cancel's ``video.failed``) to the events topic (``send_event``), and the wake-ups of
provider callbacks to the callbacks topic (``wake``).

MongoDB is the source of truth: a publish that fails or times out is logged, not surfaced. The orchestrator's
reconciler dispatches a generation whose request never arrived, and republishes every event still owed to the
notifier.

So creation does not wait for the broker at all (``publish_soon``): the generation is already durable when
its request is handed to the producer, after the 202 is decided. A request that never reaches the broker
(the broker down, the queue full, the process killed before sending) is dispatched by the reconciler once
``dispatch_grace_seconds`` have passed. A cancel still waits (``publish``): it clears its outbox mark only
once the broker has the event."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from aiokafka import AIOKafkaProducer

from videogen_api.metrics import ApiMetrics
from videogen_common.events import REQUESTED, STATUS, Envelope, event_message, trace_headers
from videogen_common.provider_callbacks import WakeUp
from videogen_common.records.event import Event
from videogen_common.topics import Topics

log = logging.getLogger(__name__)


class EventPublisher:
    def __init__(
        self,
        producer: AIOKafkaProducer,
        topics: Topics,
        timeout_seconds: float,
        metrics: ApiMetrics | None = None,
        *,
        queue_limit: int = 10_000,
        started: bool = True,
    ) -> None:
        self._producer = producer
        # Set once the producer has started (reached the broker); until then nothing is sent, a publish fails
        # at once, and what publish_soon hands over waits in the queue (the api serves without a broker).
        self._started = asyncio.Event()
        if started:
            self._started.set()
        self._metrics = metrics
        self._topics = {REQUESTED: topics.requested, STATUS: topics.status}
        self._events_topic = topics.events
        self._callbacks_topic = topics.callbacks
        self._timeout = timeout_seconds
        self._healthy = True
        # Envelopes handed over by publish_soon, on their way into the producer's buffer. Bounded: past it
        # they are dropped (and dispatched by the reconciler) rather than held in memory without end.
        self._queue: asyncio.Queue[Envelope] = asyncio.Queue(maxsize=queue_limit)
        self._worker: asyncio.Task[None] | None = None
        # Sent, not yet answered by the broker.
        self._unanswered: set[asyncio.Future[object]] = set()

    def connected(self) -> bool:
        """False before the producer started, and after a publish failed until one succeeds again (reported,
        not gated on, by ``/readyz``)."""
        return self._healthy and self._started.is_set()

    @property
    def started(self) -> bool:
        """Whether the producer has reached the broker (``producer_started``)."""
        return self._started.is_set()

    def producer_started(self) -> None:
        self._started.set()

    async def publish(self, envelope: Envelope) -> bool:
        """Put the envelope on its topic, keyed by generation id; True once the broker acknowledged it."""
        topic = self._topic(envelope)
        if not self._started.is_set():
            self._failed(envelope, "not connected to the broker yet")
            return False
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
            self._failed(envelope, repr(exc))
            return False
        self._healthy = True
        self._count(envelope, "ok")
        return True

    async def send_event(self, event: Event) -> None:
        """Put the event on the events topic, keyed by its subject; return once the broker acknowledged it,
        raise if it did not (within the publish timeout). ``videogen_common.outbox.publish`` logs the failure;
        the reconciler republishes an owed event."""
        outcome = "failed"
        try:
            if not self._started.is_set():
                raise ConnectionError("not connected to the broker yet")
            await asyncio.wait_for(
                self._producer.send_and_wait(
                    self._events_topic,
                    event_message(event),
                    key=event.subject_id.encode(),
                    headers=trace_headers(event.trace_id, event.traceparent),
                ),
                self._timeout,
            )
            outcome = "ok"
        except Exception:
            self._healthy = False
            raise
        finally:
            if self._metrics is not None:
                self._metrics.count_publish("event", outcome)
        self._healthy = True

    async def wake(self, wake: WakeUp) -> bool:
        """Put a provider callback's wake-up on the callbacks topic, keyed by generation id; True once the
        broker acknowledged it. A wake-up lost costs its generation one safety-net poll, so a failure is only
        logged (and counted), not surfaced."""
        outcome = "failed"
        try:
            if not self._started.is_set():
                raise ConnectionError("not connected to the broker yet")
            await asyncio.wait_for(
                self._producer.send_and_wait(
                    self._callbacks_topic, wake.to_json(), key=wake.generation_id.encode()
                ),
                self._timeout,
            )
            outcome = "ok"
        except Exception as exc:
            log.warning(
                "could not hand a provider callback's wake-up to the broker; the task's safety-net poll "
                "will see it",
                extra={"generation_id": wake.generation_id, "error": repr(exc)},
            )
        finally:
            if self._metrics is not None:
                self._metrics.count_publish("callback", outcome)
        return outcome == "ok"

    def publish_soon(self, envelope: Envelope) -> None:
        """Hand the envelope over without waiting: it is sent in the background, and a failure (including no
        answer from the broker within the publish timeout) is logged, counted and left to the reconciler like
        any other."""
        try:
            self._queue.put_nowait(envelope)
        except asyncio.QueueFull:
            self._failed(envelope, "queue full")

    def start(self) -> None:
        self._worker = asyncio.create_task(self._send_queued(), name="publish-soon")

    async def flush(self) -> None:
        """Wait until everything handed over so far has been answered by the broker, or has failed."""
        await self._queue.join()
        if self._unanswered:
            await asyncio.wait(list(self._unanswered))

    async def close(self) -> None:
        """Send what is still queued (for at most the publish timeout), then stop."""
        if self._worker is None:
            return
        try:
            await asyncio.wait_for(self._queue.join(), self._timeout)
        except TimeoutError:
            log.warning("queued requests not sent at shutdown; left to the reconciler")
        self._worker.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._worker
        self._worker = None

    async def _send_queued(self) -> None:
        await self._started.wait()
        loop = asyncio.get_running_loop()
        while True:
            # Whatever is queued goes at once, under one bound: a timer per envelope cost more than handing
            # it over did (docs/benchmarks.md).
            group = [await self._queue.get()]
            while not self._queue.empty():
                group.append(self._queue.get_nowait())
            handed_over = loop.time()
            next_up = 0
            try:
                async with asyncio.timeout(self._timeout):
                    for envelope in group:
                        # Returns once the message is in the producer's buffer: at once, unless the producer
                        # must first learn the topic's partitions or wait for room. The broker's answer comes
                        # later.
                        try:
                            sent = await self._producer.send(
                                self._topic(envelope),
                                envelope.to_json(),
                                key=envelope.generation_id.encode(),
                                headers=envelope.kafka_headers(),
                            )
                        except Exception as exc:
                            self._failed(envelope, repr(exc))
                        else:
                            self._unanswered.add(sent)
                            sent.add_done_callback(
                                lambda answer, envelope=envelope, at=handed_over: self._answered(
                                    envelope, answer, at
                                )
                            )
                        next_up += 1
            except TimeoutError as exc:  # the producer waited too long for the broker: the rest fail too
                for envelope in group[next_up:]:
                    self._failed(envelope, repr(exc))
            finally:
                for _ in group:
                    self._queue.task_done()

    def _answered(self, envelope: Envelope, answer: asyncio.Future[object], handed_over: float) -> None:
        self._unanswered.discard(answer)
        waited = asyncio.get_running_loop().time() - handed_over
        if answer.cancelled() or answer.exception() is not None:
            self._failed(envelope, "cancelled" if answer.cancelled() else repr(answer.exception()))
        elif waited > self._timeout:
            # Sent, but later than a publish may take: the broker is slow, and readiness should say so.
            self._failed(envelope, f"acknowledged after {waited:.3f} s")
        else:
            self._healthy = True
            self._count(envelope, "ok")

    def _topic(self, envelope: Envelope) -> str:
        topic = self._topics.get(envelope.type)
        if topic is None:
            raise ValueError(f"no topic for envelope type {envelope.type!r}")
        return topic

    def _failed(self, envelope: Envelope, error: str) -> None:
        log.warning(
            "publish failed; left to the reconciler",
            extra={
                "generation_id": envelope.generation_id,
                "account_id": envelope.account_id,
                "request_id": envelope.trace_id,
                "topic": self._topics.get(envelope.type),
                "error": error,
            },
        )
        self._healthy = False
        self._count(envelope, "failed")

    def _count(self, envelope: Envelope, outcome: str) -> None:
        if self._metrics is not None:
            self._metrics.count_publish(envelope.type, outcome)
