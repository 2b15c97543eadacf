"""POST /v1/webhooks and GET /v1/webhooks."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from aiohttp import web
from pymongo import ASCENDING

from videogen_api import state
from videogen_api.middleware import account_of
from videogen_api.problems import invalid
from videogen_api.routes.bodies import json_body
from videogen_api.schemas import WebhookCreate, parse_body
from videogen_api.serialize import json_response
from videogen_common.clock import isoformat
from videogen_common.ids import new_id
from videogen_common.signing import new_webhook_secret

routes = web.RouteTableDef()


def webhook_view(doc: dict[str, Any]) -> dict[str, Any]:
    """A stored webhook as clients see it; the signing secret is never part of it."""
    return {
        "id": doc["_id"],
        "url": doc["url"],
        "events": doc["events"],
        "active": doc["active"],
        "created_at": isoformat(doc["created_at"]),
    }


@routes.post("/v1/webhooks")
async def create_webhook(request: web.Request) -> web.Response:
    app = request.app
    body = parse_body(WebhookCreate, await json_body(request))
    if urlsplit(body.url).scheme != "https" and not app[state.SETTINGS].webhook_allow_http:
        raise invalid([{"field": "url", "message": "must use https", "code": "https_required"}])
    now = app[state.CLOCK].now()
    secret = new_webhook_secret()
    doc = {
        "_id": new_id("wh", now),
        "account_id": account_of(request),
        "url": body.url,
        "events": [e.value for e in body.events],
        "secrets": [{"secret": secret, "created_at": now, "expires_at": None}],
        "active": True,
        "created_at": now,
        "updated_at": now,
    }
    await app[state.STORE].webhooks.insert_one(doc)
    # The secret is shown here, once.
    return json_response(
        {**webhook_view(doc), "secret": secret},
        status=201,
        headers={"Location": f"/v1/webhooks/{doc['_id']}"},
    )


@routes.get("/v1/webhooks")
async def list_webhooks(request: web.Request) -> web.Response:
    docs = await (
        request.app[state.STORE]
        .webhooks.find({"account_id": account_of(request)})
        .sort([("created_at", ASCENDING), ("_id", ASCENDING)])
        .to_list(None)
    )
    return json_response({"data": [webhook_view(d) for d in docs]})
