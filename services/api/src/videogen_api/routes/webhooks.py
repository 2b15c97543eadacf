"""Webhook endpoints: create, list, read, change, delete, and rotate their signing secret.

A secret is shown only when it is issued (creation and rotation); no view of an endpoint ever carries one."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web
from pymongo import ASCENDING, ReturnDocument

from videogen_api import state
from videogen_api.declare import BODY_ERRORS, WEBHOOK_ID, Endpoint, problem
from videogen_api.middleware import account_of
from videogen_api.problems import conflict, invalid, not_found
from videogen_api.routes.audit import record_change
from videogen_api.routes.bodies import json_body
from videogen_api.schemas import (
    RotatedSecret,
    Webhook,
    WebhookCreate,
    WebhookCreated,
    WebhookList,
    WebhookUpdate,
    parse_body,
)
from videogen_api.serialize import json_response
from videogen_api.settings import ApiSettings
from videogen_common.audit import AuditEventType
from videogen_common.clock import isoformat
from videogen_common.deliveries import FAILED, PENDING
from videogen_common.ids import new_id
from videogen_common.signing import new_webhook_secret

routes = web.RouteTableDef()

Doc = dict[str, Any]

# The reason a delivery of a deleted endpoint is failed with (the notifier uses the same words).
ENDPOINT_DELETED = "endpoint deleted"
DISABLED_BY_ACCOUNT = "disabled by the account"
# Concurrent rotations of one endpoint: each re-reads and tries again this many times before a 409.
_ROTATE_TRIES = 3


def webhook_view(doc: Doc) -> Doc:
    """A stored webhook as clients see it; the signing secret is never part of it."""
    return {
        "id": doc["_id"],
        "url": doc["url"],
        "events": doc["events"],
        "active": doc["active"],
        "disabled_reason": None if doc["active"] else doc.get("disabled_reason"),
        "created_at": isoformat(doc["created_at"]),
        "updated_at": isoformat(doc["updated_at"]),
    }


async def owned_webhook(request: web.Request, webhook_id: str) -> Doc:
    """The caller's webhook ``webhook_id``; another account's answers exactly like an unknown one (404)."""
    doc = await request.app[state.STORE].webhooks.find_one(
        {"_id": webhook_id, "account_id": account_of(request)}
    )
    if doc is None:
        raise not_found(f"no webhook {webhook_id!r}")
    return doc


def _target(doc: Doc) -> tuple[str, str]:
    return "webhook", doc["_id"]


def _require_https(url: str, settings: ApiSettings) -> None:
    if urlsplit(url).scheme != "https" and not settings.webhook_allow_http:
        raise invalid([{"field": "url", "message": "must use https", "code": "https_required"}])


@routes.post("/v1/webhooks")
@Endpoint(
    operation_id="createWebhook",
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
    _require_https(body.url, settings)
    account = account_of(request)
    store = app[state.STORE]
    # Checked before the insert, so a refused request writes nothing; concurrent creations by one account can
    # pass the check together, so the cap can be exceeded by at most the number of such racing requests.
    if await store.webhooks.count_documents({"account_id": account}) >= settings.max_webhooks_per_account:
        raise conflict(
            f"an account may register at most {settings.max_webhooks_per_account} webhook endpoints; "
            "delete one first",
            slug="webhook-limit",
            title="Webhook limit reached",
        )
    now = app[state.CLOCK].now()
    secret = new_webhook_secret()
    doc = {
        "_id": new_id("wh", now),
        "account_id": account,
        "url": body.url,
        "events": [e.value for e in body.events],
        "secrets": [{"secret": secret, "created_at": now, "expires_at": None}],
        "active": True,
        "created_at": now,
        "updated_at": now,
    }
    await store.webhooks.insert_one(doc)
    await record_change(
        request, AuditEventType.WEBHOOK_CREATED, _target(doc), {"url": doc["url"], "events": doc["events"]}
    )
    # The secret is shown here, once.
    return json_response(
        {**webhook_view(doc), "secret": secret},
        status=201,
        headers={"Location": f"/v1/webhooks/{doc['_id']}"},
    )


@routes.get("/v1/webhooks")
@Endpoint(
    operation_id="listWebhooks",
    tag="Webhooks",
    summary="List webhook endpoints",
    description="All of the account's endpoints, oldest first, without their secrets.",
    status=200,
    answer="The endpoints.",
    model=WebhookList,
)
async def list_webhooks(request: web.Request) -> web.Response:
    docs = await (
        request.app[state.STORE]
        .webhooks.find({"account_id": account_of(request)})
        .sort([("created_at", ASCENDING), ("_id", ASCENDING)])
        .to_list(None)
    )
    return json_response({"data": [webhook_view(d) for d in docs]})


@routes.get("/v1/webhooks/{id}")
@Endpoint(
    operation_id="getWebhook",
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
        _require_https(patch.url, app[state.SETTINGS])
    current = await owned_webhook(request, webhook_id)
    now = app[state.CLOCK].now()
    changes: Doc = {"updated_at": now}
    removals: Doc = {}
    if patch.url is not None:
        changes["url"] = patch.url
    if patch.events is not None:
        changes["events"] = [e.value for e in patch.events]
    if patch.active is True and not current["active"]:
        changes["active"] = True
        removals = {"health": ""}  # the notifier's run of failures (circuit breaker) starts afresh
        # While the notifier still owes the account its webhook.disabled notice (``notice_pending``: it
        # stopped between disabling and recording it), it needs why and when; they are not shown once active.
        if not current.get("notice_pending"):
            removals.update(disabled_reason="", disabled_at="")
    elif patch.active is False and current["active"]:
        changes.update(active=False, disabled_reason=DISABLED_BY_ACCOUNT, disabled_at=now)
    update: Doc = {"$set": changes}
    if removals:
        update["$unset"] = removals
    doc = await app[state.STORE].webhooks.find_one_and_update(
        {"_id": webhook_id, "account_id": account_of(request)}, update, return_document=ReturnDocument.AFTER
    )
    if doc is None:  # deleted since we read it
        raise not_found(f"no webhook {webhook_id!r}")
    changed = {
        name: {"from": current.get(name), "to": doc.get(name)}
        for name in ("url", "events", "active")
        if current.get(name) != doc.get(name)
    }
    if changed:
        await record_change(request, AuditEventType.WEBHOOK_UPDATED, _target(doc), {"changes": changed})
    return json_response(webhook_view(doc))


@routes.delete("/v1/webhooks/{id}")
@Endpoint(
    operation_id="deleteWebhook",
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
    doc = await owned_webhook(request, webhook_id)
    deleted = await store.webhooks.delete_one({"_id": webhook_id, "account_id": account})
    if deleted.deleted_count == 0:
        raise not_found(f"no webhook {webhook_id!r}")
    await record_change(
        request,
        AuditEventType.WEBHOOK_DELETED,
        _target(doc),
        {"url": doc["url"], "events": doc["events"]},
    )
    await store.deliveries.update_many(
        {"webhook_id": webhook_id, "account_id": account, "status": PENDING},
        {
            "$set": {
                "status": FAILED,
                "next_attempt_at": None,
                "failure_reason": ENDPOINT_DELETED,
                "updated_at": app[state.CLOCK].now(),
            }
        },
    )
    return web.Response(status=204)


def rotated_secrets(secrets: list[Doc], new_secret: str, now: datetime, overlap: timedelta) -> list[Doc]:
    """The new secret first; the previous current one (no expiry) now expires after ``overlap``; secrets
    from earlier rotations keep their own expiry; any already expired are dropped."""
    kept: list[Doc] = [{"secret": new_secret, "created_at": now, "expires_at": None}]
    for entry in secrets:
        expires_at = entry.get("expires_at")
        if expires_at is None:
            expires_at = now + overlap
        if expires_at > now:
            kept.append({**entry, "expires_at": expires_at})
    return kept


@routes.post("/v1/webhooks/{id}/rotate-secret")
@Endpoint(
    operation_id="rotateWebhookSecret",
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
    for _ in range(_ROTATE_TRIES):
        doc = await owned_webhook(request, webhook_id)
        now = app[state.CLOCK].now()
        secret = new_webhook_secret()
        current = doc["secrets"][0]["secret"] if doc["secrets"] else None
        # Compare-and-set on the current secret: a concurrent rotation is never silently overwritten.
        result = await app[state.STORE].webhooks.update_one(
            {"_id": webhook_id, "account_id": doc["account_id"], "secrets.0.secret": current},
            {"$set": {"secrets": rotated_secrets(doc["secrets"], secret, now, overlap), "updated_at": now}},
        )
        if result.modified_count == 1:
            # When the secret it replaces stops being used to sign; never the secrets themselves.
            data = {"previous_secret_expires_at": isoformat(now + overlap) if current else None}
            await record_change(request, AuditEventType.WEBHOOK_SECRET_ROTATED, _target(doc), data)
            return json_response({"id": webhook_id, "secret": secret})
    raise conflict("the secret was rotated concurrently; try again")
