"""Webhook endpoints: create, list, read, change, delete, and rotate their signing secret.

A secret is shown only when it is issued (creation and rotation); no view of an endpoint ever carries one."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web

from videogen_api import state
from videogen_api.declare import BODY_ERRORS, WEBHOOK_ID, Endpoint, problem
from videogen_api.middleware import account_of
from videogen_api.problems import conflict, invalid, not_found
from videogen_api.routes.audit import record_change
from videogen_api.routes.bodies import json_body
from videogen_api.schemas.common import parse_body
from videogen_api.schemas.webhooks import (
    RotatedSecret,
    Webhook,
    WebhookCreate,
    WebhookCreated,
    WebhookList,
    WebhookUpdate,
)
from videogen_api.serialize import json_response
from videogen_api.settings import ApiSettings
from videogen_common.audit import AuditEventType
from videogen_common.clock import isoformat
from videogen_common.destinations.addresses import AddressPolicy, refused_host
from videogen_common.ids import new_id
from videogen_common.records.webhook import Secret, WebhookEndpoint
from videogen_common.repositories.deliveries import DeliveryRepository
from videogen_common.repositories.webhooks import WebhookRepository
from videogen_common.scopes import Scope
from videogen_common.signing import new_webhook_secret

routes = web.RouteTableDef()

Doc = dict[str, Any]

# The reason a delivery of a deleted endpoint is failed with (the notifier uses the same words).
ENDPOINT_DELETED = "endpoint deleted"
DISABLED_BY_ACCOUNT = "disabled by the account"
# Concurrent rotations of one endpoint: each re-reads and tries again this many times before a 409.
_ROTATE_TRIES = 3


def webhook_view(endpoint: WebhookEndpoint) -> Doc:
    """A stored webhook as clients see it; the signing secret is never part of it."""
    return {
        "id": endpoint.id,
        "url": endpoint.url,
        "events": list(endpoint.events),
        "active": endpoint.active,
        "disabled_reason": None if endpoint.active else endpoint.disabled_reason,
        "created_at": isoformat(endpoint.created_at),
        "updated_at": isoformat(endpoint.updated_at),
    }


async def owned_webhook(request: web.Request, webhook_id: str) -> WebhookEndpoint:
    """The caller's webhook ``webhook_id``; another account's answers exactly like an unknown one (404)."""
    endpoint = await WebhookRepository(request.app[state.STORE]).owned(webhook_id, account_of(request))
    if endpoint is None:
        raise not_found(f"no webhook {webhook_id!r}")
    return endpoint


def _target(endpoint: WebhookEndpoint) -> tuple[str, str]:
    return "webhook", endpoint.id


def _audited(endpoint: WebhookEndpoint) -> Doc:
    """What the audit trail shows of an endpoint's settings (and of their changes)."""
    return {"url": endpoint.url, "events": list(endpoint.events), "active": endpoint.active}


def _require_deliverable(url: str, settings: ApiSettings) -> None:
    """A URL deliveries could be sent to: https (unless the deployment allows http), and not on an address
    the notifier's destination guard refuses (``VIDEOGEN_WEBHOOK_ALLOW_CIDRS`` opens ranges for both), the
    way image URLs are checked. A name is checked again, after DNS, at each delivery."""
    if urlsplit(url).scheme != "https" and not settings.webhook_allow_http:
        raise invalid([{"field": "url", "message": "must use https", "code": "https_required"}])
    if (why := refused_host(url, AddressPolicy(settings.webhook_networks))) is not None:
        message = f"the URL points at an address deliveries are never sent to ({why})"
        raise invalid([{"field": "url", "message": message, "code": "destination_not_allowed"}])


@routes.post("/v1/webhooks")
@Endpoint(
    operation_id="createWebhook",
    scope=Scope.WEBHOOKS_WRITE,
    tag="Webhooks",
    summary="Register a webhook endpoint",
    description="The answer carries the endpoint's signing secret, shown only here (and on rotation).",
    status=201,
    answer="Created.",
    model=WebhookCreated,
    body=WebhookCreate,
    headers=("Location",),
    errors={
        **BODY_ERRORS,
        409: problem("webhook-limit: the account has as many endpoints as allowed."),
    },
)
async def create_webhook(request: web.Request) -> web.Response:
    app = request.app
    settings = app[state.SETTINGS]
    body = parse_body(WebhookCreate, await json_body(request))
    _require_deliverable(body.url, settings)
    account = account_of(request)
    webhooks = WebhookRepository(app[state.STORE])
    # Checked before the insert, so a refused request writes nothing; concurrent creations by one account can
    # pass the check together, so the cap can be exceeded by at most the number of such racing requests.
    if await webhooks.count_of_account(account) >= settings.max_webhooks_per_account:
        raise conflict(
            f"an account may register at most {settings.max_webhooks_per_account} webhook endpoints; "
            "delete one first",
            slug="webhook-limit",
            title="Webhook limit reached",
        )
    now = app[state.CLOCK].now()
    secret = new_webhook_secret()
    endpoint = WebhookEndpoint(
        id=new_id("wh", now),
        account_id=account,
        url=body.url,
        events=tuple(body.events),
        secrets=(Secret(secret, now),),
        created_at=now,
        updated_at=now,
    )
    await webhooks.insert(endpoint)
    await record_change(
        request,
        AuditEventType.WEBHOOK_CREATED,
        _target(endpoint),
        {"url": endpoint.url, "events": list(endpoint.events)},
    )
    # The secret is shown here, once.
    return json_response(
        {**webhook_view(endpoint), "secret": secret},
        status=201,
        headers={"Location": f"/v1/webhooks/{endpoint.id}"},
    )


@routes.get("/v1/webhooks")
@Endpoint(
    operation_id="listWebhooks",
    scope=Scope.WEBHOOKS_READ,
    tag="Webhooks",
    summary="List webhook endpoints",
    description="All of the account's endpoints, oldest first, without their secrets.",
    status=200,
    answer="The endpoints.",
    model=WebhookList,
)
async def list_webhooks(request: web.Request) -> web.Response:
    endpoints = await WebhookRepository(request.app[state.STORE]).of_account(account_of(request))
    return json_response({"data": [webhook_view(e) for e in endpoints]})


@routes.get("/v1/webhooks/{id}")
@Endpoint(
    operation_id="getWebhook",
    scope=Scope.WEBHOOKS_READ,
    tag="Webhooks",
    summary="Read a webhook endpoint",
    description="Without its secret.",
    status=200,
    answer="The endpoint.",
    model=Webhook,
    parameters=(WEBHOOK_ID,),
    errors={404: "NotFound"},
)
async def get_webhook(request: web.Request) -> web.Response:
    return json_response(webhook_view(await owned_webhook(request, request.match_info["id"])))


@routes.patch("/v1/webhooks/{id}")
@Endpoint(
    operation_id="updateWebhook",
    scope=Scope.WEBHOOKS_WRITE,
    tag="Webhooks",
    summary="Change a webhook endpoint",
    description=(
        "Any of url, events and active, each checked as on creation. active: true re-enables a disabled "
        "endpoint and resets its health; active: false disables it."
    ),
    status=200,
    answer="The changed endpoint.",
    model=Webhook,
    parameters=(WEBHOOK_ID,),
    body=WebhookUpdate,
    errors={**BODY_ERRORS, 404: "NotFound"},
)
async def update_webhook(request: web.Request) -> web.Response:
    """Change any of url, events and active. ``active: true`` re-enables a disabled endpoint (one the
    notifier disabled after a 410, or one the account disabled) and clears why it was disabled."""
    app = request.app
    webhook_id = request.match_info["id"]
    patch = parse_body(WebhookUpdate, await json_body(request))
    if patch.url is not None:
        _require_deliverable(patch.url, app[state.SETTINGS])
    current = await owned_webhook(request, webhook_id)
    # Re-enabling starts the endpoint's circuit breaker afresh (see ``change_settings``).
    endpoint = await WebhookRepository(app[state.STORE]).change_settings(
        current,
        app[state.CLOCK].now(),
        url=patch.url,
        events=patch.events,
        active=patch.active,
        disabled_reason=DISABLED_BY_ACCOUNT,
    )
    if endpoint is None:  # deleted since we read it
        raise not_found(f"no webhook {webhook_id!r}")
    before, after = _audited(current), _audited(endpoint)
    changed = {
        name: {"from": before[name], "to": after[name]} for name in before if before[name] != after[name]
    }
    if changed:
        await record_change(request, AuditEventType.WEBHOOK_UPDATED, _target(endpoint), {"changes": changed})
    return json_response(webhook_view(endpoint))


@routes.delete("/v1/webhooks/{id}")
@Endpoint(
    operation_id="deleteWebhook",
    scope=Scope.WEBHOOKS_WRITE,
    tag="Webhooks",
    summary="Delete a webhook endpoint",
    description="Its pending deliveries fail with reason endpoint deleted; its deliveries stay readable.",
    status=204,
    answer="Deleted.",
    parameters=(WEBHOOK_ID,),
    errors={404: "NotFound"},
)
async def delete_webhook(request: web.Request) -> web.Response:
    """Remove the endpoint, then fail its pending deliveries with reason "endpoint deleted" so its delivery
    log says so at once. (Were this process to stop between the two writes, the notifier fails each of them
    the same way when it next picks it up, because the endpoint is gone.) Its deliveries stay readable
    through GET /v1/deliveries/{id}."""
    app = request.app
    webhook_id = request.match_info["id"]
    account = account_of(request)
    store = app[state.STORE]
    # Read first, for the audit trail (findAndModify would scan on the embedded store).
    endpoint = await owned_webhook(request, webhook_id)
    if not await WebhookRepository(store).delete_owned(webhook_id, account):
        raise not_found(f"no webhook {webhook_id!r}")
    await record_change(
        request,
        AuditEventType.WEBHOOK_DELETED,
        _target(endpoint),
        {"url": endpoint.url, "events": list(endpoint.events)},
    )
    await DeliveryRepository(store).fail_pending_of_endpoint(
        webhook_id, account, ENDPOINT_DELETED, app[state.CLOCK].now()
    )
    return web.Response(status=204)


def rotated_secrets(
    secrets: Sequence[Secret], new_secret: str, now: datetime, overlap: timedelta
) -> list[Secret]:
    """The new secret first; the previous current one (no expiry) now expires after ``overlap``; secrets
    from earlier rotations keep their own expiry; any already expired are dropped."""
    kept = [Secret(new_secret, now)]
    for entry in secrets:
        expires_at = entry.expires_at if entry.expires_at is not None else now + overlap
        if expires_at > now:
            kept.append(Secret(entry.secret, entry.created_at, expires_at))
    return kept


@routes.post("/v1/webhooks/{id}/rotate-secret")
@Endpoint(
    operation_id="rotateWebhookSecret",
    scope=Scope.WEBHOOKS_WRITE,
    tag="Webhooks",
    summary="Rotate an endpoint's signing secret",
    description=(
        "The new secret is shown only here. The previous one keeps signing beside it for the overlap period "
        "(24 h by default), so a receiver can switch at its own pace."
    ),
    status=200,
    answer="The new secret.",
    model=RotatedSecret,
    parameters=(WEBHOOK_ID,),
    errors={404: "NotFound", 409: problem("conflict: the secret was rotated concurrently; try again.")},
)
async def rotate_secret(request: web.Request) -> web.Response:
    """Issue a new signing secret (shown here, once). Until the overlap ends
    (``webhook_secret_overlap_seconds``, 24 h by default) deliveries carry a signature with each live secret,
    so a receiver can switch to the new one at its own pace."""
    app = request.app
    webhook_id = request.match_info["id"]
    overlap = timedelta(seconds=app[state.SETTINGS].webhook_secret_overlap_seconds)
    webhooks = WebhookRepository(app[state.STORE])
    for _ in range(_ROTATE_TRIES):
        endpoint = await owned_webhook(request, webhook_id)
        now = app[state.CLOCK].now()
        secret = new_webhook_secret()
        current = endpoint.current_secret
        # Compare-and-set on the current secret: a concurrent rotation is never silently overwritten.
        rotated = rotated_secrets(endpoint.secrets, secret, now, overlap)
        if await webhooks.replace_secrets(webhook_id, endpoint.account_id, current, rotated, now):
            # When the secret it replaces stops being used to sign; never the secrets themselves.
            data = {"previous_secret_expires_at": isoformat(now + overlap) if current else None}
            await record_change(request, AuditEventType.WEBHOOK_SECRET_ROTATED, _target(endpoint), data)
            return json_response({"id": webhook_id, "secret": secret})
    raise conflict("the secret was rotated concurrently; try again")
