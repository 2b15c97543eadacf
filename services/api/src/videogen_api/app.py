"""The aiohttp application: routes, middlewares, and the resources it opens on start and closes on stop."""

from __future__ import annotations

from collections.abc import AsyncIterator

from aiohttp import web
from aiokafka import AIOKafkaProducer

from videogen_api import openapi, state
from videogen_api.auth import KeyCache
from videogen_api.middleware import auth_middleware, problem_middleware, request_id_middleware
from videogen_api.publisher import EventPublisher
from videogen_api.routes import deliveries, generations, health, media, webhooks
from videogen_api.settings import ApiSettings
from videogen_common.clock import Clock, SystemClock
from videogen_common.media import LocalMediaStore
from videogen_common.store import connect
from videogen_common.topics import Topics


def create_app(settings: ApiSettings, *, clock: Clock | None = None) -> web.Application:
    app = web.Application(
        client_max_size=settings.max_body_bytes,
        middlewares=[request_id_middleware, problem_middleware, auth_middleware],
    )
    app[state.SETTINGS] = settings
    app[state.CLOCK] = clock or SystemClock()
    app[state.MEDIA] = LocalMediaStore(settings.media_dir)
    app.cleanup_ctx.append(_store)
    app.cleanup_ctx.append(_producer)
    # The OpenAPI document and the /docs page, built once, from the same models the handlers validate with.
    app[openapi.REFERENCE] = openapi.reference(settings)
    for table in (
        generations.routes,
        webhooks.routes,
        deliveries.routes,
        media.routes,
        health.routes,
        openapi.routes,
    ):
        app.add_routes(table)
    return app


async def _store(app: web.Application) -> AsyncIterator[None]:
    settings = app[state.SETTINGS]
    client, store = connect(settings.mongo_url, settings.mongo_db, app_name="videogen-api")
    app[state.STORE] = store
    app[state.KEYS] = KeyCache(store, settings.api_key_cache_seconds)
    try:
        yield
    finally:
        await client.close()


async def _producer(app: web.Application) -> AsyncIterator[None]:
    settings = app[state.SETTINGS]
    # The Kafka-API brokers we support include ones without idempotent producers; at-least-once plus
    # compare-and-set consumers make duplicates harmless.
    producer = AIOKafkaProducer(
        bootstrap_servers=settings.kafka_bootstrap,
        acks="all",
        enable_idempotence=False,
        linger_ms=2,
        request_timeout_ms=int(settings.publish_timeout_seconds * 1000) + 1000,
    )
    await producer.start()
    app[state.PUBLISHER] = EventPublisher(
        producer, Topics(settings.topic_prefix), settings.publish_timeout_seconds
    )
    try:
        yield
    finally:
        await producer.stop()
