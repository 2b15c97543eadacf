"""The API's OpenAPI 3.1 document, served as GET /openapi.json and shown by the viewer at GET /docs
(``routes.reference``).

It is built once, when the application is created, from the pydantic models in ``schemas`` (the request
bodies the handlers validate with, and the response models their views are tested against) plus the table of
operations below, which says what each route takes and answers. The deployment's own limits (prompt length,
body size, whether webhook URLs may be plain http) are written in from its settings.

Neither needs an API key. Tests hold the table to the router (every /v1 route documented, nothing
documented that is not routed) and fuzz the live API from the served document (schemathesis)."""

from __future__ import annotations

from collections.abc import Mapping
from copy import deepcopy
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from pydantic import BaseModel

from videogen_api.idempotency import HEADER as IDEMPOTENCY_KEY
from videogen_api.idempotency import MAX_KEY_CHARS, REPLAYED_HEADER
from videogen_api.middleware import _CLIENT_ID, REQUEST_ID
from videogen_api.paging import DEFAULT_LIMIT, MAX_LIMIT
from videogen_api.prefer import CANCEL_AFTER, MAX_WAIT_SECONDS, PREFER, PREFERENCE_APPLIED
from videogen_api.problems import PROBLEM_CONTENT_TYPE
from videogen_api.ratelimit import LIMIT_HEADER, POLICY_HEADER
from videogen_api.routes.deliveries import _EVENT_TYPE, KNOWN_EVENT_TYPES
from videogen_api.schemas import (
    METADATA_KEY,
    AuditEventList,
    Delivery,
    DeliveryList,
    GenerateRequest,
    Generation,
    GenerationList,
    Problem,
    ProviderList,
    Recovered,
    RecoverRequest,
    RotatedSecret,
    Upload,
    Usage,
    ValidationProblem,
    Webhook,
    WebhookCreate,
    WebhookCreated,
    WebhookList,
    WebhookUpdate,
)
from videogen_api.settings import ApiSettings
from videogen_common.audit import AuditEventType
from videogen_common.deliveries import STATUSES
from videogen_common.domain import Provider, Status
from videogen_common.media import CONTENT_TYPES

Doc = dict[str, Any]

OPENAPI_VERSION = "3.1.0"
API_VERSION = "1"
JSON = "application/json"
SECURITY_SCHEME = "bearer"


# --- The operations ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Operation:
    """One route: what it takes (parameters by component name, a body model) and what it answers."""

    method: str
    path: str
    operation_id: str
    tag: str
    summary: str
    description: str
    status: int
    answer: str
    model: type[BaseModel] | None = None
    parameters: tuple[str, ...] = ()
    body: type[BaseModel] | None = None
    headers: tuple[str, ...] = ()
    # Error statuses: a component response's name, or a response object written out.
    errors: Mapping[int, str | Doc] = field(default_factory=dict)
    public: bool = False
    # The answer is a stream of Server-Sent Events (text/event-stream), not a JSON body.
    stream: bool = False
    # A request body that is not a JSON model (an upload's bytes), written out.
    raw_body: Doc | None = None


_REF_TEMPLATE = "#/components/schemas/{model}"
RATE_LIMIT_HEADERS = (POLICY_HEADER, LIMIT_HEADER)


def _ref(model: type[BaseModel]) -> Doc:
    return {"$ref": _REF_TEMPLATE.format(model=model.__name__)}


def _problem(description: str, *models: type[BaseModel]) -> Doc:
    """A problem+json response; with several models, the body is exactly one of them."""
    refs = [_ref(m) for m in models or (Problem,)]
    schema = refs[0] if len(refs) == 1 else {"oneOf": refs}
    return {
        "description": description,
        "headers": {REQUEST_ID: {"$ref": f"#/components/headers/{REQUEST_ID}"}},
        "content": {PROBLEM_CONTENT_TYPE: {"schema": schema}},
    }


def _with_headers(response: Doc, *names: str) -> Doc:
    for name in names:
        response["headers"][name] = {"$ref": f"#/components/headers/{name}"}
    return response


# Every operation with a JSON body may answer these.
_BODY_ERRORS: dict[int, str | Doc] = {
    400: "MalformedJson",
    413: "PayloadTooLarge",
    415: "UnsupportedMediaType",
    422: "Invalid",
}

_ENDPOINT_UNUSABLE = (
    "endpoint-disabled: the endpoint is disabled (re-enable it with PATCH active: true first); "
    "endpoint-deleted: its endpoint was deleted."
)

OPERATIONS: tuple[Operation, ...] = (
    Operation(
        "post",
        "/v1/generate",
        "createGeneration",
        "Generations",
        "Submit a generation",
        "The generation is durably stored before the answer, with status processing; the orchestrator takes "
        "it from there. With an Idempotency-Key, a repeat of the same request replays the saved 202 (with "
        f"{REPLAYED_HEADER}: true) and creates nothing; concurrent repeats create one generation. With "
        f"{PREFER}: wait=N the answer comes once the generation is finished or after N seconds (at most "
        f"{MAX_WAIT_SECONDS}), whichever is first.",
        202,
        "Accepted: the generation as created (or, with Prefer: wait, as it is when the answer comes).",
        Generation,
        parameters=("IdempotencyKey", "PreferWait", "CancelAfter"),
        body=GenerateRequest,
        headers=("Location", REPLAYED_HEADER, PREFERENCE_APPLIED),
        errors={
            **_BODY_ERRORS,
            422: _problem(
                "validation-error: a field is invalid (one entry per field in errors); "
                "provider-unavailable: that provider is not enabled here (errors names provider); "
                "idempotency-key-reused: the key was used before with a different body.",
                ValidationProblem,
                Problem,
            ),
        },
    ),
    Operation(
        "get",
        "/v1/generations",
        "listGenerations",
        "Generations",
        "List generations",
        "The account's generations, newest first (ties by id). Filters narrow the set; a cursor holds only a "
        "position, so a walk never skips or repeats while new generations arrive.",
        200,
        "A page of generations.",
        GenerationList,
        parameters=(
            "Limit",
            "Cursor",
            "GenerationStatus",
            "GenerationProvider",
            "CreatedAfter",
            "CreatedBefore",
            "Metadata",
        ),
        errors={422: "Invalid"},
    ),
    Operation(
        "post",
        "/v1/uploads",
        "createUpload",
        "Generations",
        "Upload an image for a first frame",
        "The image's bytes with its Content-Type, or a multipart/form-data form whose file part holds them. "
        "Its type is taken from its content, which must decode as a PNG, JPEG or WebP image, at most "
        "8192 pixels on each side. Use the answer's id as image.upload_id on POST /v1/generate until "
        "expires_at; only this account can.",
        201,
        "Created: the upload.",
        Upload,
        raw_body={
            "required": True,
            "content": {
                **{
                    media_type: {"schema": {"type": "string", "contentMediaType": media_type}}
                    for media_type in ("image/png", "image/jpeg", "image/webp")
                },
                "multipart/form-data": {
                    "schema": {
                        "type": "object",
                        "properties": {
                            "file": {"type": "string", "contentMediaType": "application/octet-stream"}
                        },
                        "required": ["file"],
                    }
                },
            },
        },
        errors={
            400: _problem("malformed-form: the multipart form does not parse."),
            413: _problem(
                "payload-too-large: the image is over the deployment's limit (VIDEOGEN_IMAGE_MAX_BYTES)."
            ),
            415: _problem("unsupported-media-type: neither an image type nor multipart/form-data."),
            422: "Invalid",
        },
    ),
    Operation(
        "get",
        "/v1/providers",
        "listProviders",
        "Generations",
        "List providers and what they can make",
        "Every provider the API knows, whether this deployment offers it, and its aspect ratios, "
        "resolutions, durations and inputs. A request asking a provider for something it cannot make is a "
        "422 naming the field and what the provider would accept.",
        200,
        "The providers.",
        ProviderList,
    ),
    Operation(
        "get",
        "/v1/generations/{id}",
        "getGeneration",
        "Generations",
        "Read a generation",
        f"Another account's generation answers exactly like an unknown one. With {PREFER}: wait=N the "
        f"answer comes once the generation is finished or after N seconds (at most {MAX_WAIT_SECONDS}), "
        "whichever is first: no polling.",
        200,
        "The generation.",
        Generation,
        parameters=("GenerationId", "PreferWait"),
        headers=(PREFERENCE_APPLIED,),
        errors={404: "NotFound"},
    ),
    Operation(
        "get",
        "/v1/generations/{id}/events",
        "streamGenerationEvents",
        "Generations",
        "Follow a generation live (Server-Sent Events)",
        "The generation as it is, at once, then an event for every change of its status or progress until it "
        "is completed or failed, when the stream ends. Every event is `event: generation` with the "
        "generation (as GET answers it) as `data`, and an `id` ordering its changes: reconnect with "
        "`Last-Event-ID` to get only what is newer. Served by any api replica. Each account may hold a "
        "bounded number of streams open on one api process.",
        200,
        "The stream.",
        parameters=("GenerationId", "LastEventId"),
        errors={404: "NotFound"},
        stream=True,
    ),
    Operation(
        "post",
        "/v1/generations/{id}/cancel",
        "cancelGeneration",
        "Generations",
        "Cancel a generation",
        "An unfinished generation becomes failed, with error code canceled, and video.failed is sent. The "
        "orchestrator then cancels the provider's own task where the provider allows it (best effort); any "
        "result it still produces is discarded.",
        200,
        "The canceled generation.",
        Generation,
        parameters=("GenerationId",),
        errors={
            404: "NotFound",
            409: _problem(
                "generation-terminal: it has already finished; generation-busy: it kept changing; try again."
            ),
        },
    ),
    Operation(
        "post",
        "/v1/webhooks",
        "createWebhook",
        "Webhooks",
        "Register a webhook endpoint",
        "The answer carries the endpoint's signing secret, shown only here (and on rotation).",
        201,
        "Created.",
        WebhookCreated,
        body=WebhookCreate,
        headers=("Location",),
        errors={
            **_BODY_ERRORS,
            409: _problem("webhook-limit: the account has as many endpoints as allowed."),
        },
    ),
    Operation(
        "get",
        "/v1/webhooks",
        "listWebhooks",
        "Webhooks",
        "List webhook endpoints",
        "All of the account's endpoints, oldest first, without their secrets.",
        200,
        "The endpoints.",
        WebhookList,
    ),
    Operation(
        "get",
        "/v1/webhooks/{id}",
        "getWebhook",
        "Webhooks",
        "Read a webhook endpoint",
        "Without its secret.",
        200,
        "The endpoint.",
        Webhook,
        parameters=("WebhookId",),
        errors={404: "NotFound"},
    ),
    Operation(
        "patch",
        "/v1/webhooks/{id}",
        "updateWebhook",
        "Webhooks",
        "Change a webhook endpoint",
        "Any of url, events and active, each checked as on creation. active: true re-enables a disabled "
        "endpoint and resets its health; active: false disables it.",
        200,
        "The changed endpoint.",
        Webhook,
        parameters=("WebhookId",),
        body=WebhookUpdate,
        errors={**_BODY_ERRORS, 404: "NotFound"},
    ),
    Operation(
        "delete",
        "/v1/webhooks/{id}",
        "deleteWebhook",
        "Webhooks",
        "Delete a webhook endpoint",
        "Its pending deliveries fail with reason endpoint deleted; its deliveries stay readable.",
        204,
        "Deleted.",
        parameters=("WebhookId",),
        errors={404: "NotFound"},
    ),
    Operation(
        "post",
        "/v1/webhooks/{id}/rotate-secret",
        "rotateWebhookSecret",
        "Webhooks",
        "Rotate an endpoint's signing secret",
        "The new secret is shown only here. The previous one keeps signing beside it for the overlap period "
        "(24 h by default), so a receiver can switch at its own pace.",
        200,
        "The new secret.",
        RotatedSecret,
        parameters=("WebhookId",),
        errors={404: "NotFound", 409: _problem("conflict: the secret was rotated concurrently; try again.")},
    ),
    Operation(
        "post",
        "/v1/webhooks/{id}/test",
        "sendTestEvent",
        "Deliveries",
        "Send a test event",
        "Queues a signed webhook.test delivery to the endpoint, whatever events it subscribes to.",
        202,
        "Accepted: the queued delivery.",
        Delivery,
        parameters=("WebhookId",),
        headers=("Location",),
        errors={404: "NotFound", 409: _problem(_ENDPOINT_UNUSABLE)},
    ),
    Operation(
        "get",
        "/v1/webhooks/{id}/deliveries",
        "listDeliveries",
        "Deliveries",
        "List an endpoint's deliveries",
        "Newest first, each with every attempt made.",
        200,
        "A page of deliveries.",
        DeliveryList,
        parameters=(
            "WebhookId",
            "Limit",
            "Cursor",
            "DeliveryStatus",
            "EventType",
            "CreatedAfter",
            "CreatedBefore",
        ),
        errors={404: "NotFound", 422: "Invalid"},
    ),
    Operation(
        "post",
        "/v1/webhooks/{id}/recover",
        "recoverDeliveries",
        "Deliveries",
        "Re-send failed deliveries",
        "Queues again every failed delivery of the endpoint created at or after since (which may reach back "
        "at most the recovery window, 14 days by default).",
        202,
        "Accepted: how many were queued.",
        Recovered,
        parameters=("WebhookId",),
        body=RecoverRequest,
        errors={**_BODY_ERRORS, 404: "NotFound", 409: _problem(_ENDPOINT_UNUSABLE)},
    ),
    Operation(
        "get",
        "/v1/deliveries/{id}",
        "getDelivery",
        "Deliveries",
        "Read a delivery",
        "Every attempt (time, status code, latency, error), the next attempt's time, and why it failed.",
        200,
        "The delivery.",
        Delivery,
        parameters=("DeliveryId",),
        errors={404: "NotFound"},
    ),
    Operation(
        "post",
        "/v1/deliveries/{id}/retry",
        "retryDelivery",
        "Deliveries",
        "Retry a delivery",
        "Queues a finished delivery again, now, with the same id (so the same webhook-id) and body.",
        202,
        "Accepted: the queued delivery.",
        Delivery,
        parameters=("DeliveryId",),
        errors={
            404: "NotFound",
            409: _problem("delivery-pending: it is already queued; " + _ENDPOINT_UNUSABLE),
        },
    ),
    Operation(
        "get",
        "/v1/usage",
        "getUsage",
        "Account",
        "Read the account's usage",
        "How many generations the account made and how many seconds of video, by UTC day, provider and "
        "status, over [start, end) (by default the last 30 days; at most 366 days), in total and per API "
        "key. Counted from the generations themselves by when each was made: once each, however often their "
        "events were delivered. seconds is what was asked for, video_seconds what was made (completed ones).",
        200,
        "The usage.",
        Usage,
        parameters=("UsageStart", "UsageEnd", "ApiKeyId"),
        errors={422: "Invalid"},
    ),
    Operation(
        "get",
        "/v1/audit-events",
        "listAuditEvents",
        "Account",
        "List the account's audit events",
        "Every change to the account's API keys and webhook endpoints, newest first: what changed, who made "
        "it (one of your API keys, an operator at the command line, or the system, e.g. the notifier "
        "disabling an endpoint that answered 410), when, and the request that made it. Never a secret.",
        200,
        "A page of audit events.",
        AuditEventList,
        parameters=("Limit", "Cursor", "AuditEventType", "TargetId", "CreatedAfter", "CreatedBefore"),
        errors={422: "Invalid"},
    ),
    Operation(
        "get",
        "/v1/media/{folder}/{file}",
        "getMedia",
        "Media",
        "Download a video or thumbnail",
        "The target of a generation's video_url and thumbnail_url. The signature is the credential: no API "
        "key. An expired or forged link answers like a missing file. Supports a single byte `Range` (with "
        "`If-Range`), and conditional GET with `If-None-Match` / `If-Modified-Since` against the `ETag` and "
        "`Last-Modified` it sends; `HEAD` answers the headers alone.",
        200,
        "The file.",
        parameters=("MediaFolder", "MediaFile", "MediaExpires", "MediaSignature"),
        errors={
            206: {
                "description": "The requested byte range (`Content-Range` says which).",
                "headers": {REQUEST_ID: {"$ref": f"#/components/headers/{REQUEST_ID}"}},
            },
            304: {
                "description": "Not modified: the client's copy (by `ETag` or date) is current.",
                "headers": {REQUEST_ID: {"$ref": f"#/components/headers/{REQUEST_ID}"}},
            },
            404: "NotFound",
            416: _problem(
                "range-not-satisfiable: the range starts past the end of the file "
                "(`Content-Range: bytes */size`)."
            ),
        },
        public=True,
    ),
)

_TAGS = (
    ("Generations", "Submit prompts and follow the videos they become."),
    ("Webhooks", "Endpoints that receive signed POSTs when a video completes or fails."),
    ("Deliveries", "Each event's delivery to each endpoint: the log, and what queues it again."),
    ("Account", "What the account made, and who changed its keys and webhooks."),
    ("Media", "The files behind the signed links in a generation."),
)


# --- Components ---------------------------------------------------------------------------------------------

_REQUEST_MODELS: tuple[type[BaseModel], ...] = (GenerateRequest, WebhookCreate, WebhookUpdate, RecoverRequest)
_RESPONSE_MODELS: tuple[type[BaseModel], ...] = (
    Generation,
    GenerationList,
    Webhook,
    WebhookCreated,
    WebhookList,
    RotatedSecret,
    Delivery,
    DeliveryList,
    Recovered,
    Usage,
    ProviderList,
    Upload,
    AuditEventList,
    Problem,
    ValidationProblem,
)


def _schemas(settings: ApiSettings) -> Doc:
    """Every model's JSON schema, with the models it nests (pydantic's ``$defs``) as components beside it."""
    schemas: Doc = {}

    def add(name: str, schema: Doc) -> None:
        if schemas.setdefault(name, schema) != schema:
            raise ValueError(f"two different schemas are both called {name!r}")

    for model in (*_REQUEST_MODELS, *_RESPONSE_MODELS):
        schema = model.model_json_schema(ref_template=_REF_TEMPLATE)
        for name, nested in schema.pop("$defs", {}).items():
            add(name, nested)
        add(model.__name__, schema)
    # The deployment's limits, which the handlers check beyond the models.
    prompt = schemas["GenerateRequest"]["properties"]["prompt"]
    prompt["maxLength"] = settings.prompt_max_chars
    prompt["description"] += f" Not blank; at most {settings.prompt_max_chars} characters."
    for name in ("WebhookCreate", "WebhookUpdate"):
        url = schemas[name]["properties"]["url"]
        url["description"] = "An absolute http(s) URL with a host and no credentials."
        if not settings.webhook_allow_http:
            url["pattern"] = url["pattern"].replace("[Ss]?", "[Ss]")
            url["description"] = "An absolute https URL with a host and no credentials."
    return dict(sorted(schemas.items()))


def _timestamp_parameter(name: str, description: str) -> Doc:
    return {
        "name": name,
        "in": "query",
        "description": description + " ISO 8601 with a time zone (Z or an offset; write + as %2B in a URL); "
        "exclusive.",
        "schema": {"type": "string", "format": "date-time"},
    }


def _choices_parameter(name: str, enum: type[StrEnum], description: str) -> Doc:
    """A repeatable query parameter whose every value is one of ``enum`` or several separated by commas."""
    one = "(?:" + "|".join(e.value for e in enum) + ")"
    listed = rf"^[ \t]*{one}[ \t]*(?:,[ \t]*{one}[ \t]*)*$"
    return {
        "name": name,
        "in": "query",
        "description": f"{description}: repeat the parameter or separate values with commas.",
        "style": "form",
        "explode": True,
        "schema": {
            "type": "array",
            "items": {
                "anyOf": [
                    {"$ref": f"#/components/schemas/{enum.__name__}"},
                    {"type": "string", "pattern": listed, "description": "several, comma-separated"},
                ]
            },
        },
    }


def _usage_bound(name: str, description: str) -> Doc:
    return {
        "name": name,
        "in": "query",
        "description": description + " ISO 8601 with a time zone (write + as %2B in a URL), or a date "
        "(its midnight UTC).",
        "schema": {
            "anyOf": [{"type": "string", "format": "date-time"}, {"type": "string", "format": "date"}]
        },
    }


def _id_parameter(what: str) -> Doc:
    return {
        "name": "id",
        "in": "path",
        "required": True,
        "description": f"The {what}'s id.",
        "schema": {"type": "string"},
    }


def _parameters() -> Doc:
    return {
        "Limit": {
            "name": "limit",
            "in": "query",
            "description": f"Page size, 1 to {MAX_LIMIT}.",
            "schema": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": DEFAULT_LIMIT},
        },
        "Cursor": {
            "name": "cursor",
            "in": "query",
            "description": "The next_cursor of the previous page, as returned.",
            "schema": {"type": "string"},
        },
        "GenerationStatus": _choices_parameter("status", Status, "Only these statuses"),
        "GenerationProvider": _choices_parameter("provider", Provider, "Only these providers"),
        "CreatedAfter": _timestamp_parameter("created_after", "Only those created after this time."),
        "CreatedBefore": _timestamp_parameter("created_before", "Only those created before this time."),
        "Metadata": {
            "name": "metadata",
            "in": "query",
            "description": "metadata[KEY]=VALUE: only those whose metadata has exactly VALUE under KEY; "
            "several must all match.",
            "style": "deepObject",
            "explode": True,
            "schema": {
                "type": "object",
                "propertyNames": {"pattern": METADATA_KEY},
                "additionalProperties": {"type": "string"},
            },
        },
        "DeliveryStatus": {
            "name": "status",
            "in": "query",
            "description": "Only deliveries in this status.",
            "schema": {"type": "string", "enum": list(STATUSES)},
        },
        "EventType": {
            "name": "event_type",
            "in": "query",
            "description": "Only deliveries of this event type, such as "
            + ", ".join(KNOWN_EVENT_TYPES)
            + ".",
            "schema": {"type": "string", "maxLength": 64, "pattern": _EVENT_TYPE.pattern},
        },
        "IdempotencyKey": {
            "name": IDEMPOTENCY_KEY,
            "in": "header",
            "description": "Makes the request safe to repeat: the same key with the same body replays the "
            "first answer; with another body it is a 422. Kept as long as the generation. Printable ASCII; "
            "spaces at either end are not part of it (HTTP drops them).",
            "schema": {"type": "string", "minLength": 1, "maxLength": MAX_KEY_CHARS, "pattern": "^[ -~]+$"},
        },
        "CancelAfter": {
            "name": CANCEL_AFTER,
            "in": "header",
            "description": "A deadline for the video, as a duration: 90, 90s, 5m or 1h (at most a day). Past "
            "it the generation fails with deadline_exceeded, as with deadline_seconds (the sooner wins).",
            "schema": {"type": "string", "pattern": "^0*[1-9][0-9]*[smhSMH]?$"},
        },
        "LastEventId": {
            "name": "Last-Event-ID",
            "in": "header",
            "description": "The id of the last event received, to resume a stream: only newer changes come.",
            "schema": {"type": "string"},
        },
        "PreferWait": {
            "name": PREFER,
            "in": "header",
            "description": f"wait=N (RFC 7240): answer once the generation is finished, or after N seconds "
            f"(at most {MAX_WAIT_SECONDS}; more counts as {MAX_WAIT_SECONDS}), whichever is first. Other "
            "preferences, and a malformed one, are ignored.",
            "schema": {"type": "string"},
        },
        "RequestId": {
            "name": REQUEST_ID,
            "in": "header",
            # Any value is accepted (a malformed one is replaced, never refused), so the schema allows any.
            "description": "Your id for the request, echoed in the answer's X-Request-Id when it is 1 to 128 "
            "letters, digits and . _ : - characters; otherwise one is made up.",
            "schema": {"type": "string"},
        },
        "UsageStart": _usage_bound("start", "The range's start (inclusive); by default 30 days before end."),
        "UsageEnd": _usage_bound("end", "The range's end (exclusive); by default now."),
        "ApiKeyId": {
            "name": "api_key_id",
            "in": "query",
            "description": "Only the generations made with this API key (its id, e.g. key_…).",
            "schema": {"type": "string"},
        },
        "AuditEventType": _choices_parameter("type", AuditEventType, "Only these types of change"),
        "TargetId": {
            "name": "target_id",
            "in": "query",
            "description": "Only changes to this key, webhook endpoint or delivery (its id).",
            "schema": {"type": "string"},
        },
        "GenerationId": _id_parameter("generation"),
        "WebhookId": _id_parameter("webhook endpoint"),
        "DeliveryId": _id_parameter("delivery"),
        "MediaFolder": {
            "name": "folder",
            "in": "path",
            "required": True,
            "description": "The generation's id, as in the signed link.",
            "schema": {"type": "string", "pattern": "^[A-Za-z0-9_-]+$"},
        },
        "MediaFile": {
            "name": "file",
            "in": "path",
            "required": True,
            "description": "video.mp4 or thumbnail.jpg, as in the signed link.",
            "schema": {"type": "string", "pattern": "^[A-Za-z0-9_.-]+$"},
        },
        "MediaExpires": {
            "name": "exp",
            "in": "query",
            "required": True,
            "description": "The link's expiry (seconds since the epoch), as in the signed link.",
            "schema": {"type": "integer"},
        },
        "MediaSignature": {
            "name": "sig",
            "in": "query",
            "required": True,
            "description": "The link's signature, as in the signed link.",
            "schema": {"type": "string"},
        },
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
    unauthorized = _problem("unauthorized: the API key is missing, malformed, unknown or revoked.")
    unauthorized["headers"]["WWW-Authenticate"] = {"$ref": "#/components/headers/WWW-Authenticate"}
    rate_limited = _problem(
        "rate-limited: the account has spent this policy's quota for the current window; retry after "
        "Retry-After seconds."
    )
    for name in ("Retry-After", *RATE_LIMIT_HEADERS):
        rate_limited["headers"][name] = {"$ref": f"#/components/headers/{name}"}
    return {
        "MalformedJson": _problem("malformed-json: the body is not JSON."),
        "Unauthorized": unauthorized,
        "NotFound": _problem("not-found: no such resource for this account."),
        "PayloadTooLarge": _problem(f"payload-too-large: the body is over {settings.max_body_bytes} bytes."),
        "UnsupportedMediaType": _problem("unsupported-media-type: the body is not sent as application/json."),
        "Invalid": _problem(
            "validation-error: a field, parameter or header is invalid; errors names each one.",
            ValidationProblem,
        ),
        "RateLimited": rate_limited,
    }


# --- The document -------------------------------------------------------------------------------------------


def _operation(op: Operation, *, rate_limited: bool) -> Doc:
    """``rate_limited``: the deployment limits request rates, so an authenticated operation answers with the
    rate limit headers, and may answer 429."""
    limits = rate_limited and not op.public
    names = (REQUEST_ID, *op.headers, *(RATE_LIMIT_HEADERS if limits else ()))
    headers = {name: {"$ref": f"#/components/headers/{name}"} for name in names}
    success: Doc = {"description": op.answer, "headers": headers}
    if op.model is not None:
        success["content"] = {JSON: {"schema": _ref(op.model)}}
    elif op.stream:
        success["content"] = {
            "text/event-stream": {
                "schema": {
                    "type": "object",
                    "description": "Each event: `id: <version>:<progress>`, `event: generation`, `data: "
                    "<the Generation as JSON>`, ended by a blank line; a comment line (`: keep-alive`) every "
                    "15 s.",
                    "properties": {
                        "id": {"type": "string", "pattern": "^[0-9]+:[0-9]*$"},
                        "event": {"const": "generation"},
                        "data": {
                            "type": "string",
                            "contentMediaType": JSON,
                            "contentSchema": _ref(Generation),
                        },
                    },
                    "required": ["id", "event", "data"],
                }
            }
        }
    elif op.path.startswith("/v1/media/"):
        success["content"] = {
            media_type: {"schema": {"type": "string", "contentMediaType": media_type}}
            for media_type in sorted(set(CONTENT_TYPES.values()))
        }
    errors: dict[int, str | Doc] = {} if op.public else {401: "Unauthorized"}
    if limits:
        errors[429] = "RateLimited"
    if op.stream:  # streams are bounded per account, with or without rate limits
        streams = "too-many-streams: the account holds as many event streams open here as it may."
        errors[429] = (
            _with_headers(
                _problem("rate-limited: the account's request quota is spent; " + streams),
                "Retry-After",
                *RATE_LIMIT_HEADERS,
            )
            if limits
            else _with_headers(_problem(streams), "Retry-After")
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
        "parameters": [{"$ref": f"#/components/parameters/{p}"} for p in (*op.parameters, "RequestId")],
    }
    if op.body is not None:
        out["requestBody"] = {"required": True, "content": {JSON: {"schema": _ref(op.body)}}}
    elif op.raw_body is not None:
        out["requestBody"] = deepcopy(op.raw_body)
    out["responses"] = responses
    if op.public:
        out["security"] = []
    return out


def build_document(settings: ApiSettings) -> Doc:
    paths: Doc = {}
    for op in OPERATIONS:
        paths.setdefault(op.path, {})[op.method] = _operation(op, rate_limited=settings.rate_limit_enabled)
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
            "schemas": _schemas(settings),
            "parameters": _parameters(),
            "headers": _headers(),
            "responses": _responses(settings),
            "securitySchemes": {
                SECURITY_SCHEME: {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "An API key: Authorization: Bearer <API_KEY> (made with videogen keys "
                    "create --account NAME).",
                }
            },
        },
    }
