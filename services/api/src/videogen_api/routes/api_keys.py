"""An account's API keys as a resource: make one (its secret answered once), list and read them, change a
key's name and budgets, revoke one. Only a key's hash is stored, with its last four characters to tell it by.

No key can give what it does not hold: a key makes, changes or revokes only keys whose scopes it holds itself,
and one with budgets of its own gives no key more than them (``_within_own_budgets``). Every change is an
audit event."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from datetime import datetime
from typing import Any

from aiohttp import web
from pydantic import BaseModel, ConfigDict

from videogen_api import state
from videogen_api.auth import Caller
from videogen_api.declare import BODY_ERRORS, KEY_ID, Endpoint, problem
from videogen_api.middleware import account_of, caller_of
from videogen_api.paging import DEFAULT_LIMIT, Cursor, Limit, page_from
from videogen_api.problems import conflict, insufficient_scope, invalid, not_found
from videogen_api.query import parse_query
from videogen_api.routes.audit import record_change
from videogen_api.routes.bodies import json_body
from videogen_api.schemas.budgets import BudgetLimits
from videogen_api.schemas.common import parse_body
from videogen_api.schemas.keys import ApiKey as ApiKeyModel
from videogen_api.schemas.keys import ApiKeyCreate, ApiKeyCreated, ApiKeyList, ApiKeyUpdate
from videogen_api.serialize import json_response
from videogen_api.spend import start_counting
from videogen_common.audit import AuditEventType
from videogen_common.budgets import BY_NAME, Limits, to_api
from videogen_common.clock import isoformat
from videogen_common.ids import new_id
from videogen_common.records.api_key import ApiKey
from videogen_common.repositories.keys import ApiKeyRepository
from videogen_common.scopes import ALL_SCOPES, Scope, canonical
from videogen_common.signing import API_KEY_PREFIX, hash_api_key, new_api_key

routes = web.RouteTableDef()

Doc = dict[str, Any]

_SCOPE_403 = problem(
    "insufficient-scope: the key making the request lacks a scope this needs, or one the key asked for or "
    "acted on holds (a key gives and touches only what it holds itself); nothing was done."
)


def key_view(key: ApiKey) -> Doc:
    """A key as the account sees it: never its secret or hash."""
    return {
        "id": key.id,
        "name": key.name,
        "scopes": list(key.scopes) if key.scopes is not None else canonical(ALL_SCOPES),
        "prefix": API_KEY_PREFIX,
        "last_four": key.last_four,
        "budgets": key.budgets.view(),
        "created_at": isoformat(key.created_at),
        "last_used_at": _moment(key.last_used_at),
        "expires_at": _moment(key.expires_at),
        "revoked_at": _moment(key.revoked_at),
    }


def _moment(value: datetime | None) -> str | None:
    return None if value is None else isoformat(value)


def _audited(key: ApiKey) -> Doc:
    """What the audit trail shows of a key's settings (and of their changes)."""
    return {"name": key.name, "budgets": key.budgets.view()}


def _holding(caller: Caller, scopes: Collection[Scope], what: str) -> None:
    """403 unless ``caller`` holds every one of ``scopes`` (and so what they hold: a key's scopes are closed
    under what each holds)."""
    missing = [s for s in Scope if s in scopes and s not in caller.scopes]
    if missing:
        names = ", ".join(s.value for s in missing)
        detail = f"{what} holds {names}, which the key making this request does not"
        raise insufficient_scope(missing[0].value, detail)


def _scopes_of(key: ApiKey) -> Collection[Scope]:
    return (
        ALL_SCOPES if key.scopes is None else [Scope(s) for s in key.scopes if s in Scope._value2member_map_]
    )


def _within_own_budgets(caller: Caller, limits: Limits) -> None:
    """422 unless ``limits`` stays within each budget of ``caller``'s own key (an unlimited one passes)."""
    errors = []
    for name, own in caller.budgets.values.items():
        given = limits.values.get(name)
        if given is None or given > own:
            most = to_api(BY_NAME[name].meter, own)
            errors.append(
                {
                    "field": f"budgets.{name}",
                    "message": f"must be at most {most}, the budget of the key making this request",
                    "code": "above_own_budget",
                }
            )
    if errors:
        raise invalid(errors)


async def _owned(request: web.Request) -> ApiKey:
    key_id = request.match_info["id"]
    found = await ApiKeyRepository(request.app[state.STORE]).owned(key_id, account_of(request))
    if found is None:
        raise not_found(f"no API key {key_id!r}")
    return found


@routes.post("/v1/api-keys")
@Endpoint(
    operation_id="createApiKey",
    scope=Scope.KEYS_WRITE,
    tag="Account",
    summary="Make an API key",
    description=(
        "A new key of the account, with the scopes given (at most those of the key making it), an optional "
        "expiry and optional budgets of its own (at most those of the key making it). The answer carries the "
        "key itself, in secret: shown only here. Only its hash is kept."
    ),
    status=201,
    answer="Made: the key, and its secret, shown once.",
    model=ApiKeyCreated,
    body=ApiKeyCreate,
    headers=("Location",),
    errors={**BODY_ERRORS, 403: _SCOPE_403},
)
async def create_api_key(request: web.Request) -> web.Response:
    app = request.app
    body = parse_body(ApiKeyCreate, await json_body(request))
    caller = caller_of(request)
    _holding(caller, body.scopes, "the key asked for")
    now = app[state.CLOCK].now()
    if body.expires_at is not None and body.expires_at <= now:
        raise invalid([{"field": "expires_at", "message": "must be in the future", "code": "expired"}])
    limits = body.budgets.limits() if body.budgets is not None else Limits()
    _within_own_budgets(caller, limits)
    secret = new_api_key()
    key = ApiKey(
        id=new_id("key", now),
        key_hash=hash_api_key(secret),
        account_id=account_of(request),
        created_at=now,
        name=body.name,
        scopes=tuple(canonical(body.scopes)),
        last_four=secret[-4:],
        expires_at=body.expires_at,
        budgets=limits,
    )
    await ApiKeyRepository(app[state.STORE]).insert(key)
    data = {"name": key.name, "scopes": list(key.scopes or ()), "expires_at": _moment(key.expires_at)}
    await record_change(
        request, AuditEventType.API_KEY_CREATED, ("api_key", key.id), {**data, "budgets": limits.view()}
    )
    # The secret is shown here, once.
    return json_response(
        {**key_view(key), "secret": secret}, status=201, headers={"Location": f"/v1/api-keys/{key.id}"}
    )


class KeyListing(BaseModel):
    """GET /v1/api-keys's query string: limit and cursor."""

    model_config = ConfigDict(frozen=True)

    limit: Limit = DEFAULT_LIMIT
    cursor: Cursor = None


def _position(key: ApiKey) -> tuple[datetime, str]:
    return key.created_at, key.id


@routes.get("/v1/api-keys")
@Endpoint(
    operation_id="listApiKeys",
    scope=Scope.KEYS_READ,
    tag="Account",
    summary="List the account's API keys",
    description="Newest first, revoked ones too: never a secret, only each key's prefix and last four.",
    status=200,
    answer="A page of keys.",
    model=ApiKeyList,
    query=KeyListing,
    errors={422: "Invalid"},
)
async def list_api_keys(request: web.Request) -> web.Response:
    listing = parse_query(KeyListing, request.query)
    account, keys = account_of(request), ApiKeyRepository(request.app[state.STORE])
    return json_response(
        await page_from(
            lambda position, limit: keys.page_of_account(account, position, limit),
            listing,
            key_view,
            _position,
        )
    )


@routes.get("/v1/api-keys/{id}")
@Endpoint(
    operation_id="getApiKey",
    scope=Scope.KEYS_READ,
    tag="Account",
    summary="Read an API key",
    description="Another account's key answers exactly like an unknown one.",
    status=200,
    answer="The key.",
    model=ApiKeyModel,
    parameters=(KEY_ID,),
    errors={404: "NotFound"},
)
async def get_api_key(request: web.Request) -> web.Response:
    return json_response(key_view(await _owned(request)))


@routes.patch("/v1/api-keys/{id}")
@Endpoint(
    operation_id="updateApiKey",
    scope=Scope.KEYS_WRITE,
    tag="Account",
    summary="Change an API key's name or budgets",
    description=(
        "Its name, its own budgets (replaced as a whole, same fields as PUT /v1/budgets; at most those of "
        "the key making the request), or both; a key holding scopes the requesting key lacks is a 403. The "
        "change reaches every api replica within the key cache's bound (5 s by default)."
    ),
    status=200,
    answer="The changed key.",
    model=ApiKeyModel,
    parameters=(KEY_ID,),
    body=ApiKeyUpdate,
    errors={
        **BODY_ERRORS,
        403: _SCOPE_403,
        404: "NotFound",
        409: problem("api-key-revoked: a revoked key cannot change."),
    },
)
async def update_api_key(request: web.Request) -> web.Response:
    app = request.app
    patch = parse_body(ApiKeyUpdate, await json_body(request))
    caller = caller_of(request)
    current = await _owned(request)
    _holding(caller, _scopes_of(current), "that key")
    if current.revoked_at is not None:
        raise _revoked(current)
    limits = _limits(patch.budgets)
    if limits is not None:
        _within_own_budgets(caller, limits)
        if limits.meters() - current.budgets.meters():  # a meter nothing limited: count the month's use
            now = app[state.CLOCK].now()
            await start_counting(
                app[state.STORE],
                account_id=current.account_id,
                owner=current.id,
                api_key_id=current.id,
                now=now,
            )
    if not await ApiKeyRepository(app[state.STORE]).change(current, name=patch.name, budgets=limits):
        raise _revoked(current)
    app[state.KEYS].forget(current.id)
    changed = dataclasses.replace(
        current,
        name=patch.name if patch.name is not None else current.name,
        budgets=limits if limits is not None else current.budgets,
    )
    before, after = _audited(current), _audited(changed)
    changes = {
        name: {"from": before[name], "to": after[name]} for name in before if before[name] != after[name]
    }
    if changes:
        await record_change(
            request, AuditEventType.API_KEY_UPDATED, ("api_key", current.id), {"changes": changes}
        )
    return json_response(key_view(changed))


def _limits(budgets: BudgetLimits | None) -> Limits | None:
    return None if budgets is None else budgets.limits()


def _revoked(key: ApiKey) -> Exception:
    return conflict(f"API key {key.id!r} was revoked", slug="api-key-revoked", title="API key revoked")


@routes.delete("/v1/api-keys/{id}")
@Endpoint(
    operation_id="revokeApiKey",
    scope=Scope.KEYS_WRITE,
    tag="Account",
    summary="Revoke an API key",
    description=(
        "It stops working at once on the api replica that answers, and on every other within the key "
        "cache's bound (VIDEOGEN_API_KEY_CACHE_SECONDS, 5 s by default). Revoking a revoked key changes "
        "nothing. A key holding scopes the requesting key lacks is a 403; a key may revoke itself."
    ),
    status=200,
    answer="The revoked key.",
    model=ApiKeyModel,
    parameters=(KEY_ID,),
    errors={403: _SCOPE_403, 404: "NotFound"},
)
async def revoke_api_key(request: web.Request) -> web.Response:
    app = request.app
    current = await _owned(request)
    _holding(caller_of(request), _scopes_of(current), "that key")
    if current.revoked_at is not None:
        return json_response(key_view(current))
    now = app[state.CLOCK].now()
    revoked = await ApiKeyRepository(app[state.STORE]).revoke(current.id, now)
    app[state.KEYS].forget(current.id)
    if revoked:
        await record_change(
            request, AuditEventType.API_KEY_REVOKED, ("api_key", current.id), {"name": current.name}
        )
    found = await ApiKeyRepository(app[state.STORE]).owned(current.id, current.account_id)
    return json_response(key_view(found or dataclasses.replace(current, revoked_at=now)))
