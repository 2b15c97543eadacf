"""The API's OpenAPI 3.1 document, served as GET /openapi.json and shown by the viewer at GET /docs
(``routes.reference``).

It is built once, when the application is created, by walking its router: every route whose handler carries a
declaration (``declare.Endpoint``, beside the handler) is an operation, with the query parameters of its
query model (``query``), its body and answer models from ``schemas`` (one module per resource), and the errors
it declares. Every /v1 route must be declared. Here are only what all operations share: the response
headers, the common problem responses, the tags and the security scheme. The deployment's own limits (prompt
length, body size, whether webhook URLs may be plain http) are written in from its settings.

Neither needs an API key. Tests hold the document to the router (every /v1 route documented, nothing
documented that is not routed) and fuzz the live API from the served document (schemathesis)."""

from __future__ import annotations

from collections.abc import Iterator
from copy import deepcopy
from typing import Any

from aiohttp import web
from pydantic import BaseModel

from videogen_api import query, routes
from videogen_api.declare import (
    JSON,
    REF_TEMPLATE,
    REQUEST_ID,
    REQUEST_ID_HEADER,
    Endpoint,
    declared,
    header_ref,
    problem,
    ref,
    with_headers,
)
from videogen_api.idempotency import REPLAYED_HEADER
from videogen_api.middleware import _CLIENT_ID
from videogen_api.prefer import PREFERENCE_APPLIED
from videogen_api.ratelimit import LIMIT_HEADER, POLICY_HEADER
from videogen_api.schemas.batches import BatchProblem
from videogen_api.schemas.budgets import BudgetProblem
from videogen_api.schemas.common import CATALOG, Problem, ValidationProblem
from videogen_api.schemas.keys import ScopeProblem
from videogen_api.settings import ApiSettings
from videogen_common.event_types import EVENT_TYPES
from videogen_common.scopes import SCOPES

Doc = dict[str, Any]

OPENAPI_VERSION = "3.1.0"
API_VERSION = "1"
SECURITY_SCHEME = "bearer"
RATE_LIMIT_HEADERS = (POLICY_HEADER, LIMIT_HEADER)

_TAGS = (
    ("Generations", "Submit prompts and follow the videos they become."),
    ("Batches", "Many generations submitted in one call, followed as one object, with one results file."),
    ("Webhooks", "Endpoints that receive signed POSTs when a video completes or fails."),
    ("Deliveries", "Each event's delivery to each endpoint: the log, and what queues it again."),
    ("Events", "What happened on the account, as its webhooks deliver it."),
    ("Account", "What the account made and may spend, its API keys, and who changed what."),
    ("Media", "The files behind the signed links in a generation."),
    ("Provider callbacks", "Where the video providers call back about their tasks (not for clients)."),
)


# --- The operations, from the router ---------------------------------------------------------------------


def _default_router() -> web.UrlDispatcher:
    app = web.Application()
    for table in routes.TABLES:
        app.add_routes(table)
    return app.router


def endpoints(router: web.UrlDispatcher) -> Iterator[tuple[str, str, Endpoint]]:
    """(method, path, declaration) of every declared route; a /v1 route without a declaration is an error."""
    for route in router.routes():
        # aiohttp answers HEAD for every GET by itself, with the same handler.
        if route.resource is None or route.method == "HEAD":
            continue
        path = route.resource.canonical
        endpoint = declared(route.handler)
        if endpoint is None:
            if path.startswith("/v1/"):
                raise ValueError(f"{route.method} {path} has no declaration (declare.Endpoint)")
            continue
        if endpoint.scope is None and not endpoint.public:
            raise ValueError(f"{route.method} {path} declares no scope (declare.Endpoint(scope=...))")
        yield route.method.lower(), path, endpoint


def _parameter_names(endpoint: Endpoint) -> list[str]:
    names = [p.component for p in endpoint.parameters]
    if endpoint.query is not None:
        names += list(query.parameters(endpoint.query))
    return [*names, REQUEST_ID_HEADER.component]


def _operation(op: Endpoint, *, rate_limited: bool) -> Doc:
    """``rate_limited``: the deployment limits request rates, so an authenticated operation answers with the
    rate limit headers, and may answer 429."""
    limits = rate_limited and not op.public
    names = (REQUEST_ID, *op.headers, *(RATE_LIMIT_HEADERS if limits else ()))
    success: Doc = {"description": op.answer, "headers": {name: header_ref(name) for name in names}}
    if op.model is not None:
        success["content"] = {JSON: {"schema": ref(op.model)}}
    elif op.content is not None:
        success["content"] = deepcopy(op.content)
    errors: dict[int, str | Doc] = {} if op.public else {401: "Unauthorized", 403: "InsufficientScope"}
    if limits:
        errors[429] = "RateLimited"
    if op.spends_budget:
        over = with_headers(
            problem(
                "budget-exceeded: the generation would pass one of the account's or the key's budgets (named "
                "in budget and api_key_id, with what is left and when it resets); nothing was written."
                + (" rate-limited: the account's request quota is spent." if limits else ""),
                *((Problem,) if limits else ()),
                BudgetProblem,
            ),
            "Retry-After",
            *(RATE_LIMIT_HEADERS if limits else ()),
        )
        errors[429] = over
    if op.stream:  # streams are bounded per account, with or without rate limits
        streams = "too-many-streams: the account holds as many event streams open here as it may."
        errors[429] = (
            with_headers(
                problem("rate-limited: the account's request quota is spent; " + streams),
                "Retry-After",
                *RATE_LIMIT_HEADERS,
            )
            if limits
            else with_headers(problem(streams), "Retry-After")
        )
    errors.update(op.errors)
    responses: Doc = {str(op.status): success}
    for status, response in sorted(errors.items()):
        if isinstance(response, str):
            responses[str(status)] = {"$ref": f"#/components/responses/{response}"}
        else:  # each document its own copy
            responses[str(status)] = deepcopy(response)
    out: Doc = {
        "operationId": op.operation_id,
        "tags": [op.tag],
        "summary": op.summary,
        "description": op.description,
        "parameters": [{"$ref": f"#/components/parameters/{name}"} for name in _parameter_names(op)],
    }
    if op.body is not None:
        out["requestBody"] = {"required": True, "content": {JSON: {"schema": ref(op.body)}}}
    elif op.raw_body is not None:
        out["requestBody"] = deepcopy(op.raw_body)
    out["responses"] = responses
    if op.public:
        out["security"] = []
    elif op.scope is not None:
        # The scope a key needs, as the security requirement's role (OpenAPI 3.1 allows one for any scheme)
        # and as its own field for tools that read only OAuth scopes.
        out["security"] = [{SECURITY_SCHEME: [op.scope.value]}]
        out["x-required-scope"] = op.scope.value
    return out


# --- Components ---------------------------------------------------------------------------------------------


def _add(components: Doc, kind: str, name: str, value: Doc) -> None:
    if components.setdefault(name, value) != value:
        raise ValueError(f"two different {kind} are both called {name!r}")


def _parameters(ops: list[Endpoint]) -> Doc:
    """Every operation's path, header and query parameters, each once, by component name."""
    found: Doc = {}
    _add(found, "parameters", REQUEST_ID_HEADER.component, deepcopy(dict(REQUEST_ID_HEADER.doc)))
    for op in ops:
        for parameter in op.parameters:
            _add(found, "parameters", parameter.component, deepcopy(dict(parameter.doc)))
        if op.query is not None:
            for name, doc in query.parameters(op.query).items():
                _add(found, "parameters", name, doc)
    return dict(sorted(found.items()))


def _schemas(settings: ApiSettings, ops: list[Endpoint]) -> Doc:
    """Every body's and answer's model's JSON schema, with the models it nests (pydantic's ``$defs``) as
    components beside it."""
    schemas: Doc = {}
    models: dict[type[BaseModel], None] = {}
    for op in ops:
        models.update((m, None) for m in (op.body, op.model) if m is not None)
    problems: tuple[type[BaseModel], ...] = (
        Problem,
        ValidationProblem,
        ScopeProblem,
        BudgetProblem,
        BatchProblem,
    )
    for model in (*models, *problems):
        schema = model.model_json_schema(ref_template=REF_TEMPLATE)
        for name, nested in schema.pop("$defs", {}).items():
            _add(schemas, "schemas", name, nested)
        _add(schemas, "schemas", model.__name__, schema)
    catalogs = catalog_schemas()
    for name in list(schemas):
        schemas[name] = refer_to_catalogs(schemas[name], catalogs)
    schemas.update(catalogs)
    # The deployment's limits, which the handlers check beyond the models.
    prompt = schemas["GenerateRequest"]["properties"]["prompt"]
    prompt["maxLength"] = settings.prompt_max_chars
    prompt["description"] += f" Not blank; at most {settings.prompt_max_chars} characters."
    retention = schemas["GenerateRequest"]["properties"]["retention_days"]
    for branch in retention["anyOf"]:
        if branch.get("type") == "integer":
            branch["maximum"] = settings.media_retention_days
    for name in ("WebhookCreate", "WebhookUpdate"):
        url = schemas[name]["properties"]["url"]
        scheme = "http(s)" if settings.webhook_allow_http else "https"
        if not settings.webhook_allow_http:
            url["pattern"] = url["pattern"].replace("[Ss]?", "[Ss]")
        url["description"] = (
            f"An absolute {scheme} URL with a host and no credentials, whose host is not an address "
            "deliveries are refused (private, loopback, link-local and other special-purpose ranges, "
            "localhost): a 422 with code destination_not_allowed."
        )
    return dict(sorted(schemas.items()))


def refer_to_catalogs(schema: Any, catalogs: Doc) -> Any:
    """``schema`` with each part marked as a catalog's (``schemas.CATALOG``) replaced by a reference to it."""
    if isinstance(schema, dict):
        name = schema.get(CATALOG)
        if name is not None:
            if name not in catalogs:
                raise ValueError(f"no catalog {name!r}")
            return {"$ref": REF_TEMPLATE.format(model=name)}
        return {key: refer_to_catalogs(value, catalogs) for key, value in schema.items()}
    if isinstance(schema, list):
        return [refer_to_catalogs(item, catalogs) for item in schema]
    return schema


def catalog_schemas() -> Doc:
    """The closed lists whose values are read when the document is built rather than when the models were
    defined, each one component the models refer to: the event types endpoints may subscribe to, from the
    catalog (``videogen_common.event_types``), so a type defined since is one."""
    subscribable = [event_type for event_type in EVENT_TYPES if event_type.subscribable]
    return {
        "EventType": {
            "title": "EventType",
            "type": "string",
            "enum": [event_type.name for event_type in subscribable],
            "description": "What an endpoint can subscribe to: "
            + "; ".join(f"{t.name}: {t.description}" for t in subscribable),
        }
    }


def _headers() -> Doc:
    return {
        REQUEST_ID: {
            "description": "The request's id: the one sent, if well-formed, or one made up. Quote it when "
            "asking about a request.",
            "required": True,
            "schema": {"type": "string", "pattern": _CLIENT_ID.pattern},
        },
        PREFERENCE_APPLIED: {
            "description": "wait=N when the request's Prefer: wait=N was honoured (N as applied).",
            "schema": {"type": "string", "pattern": "^wait=[0-9]+$"},
        },
        "Location": {
            "description": "The path of what was created or queued.",
            "required": True,
            "schema": {"type": "string"},
        },
        REPLAYED_HEADER: {
            "description": "true when this is the saved answer to an earlier request with the same key.",
            "schema": {"type": "string", "enum": ["true"]},
        },
        "WWW-Authenticate": {
            "description": "The authentication scheme: Bearer.",
            "required": True,
            "schema": {"type": "string"},
        },
        POLICY_HEADER: {
            "description": "The account's rate limit policy that this request spends (IETF "
            'draft-ietf-httpapi-ratelimit-headers-10), e.g. "generate";q=50;w=1: q requests per window of w '
            "seconds. POST /v1/generate spends the generate policy, every other request the default one. On "
            "every answer to an authenticated request.",
            "required": True,
            "schema": {"type": "string", "pattern": r'^"[a-z-]+";q=[0-9]+;w=[0-9]+$'},
        },
        LIMIT_HEADER: {
            "description": 'What is left of it, e.g. "generate";r=42;t=1: r more requests in this window, '
            "which ends in t seconds. On every answer to an authenticated request.",
            "required": True,
            "schema": {"type": "string", "pattern": r'^"[a-z-]+";r=[0-9]+;t=[0-9]+$'},
        },
        "Retry-After": {
            "description": "Seconds to wait before trying again: until the rate limit window ends.",
            "required": True,
            "schema": {"type": "string", "pattern": "^[1-9][0-9]*$"},
        },
    }


def _responses(settings: ApiSettings) -> Doc:
    unauthorized = problem("unauthorized: the API key is missing, malformed, unknown or revoked.")
    unauthorized["headers"]["WWW-Authenticate"] = header_ref("WWW-Authenticate")
    rate_limited = problem(
        "rate-limited: the account has spent this policy's quota for the current window; retry after "
        "Retry-After seconds."
    )
    for name in ("Retry-After", *RATE_LIMIT_HEADERS):
        rate_limited["headers"][name] = header_ref(name)
    return {
        "MalformedJson": problem("malformed-json: the body is not JSON."),
        "Unauthorized": unauthorized,
        "InsufficientScope": problem(
            "insufficient-scope: the API key does not hold the scope this operation needs (named in scope); "
            "nothing was done.",
            ScopeProblem,
        ),
        "NotFound": problem("not-found: no such resource for this account."),
        "PayloadTooLarge": problem(f"payload-too-large: the body is over {settings.max_body_bytes} bytes."),
        "UnsupportedMediaType": problem("unsupported-media-type: the body is not sent as application/json."),
        "Invalid": problem(
            "validation-error: a field, parameter or header is invalid; errors names each one.",
            ValidationProblem,
        ),
        "RateLimited": rate_limited,
    }


# --- The document -------------------------------------------------------------------------------------------


def build_document(settings: ApiSettings, router: web.UrlDispatcher | None = None) -> Doc:
    """The document of the routes of ``router`` (by default, of every route table the application serves)."""
    paths: Doc = {}
    ops: list[Endpoint] = []
    for method, path, op in endpoints(router or _default_router()):
        paths.setdefault(path, {})[method] = _operation(op, rate_limited=settings.rate_limit_enabled)
        ops.append(op)
    return {
        "openapi": OPENAPI_VERSION,
        "info": {
            "title": "videogen API",
            "version": API_VERSION,
            "summary": "Asynchronous AI video generation, with signed webhooks.",
            "description": "Submit a prompt, a provider and a duration; get the generation record at once; "
            "read it back or list your generations; register webhook endpoints that receive signed POSTs "
            "when a video completes or fails. Every error is an RFC 9457 application/problem+json body. "
            "Request bodies are JSON; unknown fields are refused. Each account has request rate limits "
            "(RateLimit-Policy and RateLimit headers on every authenticated answer; 429 with Retry-After "
            "beyond them).",
        },
        "servers": [{"url": settings.public_base_url}],
        "security": [{SECURITY_SCHEME: []}],
        "tags": [{"name": name, "description": text} for name, text in _TAGS],
        "paths": paths,
        "components": {
            "schemas": _schemas(settings, ops),
            "parameters": _parameters(ops),
            "headers": _headers(),
            "responses": _responses(settings),
            "securitySchemes": {
                SECURITY_SCHEME: {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "An API key: Authorization: Bearer <API_KEY> (made with POST "
                    "/v1/api-keys, or the account's first with videogen keys create --account NAME). Each "
                    "operation names the scope the key must hold (its security requirement and "
                    "x-required-scope); beyond its scopes a key is answered 403 insufficient-scope. "
                    + " ".join(f"{scope.value}: {text}" for scope, (text, _) in SCOPES.items()),
                }
            },
        },
    }
