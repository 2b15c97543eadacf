"""The aiohttp application: routes, middlewares, and the resources it opens on start and closes on stop."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from aiohttp import web
from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaError
from prometheus_client import CollectorRegistry

from videogen_api import openapi, state
from videogen_api.auth import KeyCache
from videogen_api.drain import Drain
from videogen_api.metrics import METRICS, ApiMetrics
from videogen_api.middleware import rate_limit_headers, request_middleware
from videogen_api.provider_states import ProviderStates
from videogen_api.publisher import EventPublisher
from videogen_api.ratelimit import MongoCounts, Policies, RateLimiter
from videogen_api.routes import TABLES, console, events, provider_callbacks, reference
from videogen_api.settings import ApiSettings
from videogen_api.spend import AccountLimits, Reservations
from videogen_api.status_feed import StatusFeed
from videogen_common.clock import Clock, SystemClock
from videogen_common.domain import Provider
from videogen_common.media import open_media_store
from videogen_common.metrics import new_registry
from videogen_common.repositories.batched_inserts import InsertBatcher
from videogen_common.repositories.generation_reads import GenerationReads
from videogen_common.repositories.generations import GenerationRepository
from videogen_common.store import connect
from videogen_common.topics import Topics

log = logging.getLogger(__name__)

MAX_REQUEST_LINE_BYTES = 32 * 1024


def create_app(
    settings: ApiSettings, *, clock: Clock | None = None, registry: CollectorRegistry | None = None
) -> web.Application:
    drain = Drain()
    app = web.Application(
        client_max_size=settings.max_body_bytes,
        # A request line or header up to 32 KiB reaches the handlers (aiohttp's own limit, 8 KiB, answers a
        # longer one with a plain 400 before them): a listing's query string too long for a parameter gets
        # the documented 422 naming it, not an undocumented 400.
        handler_args={"max_line_size": MAX_REQUEST_LINE_BYTES, "max_field_size": MAX_REQUEST_LINE_BYTES},
        middlewares=[request_middleware],
    )
    app[METRICS] = ApiMetrics(registry or new_registry())
    app[state.SETTINGS] = settings
    app[state.CLOCK] = clock or SystemClock()
    app[state.DRAIN] = drain
    app[state.EVENT_STREAMS] = {}
    app[state.PRICES] = settings.price_table
    app[state.CATALOGUE] = settings.catalogue
    app.on_response_prepare.append(drain.on_response_prepare)
    app.on_response_prepare.append(rate_limit_headers)
    app.on_response_prepare.append(console.security_headers)
    app.on_response_prepare.append(reference.security_headers)
    app.cleanup_ctx.append(_store)
    if settings.rate_limit_enabled:
        app.cleanup_ctx.append(_rate_limiter)
    app.cleanup_ctx.append(_media)
    app.cleanup_ctx.append(_producer)
    app.cleanup_ctx.append(_status_feed)
    app.cleanup_ctx.append(provider_callbacks.fal_keys)
    for table in TABLES:
        app.add_routes(table)
    # The OpenAPI document, built once from the router: each handler's declaration, with the same models the
    # handlers validate with (served with /docs).
    app[reference.REFERENCE] = reference.Reference.of(openapi.build_document(settings, app.router))
    return app


async def _store(app: web.Application) -> AsyncIterator[None]:
    settings = app[state.SETTINGS]
    client, store = connect(
        settings.mongo_url,
        settings.mongo_db,
        app_name="videogen-api",
        durability=settings.mongo_write_concern,
        timeout_ms=round(settings.api_store_timeout_seconds * 1000),
    )
    app[state.STORE] = store
    app[state.KEYS] = keys = KeyCache(store, settings.api_key_cache_seconds, app[state.CLOCK])
    app[state.ACCOUNT_LIMITS] = AccountLimits(store, settings.budget_cache_seconds)
    app[state.RESERVATIONS] = reservations = Reservations(store, settings.budget_threshold_percent)
    app[state.GENERATIONS] = generations = GenerationRepository(store)
    app[state.GENERATION_READS] = GenerationReads(store)
    app[state.INSERTS] = InsertBatcher(generations)
    catalogue = app[state.CATALOGUE]
    defaults = {p.value: spec.id for p in Provider if (spec := catalogue.default(p.value)) is not None}
    app[state.PROVIDER_STATES] = ProviderStates(
        store, app[state.CLOCK], settings.provider_state_cache_seconds, defaults=defaults
    )
    try:
        yield
    finally:
        await keys.writes_done()
        await reservations.settled()
        await client.close()


async def _rate_limiter(app: web.Application) -> AsyncIterator[None]:
    settings = app[state.SETTINGS]
    limiter = RateLimiter(
        Policies.from_settings(settings),
        MongoCounts(app[state.STORE]),
        app[state.CLOCK],
        sync_seconds=settings.rate_limit_sync_seconds,
    )
    app[state.RATE_LIMITER] = limiter
    limiter.start()
    try:
        yield
    finally:
        await limiter.stop()


async def _media(app: web.Application) -> AsyncIterator[None]:
    async with open_media_store(app[state.SETTINGS]) as media:
        app[state.MEDIA] = media
        yield


async def _producer(app: web.Application) -> AsyncIterator[None]:
    settings = app[state.SETTINGS]
    # The Kafka-API brokers we support include ones without idempotent producers; at-least-once plus
    # compare-and-set consumers make duplicates harmless.
    # Creation does not wait for the broker (publisher.publish_soon), so the linger delays no answer; the
    # longer it is, the more messages share a produce request and its CPU (2 ms gave a few per request;
    # docs/benchmarks.md). A cancel, which waits for the broker, waits up to the linger longer.
    producer = AIOKafkaProducer(
        bootstrap_servers=settings.kafka_bootstrap,
        acks="all",
        enable_idempotence=False,
        linger_ms=5,
        request_timeout_ms=int(settings.publish_timeout_seconds * 1000) + 1000,
    )
    publisher = EventPublisher(
        producer,
        Topics(settings.topic_prefix),
        settings.publish_timeout_seconds,
        app[METRICS],
        started=False,
    )
    app[state.PUBLISHER] = publisher
    app[state.RESERVATIONS].sink = publisher  # budget thresholds' events go out through it too
    publisher.start()
    # The api serves without a broker (creation is durable in the store, and the reconciler dispatches): one
    # started while the broker is unreachable keeps trying in the background instead of failing to start.
    connecting = asyncio.create_task(_start_producer(producer, publisher), name="producer-start")
    try:
        yield
    finally:
        connecting.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await connecting
        await publisher.close()  # into the producer's buffer, what creation handed over and is not sent yet
        await _stop_producer(producer, publisher, settings.publish_timeout_seconds)


async def _status_feed(app: web.Application) -> AsyncIterator[None]:
    settings = app[state.SETTINGS]
    feed = StatusFeed(
        settings.kafka_bootstrap,
        Topics(settings.topic_prefix).status,
        app[state.GENERATION_READS].get_many,
        app[state.GENERATION_READS].keys_of,
        recheck_seconds=settings.status_recheck_seconds,
        cue_seconds=events.KEEP_ALIVE_SECONDS,
    )
    app[state.FEED] = feed
    feed.start()
    try:
        yield
    finally:
        await feed.stop()


PRODUCER_RETRY_SECONDS = 2.0


async def _start_producer(producer: AIOKafkaProducer, publisher: EventPublisher) -> None:
    while True:
        try:
            await producer.start()
        except KafkaError as exc:
            log.warning(
                "broker unreachable; serving anyway and trying again",
                extra={"error": repr(exc), "retry_seconds": PRODUCER_RETRY_SECONDS},
            )
            await asyncio.sleep(PRODUCER_RETRY_SECONDS)
        else:
            publisher.producer_started()
            return


async def _stop_producer(producer: AIOKafkaProducer, publisher: EventPublisher, timeout: float) -> None:
    if not publisher.started:  # it never reached the broker: nothing to flush
        with contextlib.suppress(KafkaError):
            await producer.stop()
        return
    # Requests have finished by now (cleanup runs after them); send whatever is still buffered. Bounded: the
    # documents are already stored, and the reconciler dispatches any request that never arrived.
    try:
        await asyncio.wait_for(producer.flush(), timeout)
    except TimeoutError:
        log.warning("producer flush timed out at shutdown; left to the reconciler")
    await producer.stop()
