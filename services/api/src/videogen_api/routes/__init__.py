"""HTTP handlers, one module per resource; ``TABLES``: every route table the application serves, in order."""

from aiohttp import web

from videogen_api.routes import (
    api_keys,
    audit,
    batch_items,
    batches,
    budgets,
    console,
    deletions,
    deliveries,
    event_log,
    events,
    generations,
    health,
    media,
    provider_callbacks,
    providers,
    reference,
    uploads,
    usage,
    webhooks,
)

TABLES: tuple[web.RouteTableDef, ...] = (
    generations.routes,
    batches.routes,
    batch_items.routes,
    deletions.routes,
    events.routes,
    providers.routes,
    uploads.routes,
    webhooks.routes,
    deliveries.routes,
    event_log.routes,
    usage.routes,
    budgets.routes,
    api_keys.routes,
    audit.routes,
    media.routes,
    provider_callbacks.routes,
    health.routes,
    reference.routes,
    console.routes,
)
