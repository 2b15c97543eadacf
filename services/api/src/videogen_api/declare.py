"""What a route takes and answers, declared beside its handler; ``openapi`` walks the router and reads it.

    @routes.get("/v1/generations/{id}")
    @Endpoint(operation_id="getGeneration", tag="Generations", ..., model=Generation, errors={404: ...})
    async def get_generation(request: web.Request) -> web.Response: ...

A declaration names its summary and description, tag, success status (with what its answer says and its
model), its query string's model (``query``: the same model the handler parses with ``query.parse_query``),
its path and header parameters, its JSON body's model, the response headers it sets, the errors it answers
beyond the ones every operation may (401 and 403 unless public, 429 when rate limited), the scope an API key
must hold to call it (``videogen_common.scopes``; every route but a public one names one), whether it is
public (no API key), whether creating spends budgets, and whether it streams Server-Sent Events. Errors are
a component response's name or a response written out (``problem``). Path and header parameters used by
several routes are here."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel

from videogen_api.idempotency import HEADER as IDEMPOTENCY_KEY_HEADER
from videogen_api.idempotency import MAX_KEY_CHARS
from videogen_api.prefer import CANCEL_AFTER, MAX_WAIT_SECONDS, PREFER
from videogen_api.problems import PROBLEM_CONTENT_TYPE
from videogen_api.schemas.common import Problem
from videogen_common.scopes import Scope

Doc = dict[str, Any]

# The header naming each request, on every answer (``middleware.request_middleware`` sets it). Here rather
# than in ``middleware``, which imports this module for the scope each route declares (``authorize``).
REQUEST_ID = "X-Request-Id"
H = TypeVar("H", bound=Callable[..., Any])

JSON = "application/json"
REF_TEMPLATE = "#/components/schemas/{model}"
_ATTRIBUTE = "__videogen_endpoint__"


@dataclass(frozen=True)
class Parameter:
    """A path or header parameter, documented as the parameter component ``component``."""

    component: str
    doc: Mapping[str, Any]


@dataclass(frozen=True, kw_only=True)
class Endpoint:
    """One operation's declaration; used as a decorator on its handler (below the route's)."""

    operation_id: str
    tag: str
    summary: str
    description: str
    status: int
    answer: str
    model: type[BaseModel] | None = None
    query: type[BaseModel] | None = None
    parameters: tuple[Parameter, ...] = ()
    body: type[BaseModel] | None = None
    # A request body that is not a JSON model (an upload's bytes), written out.
    raw_body: Doc | None = None
    headers: tuple[str, ...] = ()
    # Error statuses: a component response's name, or a response object written out.
    errors: Mapping[int, str | Doc] = field(default_factory=dict)
    # What an API key must hold to call it (checked before the handler runs: authorize.scope_middleware).
    scope: Scope | None = None
    public: bool = False
    # Creating spends the account's and the key's budgets: it may answer 429 budget-exceeded.
    spends_budget: bool = False
    # The answer is a stream of Server-Sent Events (text/event-stream), not a JSON body.
    stream: bool = False
    # The success answer's content when it is not the JSON ``model`` (a stream, a file), written out.
    content: Doc | None = None

    def __call__(self, handler: H) -> H:
        setattr(handler, _ATTRIBUTE, self)
        return handler


def declared(handler: Any) -> Endpoint | None:
    """The handler's declaration, if it has one."""
    found = getattr(handler, _ATTRIBUTE, None)
    return found if isinstance(found, Endpoint) else None


def ref(model: type[BaseModel]) -> Doc:
    return {"$ref": REF_TEMPLATE.format(model=model.__name__)}


def header_ref(name: str) -> Doc:
    return {"$ref": f"#/components/headers/{name}"}


def problem(description: str, *models: type[BaseModel]) -> Doc:
    """A problem+json response; with several models, the body is exactly one of them."""
    refs = [ref(m) for m in models or (Problem,)]
    schema = refs[0] if len(refs) == 1 else {"oneOf": refs}
    return {
        "description": description,
        "headers": {REQUEST_ID: header_ref(REQUEST_ID)},
        "content": {PROBLEM_CONTENT_TYPE: {"schema": schema}},
    }


def with_headers(response: Doc, *names: str) -> Doc:
    for name in names:
        response["headers"][name] = header_ref(name)
    return response


# Every operation with a JSON body may answer these.
BODY_ERRORS: Mapping[int, str | Doc] = {
    400: "MalformedJson",
    413: "PayloadTooLarge",
    415: "UnsupportedMediaType",
    422: "Invalid",
}

ENDPOINT_UNUSABLE = (
    "endpoint-disabled: the endpoint is disabled (re-enable it with PATCH active: true first); "
    "endpoint-deleted: its endpoint was deleted."
)


# --- Path and header parameters shared by several routes ----------------------------------------------------


def _id(component: str, what: str) -> Parameter:
    doc = {
        "name": "id",
        "in": "path",
        "required": True,
        "description": f"The {what}'s id.",
        "schema": {"type": "string"},
    }
    return Parameter(component, doc)


GENERATION_ID = _id("GenerationId", "generation")
WEBHOOK_ID = _id("WebhookId", "webhook endpoint")
DELIVERY_ID = _id("DeliveryId", "delivery")
EVENT_ID = _id("EventId", "event")
KEY_ID = _id("KeyId", "API key")
UPLOAD_ID = _id("UploadId", "upload")

PREFER_WAIT = Parameter(
    "PreferWait",
    {
        "name": PREFER,
        "in": "header",
        "description": f"wait=N (RFC 7240): answer once the generation is finished, or after N seconds "
        f"(at most {MAX_WAIT_SECONDS}; more counts as {MAX_WAIT_SECONDS}), whichever is first. Other "
        "preferences, and a malformed one, are ignored.",
        "schema": {"type": "string"},
    },
)
IDEMPOTENCY_KEY = Parameter(
    "IdempotencyKey",
    {
        "name": IDEMPOTENCY_KEY_HEADER,
        "in": "header",
        "description": "Makes the request safe to repeat: the same key with the same body replays the "
        "first answer; with another body it is a 422. Kept as long as the generation. Printable ASCII; "
        "spaces at either end are not part of it (HTTP drops them).",
        "schema": {"type": "string", "minLength": 1, "maxLength": MAX_KEY_CHARS, "pattern": "^[ -~]+$"},
    },
)
CANCEL_AFTER_HEADER = Parameter(
    "CancelAfter",
    {
        "name": CANCEL_AFTER,
        "in": "header",
        "description": "A deadline for the video, as a duration: 90, 90s, 5m or 1h (at most a day). Past "
        "it the generation fails with deadline_exceeded, as with deadline_seconds (the sooner wins).",
        "schema": {"type": "string", "pattern": "^0*[1-9][0-9]*[smhSMH]?$"},
    },
)
# Every operation takes it (openapi adds it to each).
REQUEST_ID_HEADER = Parameter(
    "RequestId",
    {
        "name": REQUEST_ID,
        "in": "header",
        # Any value is accepted (a malformed one is replaced, never refused), so the schema allows any.
        "description": "Your id for the request, echoed in the answer's X-Request-Id when it is 1 to 128 "
        "letters, digits and . _ : - characters; otherwise one is made up.",
        "schema": {"type": "string"},
    },
)
