"""What every resource's schemas share: the base of the answers' models (``Body``), timestamps, http(s) URLs,
the marks the OpenAPI document reads (``CATALOG``, ``absent_not_null``), the one body parser (``parse_body``),
the problem bodies every operation may answer with, and the closed lists whose values live in
``videogen_common`` (``DeliveryStatus``, ``HealthState``, ``ImageType``, ``BudgetName``, ``Auto``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias, TypeVar
from urllib.parse import urlsplit

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError
from pydantic.config import JsonDict

from videogen_api import problems
from videogen_api.problems import invalid, malformed_json
from videogen_common.budgets import BUDGET_NAMES
from videogen_common.deliveries import STATUSES
from videogen_common.images import CONTENT_TYPES
from videogen_common.records.batch import ON_INVALID
from videogen_common.records.batch import STATUSES as BATCH_STATUSES
from videogen_common.records.health import HEALTH_STATES
from videogen_common.routing import AUTO

# --- Closed lists -------------------------------------------------------------------------------------------
# Each is the Literal of its values as their home in videogen_common has them, so the document states them
# inline (as these lists always were) and a value added there is one here. mypy reads each as a str.
if TYPE_CHECKING:
    DeliveryStatus: TypeAlias = str
    HealthState: TypeAlias = str
    ImageType: TypeAlias = str
    BudgetName: TypeAlias = str
    Auto: TypeAlias = str
    BatchStatus: TypeAlias = str
    OnInvalid: TypeAlias = str
else:
    DeliveryStatus = Literal[STATUSES]  # a delivery's status (videogen_common.deliveries)
    HealthState = Literal[HEALTH_STATES]  # a provider's health (videogen_common.records.health)
    ImageType = Literal[tuple(CONTENT_TYPES.values())]  # an image we take (videogen_common.images)
    BudgetName = Literal[BUDGET_NAMES]  # a budget's name, from the table (videogen_common.budgets)
    Auto = Literal[AUTO]  # a request's provider when routing picks it (videogen_common.routing)
    BatchStatus = Literal[BATCH_STATUSES]  # a batch's status (videogen_common.records.batch)
    OnInvalid = Literal[ON_INVALID]  # what a batch does with invalid items (videogen_common.records.batch)


# What the document states of a webhook URL: http(s)://, a host part, no spaces or control characters (the
# validator below checks the rest: a host, no credentials).
HTTP_URL = r"^[Hh][Tt][Tt][Pp][Ss]?://[^/?#\x00-\x20\x7f][^\x00-\x20\x7f]*$"


def check_http_url(value: str) -> str:
    """An absolute http(s) URL with a host and no credentials, exactly as given."""
    # urlsplit (and aiohttp's client) silently drop some of these, so the URL used would not be the URL given.
    if any(c <= " " or c == "\x7f" for c in value):
        raise ValueError("must not contain spaces or control characters")
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("must be an absolute http or https URL")
    if parts.username or parts.password:
        raise ValueError("must not carry credentials")
    return value


# Marks a schema whose values are a catalog's (openapi.catalog_schemas): the document refers to it by name.
CATALOG = "x-catalog"


def no_default(schema: JsonDict) -> None:
    schema.pop("default", None)


def absent_not_null(schema: JsonDict) -> None:
    """The JSON schema of a field that may be left out but not sent as null: only its non-null form."""
    schema.pop("default", None)
    branches = schema.pop("anyOf", [])
    for branch in branches if isinstance(branches, list) else []:
        if isinstance(branch, dict) and branch != {"type": "null"}:
            schema.update(branch)


def parse_timestamp(value: str) -> datetime:
    """An ISO 8601 timestamp with a time zone (``Z`` or an offset), as an aware UTC datetime."""
    try:
        moment = datetime.fromisoformat(value)
        if moment.utcoffset() is not None:
            return moment.astimezone(UTC)
    except (ValueError, OverflowError):
        raise ValueError(
            "must be an ISO 8601 timestamp with a time zone, e.g. 2026-11-21T08:47:00Z"
        ) from None
    raise ValueError("must carry a time zone (Z or an offset such as +02:00)")


def _timestamp(value: Any) -> datetime:
    if not isinstance(value, str):
        raise ValueError("must be an ISO 8601 timestamp string, e.g. 2026-11-21T08:47:00Z")
    return parse_timestamp(value)


Timestamp = Annotated[datetime, BeforeValidator(_timestamp)]


def _field_errors(exc: ValidationError) -> list[dict[str, str]]:
    errors = []
    for err in exc.errors(include_url=False):
        field = ".".join(str(p) for p in err["loc"]) or "body"
        message = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            message = "unknown field"
        errors.append({"field": field, "message": message, "code": err["type"]})
    return errors


def field_errors(exc: ValidationError) -> list[dict[str, str]]:
    """One ``{field, message, code}`` entry per failing field of a body's validation."""
    return _field_errors(exc)


M = TypeVar("M", bound=BaseModel)


def parse_body(model: type[M], raw: bytes, **context: Any) -> M:
    """Parse and validate a JSON body: malformed JSON → 400, a body that isn't an object or has bad fields
    → 422 with one entry per failing field."""
    try:
        return model.model_validate_json(raw, context=context or None)
    except ValidationError as exc:
        errors = _field_errors(exc)
        if any(e["code"] == "json_invalid" for e in errors):
            raise malformed_json(next(e["message"] for e in errors if e["code"] == "json_invalid")) from None
        if any(e["code"] == "model_type" for e in errors):
            raise problems.Problem(
                422,
                "validation-error",
                "Invalid request",
                "the body must be a JSON object",
                errors=[{"field": "body", "message": "must be a JSON object", "code": "model_type"}],
            ) from None
        raise invalid(errors) from None


# --- Responses ----------------------------------------------------------------------------------------------
# What the handlers return, field for field. The OpenAPI document is generated from these models, and the
# tests validate real responses against them (strictly, from the JSON) and against the document, so the views
# in the handlers, the models and the document cannot drift apart. Every field is always present (null when
# empty).


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


Moment = Annotated[
    datetime, Field(description="ISO 8601 UTC with milliseconds, e.g. 2026-11-21T08:47:00.123Z")
]
NextCursor = Annotated[
    str | None, Field(description="Pass as cursor for the next page; null on the last page.")
]


class Problem(Body):
    """An RFC 9457 problem: every error the API returns, as application/problem+json."""

    type: Annotated[
        str, Field(pattern=r"^urn:videogen:problem:[a-z0-9-]+$", description="What kind of error.")
    ]
    title: str
    status: Annotated[int, Field(ge=400, le=599, description="The HTTP status, repeated.")]
    detail: Annotated[str, Field(description="What happened; absent when the title says it all.")] = Field(
        default="", json_schema_extra=no_default
    )
    instance: Annotated[str, Field(description="The request path.")]


class FieldError(Body):
    field: Annotated[str, Field(description="The field, parameter or header, dotted for nested fields.")]
    message: str
    code: str


class ValidationProblem(Problem):
    """A problem with the request's fields, parameters or headers: one entry per failing one."""

    errors: Annotated[list[FieldError], Field(min_length=1)]
