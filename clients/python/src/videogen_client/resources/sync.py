"""The sync client's resources: each method is its async twin's (``_portal.blocking``/``iterated``), run to
the end on the client's event loop. A method added to an async resource is added here as one line (a test
fails until it is)."""

from __future__ import annotations

from videogen_client._portal import Twin, blocking, iterated
from videogen_client.resources.account import AsyncAuditEvents, AsyncEvents, AsyncUsage
from videogen_client.resources.generations import (
    AsyncGenerations,
    AsyncModels,
    AsyncProviders,
    AsyncUploads,
)
from videogen_client.resources.keys import AsyncApiKeys, AsyncBudgets
from videogen_client.resources.webhooks import AsyncDeliveries, AsyncWebhooks


class Generations(Twin[AsyncGenerations]):
    """``client.generations`` of the sync ``Client``: ``AsyncGenerations``, called."""

    create = blocking(AsyncGenerations.create)
    get = blocking(AsyncGenerations.get)
    list_page = blocking(AsyncGenerations.list_page)
    list = iterated(AsyncGenerations.list)
    cancel = blocking(AsyncGenerations.cancel)
    delete = blocking(AsyncGenerations.delete)
    wait = blocking(AsyncGenerations.wait)
    create_and_wait = blocking(AsyncGenerations.create_and_wait)
    iter_video = iterated(AsyncGenerations.iter_video)
    download = blocking(AsyncGenerations.download)


class Webhooks(Twin[AsyncWebhooks]):
    """``client.webhooks`` of the sync ``Client``: ``AsyncWebhooks``, called."""

    create = blocking(AsyncWebhooks.create)
    list = blocking(AsyncWebhooks.list)
    get = blocking(AsyncWebhooks.get)
    update = blocking(AsyncWebhooks.update)
    delete = blocking(AsyncWebhooks.delete)
    rotate_secret = blocking(AsyncWebhooks.rotate_secret)
    send_test = blocking(AsyncWebhooks.send_test)
    recover = blocking(AsyncWebhooks.recover)
    deliveries_page = blocking(AsyncWebhooks.deliveries_page)
    deliveries = iterated(AsyncWebhooks.deliveries)


class Deliveries(Twin[AsyncDeliveries]):
    """``client.deliveries`` of the sync ``Client``: ``AsyncDeliveries``, called."""

    get = blocking(AsyncDeliveries.get)
    retry = blocking(AsyncDeliveries.retry)


class Uploads(Twin[AsyncUploads]):
    """``client.uploads`` of the sync ``Client``: ``AsyncUploads``, called."""

    create = blocking(AsyncUploads.create)
    get = blocking(AsyncUploads.get)
    delete = blocking(AsyncUploads.delete)


class Providers(Twin[AsyncProviders]):
    """``client.providers`` of the sync ``Client``: ``AsyncProviders``, called."""

    list = blocking(AsyncProviders.list)


class Models(Twin[AsyncModels]):
    """``client.models`` of the sync ``Client``: ``AsyncModels``, called."""

    list = blocking(AsyncModels.list)


class Usage(Twin[AsyncUsage]):
    """``client.usage`` of the sync ``Client``: ``AsyncUsage``, called."""

    get = blocking(AsyncUsage.get)


class AuditEvents(Twin[AsyncAuditEvents]):
    """``client.audit_events`` of the sync ``Client``: ``AsyncAuditEvents``, called."""

    list_page = blocking(AsyncAuditEvents.list_page)
    list = iterated(AsyncAuditEvents.list)


class Events(Twin[AsyncEvents]):
    """``client.events`` of the sync ``Client``: ``AsyncEvents``, called."""

    get = blocking(AsyncEvents.get)
    list_page = blocking(AsyncEvents.list_page)
    list = iterated(AsyncEvents.list)


class ApiKeys(Twin[AsyncApiKeys]):
    """``client.api_keys`` of the sync ``Client``: ``AsyncApiKeys``, called."""

    create = blocking(AsyncApiKeys.create)
    list_page = blocking(AsyncApiKeys.list_page)
    list = iterated(AsyncApiKeys.list)
    get = blocking(AsyncApiKeys.get)
    update = blocking(AsyncApiKeys.update)
    revoke = blocking(AsyncApiKeys.revoke)


class Budgets(Twin[AsyncBudgets]):
    """``client.budgets`` of the sync ``Client``: ``AsyncBudgets``, called."""

    get = blocking(AsyncBudgets.get)
    set = blocking(AsyncBudgets.set)
