"""POST /v1/provider-callbacks/{provider}/{token}: where Luma (``callback_url``) and fal (``webhook_url``)
call back about a task, when the orchestrator runs with provider callbacks on (docs/providers.md).

A callback is only a wake-up. Its token (``videogen_common.provider_callbacks``) names the generation and is
checked here without reading the store; a good one is handed to the orchestrator on the callbacks topic, and
the orchestrator running the generation reads the task from the provider before acting on it. So what a
callback says is never believed: a forged, replayed or late one costs at most one read of the task, and
completes nothing. A token we did not issue, a provider we do not know, or a task already finished: 200, and
nothing else happens (the provider stops sending). fal's calls are signed (``fal_keys``): a signature that
does not verify is answered 401 problem+json, and fal sends the call again."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

from aiohttp import web

from videogen_api import state
from videogen_api.declare import Endpoint, Parameter, problem
from videogen_api.fal_keys import FalKeys
from videogen_api.problems import Problem
from videogen_api.schemas.callbacks import CallbackReceived
from videogen_api.serialize import json_response
from videogen_common.domain import Provider
from videogen_common.provider_callbacks import CALLBACK_PATH, verify_token

log = logging.getLogger(__name__)
routes = web.RouteTableDef()

FAL_KEYS = web.AppKey("fal_keys", FalKeys)
# The providers that call back, and whether their calls are signed by fal.
_CALLING_BACK = {Provider.LUMA.value: False, Provider.PIKA.value: True}


def invalid_signature() -> Problem:
    return Problem(
        401,
        "invalid-signature",
        "Invalid signature",
        "the call does not carry a valid fal webhook signature made within five minutes",
    )


PROVIDER = Parameter(
    "CallbackProvider",
    {
        "name": "provider",
        "in": "path",
        "required": True,
        "description": "The provider the callback URL was given to: luma, or pika (through fal).",
        "schema": {"type": "string"},
    },
)
TOKEN = Parameter(
    "CallbackToken",
    {
        "name": "token",
        "in": "path",
        "required": True,
        "description": "The task's token, as in the callback URL the provider was given.",
        "schema": {"type": "string"},
    },
)


async def fal_keys(app: web.Application) -> AsyncIterator[None]:
    """fal's webhook keys (fetched on the first signed call), closed with the application."""
    settings = app[state.SETTINGS]
    keys = FalKeys(
        settings.fal_jwks_url,
        cache_seconds=settings.fal_jwks_cache_seconds,
        refetch_seconds=settings.fal_jwks_refetch_seconds,
    )
    app[FAL_KEYS] = keys
    try:
        yield
    finally:
        await keys.close()


@routes.post(CALLBACK_PATH + "/{provider}/{token}")
@Endpoint(
    operation_id="providerCallback",
    tag="Provider callbacks",
    summary="A provider calls back about a task",
    description=(
        "Called by the video providers, not by clients: Luma posts the Generation here on each state change "
        "(unsigned: the URL's token is the credential), fal posts a request's result, signed with ED25519 "
        "against its published keys (`X-Fal-Webhook-*` headers). A callback only wakes the generation's "
        "orchestrator, which reads the task from the provider before acting on it. An unknown token or a "
        "finished task is answered 200 and ignored."
    ),
    status=200,
    answer="Taken (whether or not it named a task we run).",
    model=CallbackReceived,
    parameters=(PROVIDER, TOKEN),
    raw_body={
        "required": False,
        "content": {"application/json": {"schema": {"type": "object"}}},
    },
    errors={
        401: problem("invalid-signature: a call to a fal callback URL whose signature does not verify."),
        413: "PayloadTooLarge",
    },
    public=True,
)
async def provider_callback(request: web.Request) -> web.Response:
    provider, token = request.match_info["provider"], request.match_info["token"]
    app = request.app
    body = await request.read()
    signed = _CALLING_BACK.get(provider)
    if signed:
        now = app[state.CLOCK].now().timestamp()
        if not await app[FAL_KEYS].verify(request.headers, body, now):
            raise invalid_signature()
    wake = verify_token(app[state.SETTINGS].media_signing_key.get_secret_value(), provider, token)
    if signed is None or wake is None:
        log.info("ignored a provider callback naming no task of ours", extra={"provider": provider})
        return json_response(CallbackReceived().model_dump())
    await app[state.PUBLISHER].wake(wake)
    return json_response(CallbackReceived().model_dump())
