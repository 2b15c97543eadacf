"""Request bodies, validated with pydantic, and the bodies the handlers return: the same types generate the
OpenAPI document (``openapi``), and tests validate real responses against the response models."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal, TypeVar
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    ValidationError,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    field_validator,
    model_validator,
)
from pydantic.config import JsonDict
from pydantic.types import JsonValue
from pydantic_core import CoreSchema, PydanticCustomError, core_schema

from videogen_api import problems
from videogen_api.problems import invalid, malformed_json
from videogen_common.audit import AuditActorType, AuditEventType
from videogen_common.capabilities import MAX_SEED, AspectRatio, Resolution
from videogen_common.domain import MAX_DURATION_S, MIN_DURATION_S, Priority, Provider, Status
from videogen_common.event_types import EVENT_TYPES, SubjectType
from videogen_common.failures import ErrorCode
from videogen_common.generations import VIDEO_OPTIONS, QueueReason
from videogen_common.routing import Breaker, Sort

MAX_DEADLINE_SECONDS = 86_400
MAX_METADATA_KEYS = 16
METADATA_KEY = r"^[A-Za-z0-9_-]{1,40}$"
MAX_METADATA_VALUE_CHARS = 500
MAX_NEGATIVE_PROMPT_CHARS = 1000

Seed = Annotated[
    int,
    Field(
        ge=0,
        le=MAX_SEED,
        description="The same prompt, seed and options give the same video, where the provider takes one.",
    ),
]
MetadataValue = Annotated[str, Field(max_length=MAX_METADATA_VALUE_CHARS)]
Metadata = Annotated[
    dict[Annotated[str, Field(pattern=METADATA_KEY)], MetadataValue],
    Field(
        max_length=MAX_METADATA_KEYS,
        description=f"Up to {MAX_METADATA_KEYS} keys (letters, digits, _ and -, at most 40 characters) with "
        f"string values of at most {MAX_METADATA_VALUE_CHARS} characters: your own ids and labels, never "
        "interpreted, returned on the generation and in its webhooks, and filterable in the listing.",
    ),
]


# What the document states of a webhook URL: http(s)://, a host part, no spaces or control characters (the
# validator below checks the rest: a host, no credentials).
_HTTP_URL = r"^[Hh][Tt][Tt][Pp][Ss]?://[^/?#\x00-\x20\x7f][^\x00-\x20\x7f]*$"
WebhookUrl = Annotated[str, Field(min_length=1, max_length=2048, json_schema_extra={"pattern": _HTTP_URL})]


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


class _Subscribable:
    """An event type an endpoint may subscribe to, as the catalog (``EVENT_TYPES``) defines them when a value
    is checked and when the OpenAPI document is built, not when this module is imported: a type defined since
    is one. The document names the list once, as its ``EventType`` component (``openapi.catalog_schemas``,
    put in where the schema says ``x-catalog``)."""

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_after_validator_function(cls._check, core_schema.str_schema())

    @classmethod
    def __get_pydantic_json_schema__(cls, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonDict:
        names: list[JsonValue] = list(EVENT_TYPES.subscribable())
        return {"type": "string", "enum": names, CATALOG: "EventType"}

    @staticmethod
    def _check(value: str) -> str:
        names = EVENT_TYPES.subscribable()
        if value not in names:
            expected = ", ".join(repr(name) for name in names)
            raise PydanticCustomError("enum", "Input should be one of {expected}", {"expected": expected})
        return value


# Marks a schema whose values are a catalog's (openapi.catalog_schemas): the document refers to it by name.
CATALOG = "x-catalog"
EventType = Annotated[str, _Subscribable]
WebhookEvents = Annotated[list[EventType], Field(min_length=1, json_schema_extra={"uniqueItems": True})]


class WebhookCreate(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    url: WebhookUrl
    events: WebhookEvents

    @field_validator("url")
    @classmethod
    def _absolute_http(cls, value: str) -> str:
        return check_http_url(value)

    @field_validator("events")
    @classmethod
    def _unique(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("must not repeat an event type")
        return value


def _no_default(schema: JsonDict) -> None:
    schema.pop("default", None)


def _absent_not_null(schema: JsonDict) -> None:
    """The JSON schema of a field that may be left out but not sent as null: only its non-null form."""
    schema.pop("default", None)
    branches = schema.pop("anyOf", [])
    for branch in branches if isinstance(branches, list) else []:
        if isinstance(branch, dict) and branch != {"type": "null"}:
            schema.update(branch)


UploadId = Annotated[str, Field(pattern=r"^upl_[0-9a-z]{26}$")]
ImageUrl = Annotated[str, Field(min_length=1, max_length=2048, json_schema_extra={"pattern": _HTTP_URL})]


class ImageInput(BaseModel):
    """The video's first frame: an image at a URL we fetch, or one uploaded with POST /v1/uploads. Exactly
    one of the two."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        frozen=True,
        json_schema_extra={"minProperties": 1, "maxProperties": 1},
    )

    url: Annotated[
        ImageUrl | None,
        Field(
            description="An absolute http(s) URL of a PNG, JPEG or WebP image; it must be reachable from the "
            "internet (private, loopback and link-local addresses are refused).",
            json_schema_extra=_absent_not_null,
        ),
    ] = None
    upload_id: Annotated[
        UploadId | None,
        Field(description="The id POST /v1/uploads answered.", json_schema_extra=_absent_not_null),
    ] = None

    @field_validator("url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is None:
            raise ValueError("must not be null")
        return check_http_url(value)

    @field_validator("upload_id")
    @classmethod
    def _upload(cls, value: str | None) -> str | None:
        if value is None:
            raise ValueError("must not be null")
        return value

    @model_validator(mode="after")
    def _one(self) -> ImageInput:
        if len(self.model_fields_set) != 1:
            raise ValueError("give exactly one of url and upload_id")
        return self


class RoutingOptions(BaseModel):
    """How candidates are ordered (docs/providers.md, "Routing")."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    sort: Annotated[
        Sort | None,
        Field(
            description="price: the cheapest for this request first (before free capacity); speed: the "
            "shortest measured time to finish first (before price). Absent: the default order (healthy, "
            "free capacity, price, speed).",
            json_schema_extra=_absent_not_null,
        ),
    ] = None

    @field_validator("sort")
    @classmethod
    def _sort(cls, value: Sort | None) -> Sort:
        if value is None:
            raise ValueError("must not be null")
        return value


AUTO_PROVIDER = "auto"
_CHOICES = ", ".join(repr(p.value) for p in Provider)


def _provider_or_auto(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """One error for a value that is neither a provider nor "auto" (not one per branch of the union)."""
    try:
        return handler(value)
    except ValidationError:
        raise PydanticCustomError(
            "enum", "Input should be 'auto' or {expected}", {"expected": _CHOICES}
        ) from None


ProviderChoice = Annotated[
    Provider | Literal["auto"],
    WrapValidator(_provider_or_auto),
    Field(
        description='The provider, or "auto": any enabled provider that can make what is asked, in the '
        "routing order (see routing). The chosen one, and why, is the generation's route."
    ),
]


class GenerateRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    # The maximum length is the deployment's (``prompt_max_chars``): the OpenAPI document states it.
    prompt: Annotated[str, Field(min_length=1, description="Text description of the video.")]
    provider: ProviderChoice
    duration: Annotated[
        int,
        Field(
            ge=MIN_DURATION_S,
            le=MAX_DURATION_S,
            description='Seconds, 3 to 10, as a JSON integer: 5, not 5.0 or "5".',
        ),
    ]
    deadline_seconds: Annotated[
        int | None,
        Field(
            ge=1,
            le=MAX_DEADLINE_SECONDS,
            description="Optional: if the video is not finished this many seconds after the request, the "
            "generation fails with error code deadline_exceeded (the provider's task is cancelled where the "
            "provider allows it, and video.failed is sent). The Cancel-After header says the same.",
        ),
    ] = None
    aspect_ratio: Annotated[
        AspectRatio | None,
        Field(description="Width:height. Optional (the provider's default, 16:9); see GET /v1/providers."),
    ] = None
    resolution: Annotated[
        Resolution | None,
        Field(
            description="The frame's shorter side. Optional (the deployment's default for the provider); see "
            "GET /v1/providers."
        ),
    ] = None
    seed: Seed | None = None
    negative_prompt: Annotated[
        str | None,
        Field(
            min_length=1,
            max_length=MAX_NEGATIVE_PROMPT_CHARS,
            description="What the video should not show (where the provider takes one).",
        ),
    ] = None
    metadata: Metadata | None = None
    image: Annotated[
        ImageInput | None,
        Field(description="The first frame (image to video), where the provider takes one."),
    ] = None
    priority: Annotated[
        Priority | None,
        Field(
            description="Optional: high, normal (the default) or low. When your generations wait for the "
            "provider's capacity, yours start in this order (oldest first within each); it does not move "
            "you ahead of other accounts, which share the provider fairly."
        ),
    ] = None
    fallback_providers: Annotated[
        list[Provider] | None,
        Field(
            min_length=1,
            max_length=len(Provider),
            description="Optional: where else the generation may go, in order, after provider (with "
            '"auto": the only providers it may go to). Those that cannot make what is asked, or are not '
            "enabled, are skipped (the route says why). A generation moves on only when its attempt cost "
            "nothing (the provider was unreachable, answered 5xx or refused for capacity before making a "
            "task, or its breaker is open), or, with fallback_on_failure, when the provider failed a task "
            "it had accepted with a retriable error; never when whether a task was made is unknown.",
            json_schema_extra={"uniqueItems": True},
        ),
    ] = None
    routing: Annotated[RoutingOptions | None, Field(description="Optional: how candidates are ordered.")] = (
        None
    )
    fallback_on_failure: Annotated[
        bool | None,
        Field(
            description="Optional (default false): also move on to the next candidate when a provider "
            "accepted the task and then failed it with a retriable error (the provider may have charged "
            "for the failed try: see GET /v1/providers)."
        ),
    ] = None

    @property
    def routed(self) -> bool:
        """Whether the request asks for routing: "auto", fallbacks or a sort (else only its provider, as
        before routing existed)."""
        return self.provider == AUTO_PROVIDER or bool(self.fallback_providers) or self.routing is not None

    @model_validator(mode="after")
    def _fallbacks_once(self) -> GenerateRequest:
        given = self.fallback_providers or []
        if len(set(given)) != len(given):
            raise PydanticCustomError("unique", "fallback_providers must not repeat a provider")
        if self.provider in given:
            raise PydanticCustomError("unique", "fallback_providers must not repeat provider")
        return self

    retention_days: Annotated[
        int | None,
        Field(
            ge=1,
            description="Optional: delete the video, thumbnail and first frame this many days after the "
            "video is made, sooner than the deployment would (never later); its links stop working then.",
        ),
    ] = None

    def options(self) -> dict[str, Any]:
        """The optional fields about the video that were given (what a provider may not support), as JSON
        values."""
        return self.model_dump(mode="json", include={*VIDEO_OPTIONS, "image"}, exclude_none=True)

    @field_validator("negative_prompt")
    @classmethod
    def _negative_not_blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("must not be blank")
        return value

    @field_validator("prompt")
    @classmethod
    def _not_blank(cls, value: str, info: ValidationInfo) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        limit = (info.context or {}).get("prompt_max_chars")
        if limit is not None and len(value) > limit:
            raise ValueError(f"must be at most {limit} characters")
        return value

    @field_validator("retention_days")
    @classmethod
    def _shorter_only(cls, value: int | None, info: ValidationInfo) -> int | None:
        limit = (info.context or {}).get("retention_days_max")
        if value is not None and limit is not None and value > limit:
            raise ValueError(f"must be at most {limit}: this deployment keeps media {limit} days")
        return value


class WebhookUpdate(BaseModel):
    """PATCH /v1/webhooks/{id}: any of url, events and active; each is checked exactly as on creation, and an
    explicit null is refused rather than read as "unchanged"."""

    model_config = ConfigDict(
        extra="forbid", strict=True, frozen=True, json_schema_extra={"minProperties": 1}
    )

    # None only means "not sent": the validators refuse a null, and the document offers none.
    url: WebhookUrl | None = Field(default=None, json_schema_extra=_absent_not_null)
    events: WebhookEvents | None = Field(default=None, json_schema_extra=_absent_not_null)
    active: bool | None = Field(default=None, json_schema_extra=_absent_not_null)

    @field_validator("url")
    @classmethod
    def _url(cls, value: str | None) -> str:
        if value is None:
            raise ValueError("must not be null")
        return WebhookCreate._absolute_http(value)

    @field_validator("events")
    @classmethod
    def _events(cls, value: list[str] | None) -> list[str]:
        if value is None:
            raise ValueError("must not be null")
        return WebhookCreate._unique(value)

    @field_validator("active")
    @classmethod
    def _active(cls, value: bool | None) -> bool:
        if value is None:
            raise ValueError("must not be null")
        return value

    @model_validator(mode="after")
    def _not_empty(self) -> WebhookUpdate:
        if not self.model_fields_set:
            raise ValueError("must set at least one of url, events, active")
        return self


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


class RecoverRequest(BaseModel):
    """POST /v1/webhooks/{id}/recover: re-queue the endpoint's failed deliveries created since then."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    since: Timestamp


def _field_errors(exc: ValidationError) -> list[dict[str, str]]:
    errors = []
    for err in exc.errors(include_url=False):
        field = ".".join(str(p) for p in err["loc"]) or "body"
        message = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            message = "unknown field"
        errors.append({"field": field, "message": message, "code": err["type"]})
    return errors


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


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


Moment = Annotated[
    datetime, Field(description="ISO 8601 UTC with milliseconds, e.g. 2026-11-21T08:47:00.123Z")
]
# Identifiers: a prefix, then 26 lowercase base32 characters (time-ordered).
GenerationId = Annotated[str, Field(pattern=r"^gen_[0-9a-z]{26}$")]
WebhookId = Annotated[str, Field(pattern=r"^wh_[0-9a-z]{26}$")]
DeliveryId = Annotated[str, Field(pattern=r"^msg_[0-9a-z]{26}$")]
Secret = Annotated[
    str,
    Field(
        pattern=r"^whsec_[A-Za-z0-9+/]{43}=$",
        description="whsec_ + base64 of 32 random bytes: the HMAC key is this whole string as issued.",
    ),
]


class GenerationError(_Body):
    """Why a generation failed."""

    code: ErrorCode
    message: str
    provider_code: Annotated[
        str | None, Field(description="The provider's own error code, when it gave one.")
    ]
    retriable: Annotated[bool, Field(description="Whether submitting the same request again may succeed.")]


class TimelineStep(_Body):
    """A state the generation entered, and when."""

    status: Status
    at: Moment


class GenerationImage(_Body):
    """The first frame asked for: one of the two is set."""

    url: str | None
    upload_id: str | None


class RouteCandidate(_Body):
    provider: Provider
    reason: Annotated[str, Field(description="Why it is there: its health, capacity, price and speed.")]


class GenerationRoute(_Body):
    """Where the generation may go and why (only when the request asked for routing)."""

    requested: Annotated[str, Field(description='The provider asked for, or "auto".')]
    sort: Annotated[Sort | None, Field(description="The sort asked for; null: the default order.")]
    fallback_on_failure: bool
    candidates: Annotated[
        list[RouteCandidate],
        Field(min_length=1, description="In the order they are tried; provider is the one it is at now."),
    ]
    skipped: Annotated[
        list[RouteCandidate],
        Field(description="Providers that were not candidates: not enabled, or cannot make what is asked."),
    ]
    reason: Annotated[str | None, Field(description="Why it is at its provider now.")]


class GenerationAttempt(_Body):
    """One try at a provider."""

    provider: Provider
    started_at: Moment
    ended_at: Annotated[Moment | None, Field(description="Null while it is under way.")]
    error_code: Annotated[ErrorCode | None, Field(description="Why it failed; null if it made the video.")]
    cost: Annotated[
        float | None,
        Field(
            ge=0,
            description="USD the provider charged for it (0 if it made no task); null while under "
            "way, or if its price is not known.",
        ),
    ]


class Generation(_Body):
    """A generation as clients see it."""

    id: GenerationId
    status: Status
    prompt: str
    provider: Provider
    duration: Annotated[int, Field(ge=MIN_DURATION_S, le=MAX_DURATION_S)]
    video_url: Annotated[str | None, Field(description="A signed link, once completed.")]
    thumbnail_url: Annotated[str | None, Field(description="A signed link, once completed.")]
    error: Annotated[GenerationError | None, Field(description="Why it failed, once failed.")]
    progress: Annotated[
        int | None,
        Field(
            ge=0,
            le=100,
            description="How far the provider is, 0 to 100, while processing (100 once completed); null when "
            "the provider does not say.",
        ),
    ]
    queue_reason: Annotated[
        QueueReason | None,
        Field(
            description="Why a queued generation waits: account_concurrency (your account's cap on "
            "generations in flight), provider_capacity (the provider's capacity is in use: it starts as soon "
            "as a slot frees, in fair turn with other accounts) or provider (the provider's own queue); null "
            "otherwise."
        ),
    ]
    queue_position: Annotated[
        int | None,
        Field(
            ge=1,
            description="While it waits for capacity (account_concurrency or provider_capacity): its place "
            "among your account's generations waiting at that provider, 1 being the next of yours to start "
            "(other accounts' work is interleaved fairly). Given when one generation is read; null in lists "
            "and otherwise.",
        ),
    ]
    priority: Annotated[Priority, Field(description="As asked (normal by default).")]
    timeline: Annotated[
        list[TimelineStep], Field(min_length=1, description="Every state it entered, oldest first.")
    ]
    aspect_ratio: Annotated[AspectRatio | None, Field(description="As asked; null: the provider's default.")]
    resolution: Annotated[Resolution | None, Field(description="As asked; null: the deployment's default.")]
    seed: Annotated[int | None, Field(ge=0, le=MAX_SEED, description="As asked; null if none was given.")]
    negative_prompt: Annotated[str | None, Field(description="As asked; null if none was given.")]
    metadata: Annotated[dict[str, str], Field(description="Your metadata, as given ({} if none).")]
    image: Annotated[GenerationImage | None, Field(description="The first frame asked for; null if none.")]
    route: Annotated[
        GenerationRoute | None,
        Field(description="Its candidates and why, when the request asked for routing; null otherwise."),
    ]
    attempts: Annotated[
        list[GenerationAttempt], Field(description="Every try at a provider, oldest first ([] before one).")
    ]
    estimated_cost: Annotated[
        float | None,
        Field(ge=0, description="USD its first candidate charges for it, at creation; null if not known."),
    ]
    cost: Annotated[
        float | None,
        Field(
            ge=0,
            description="USD its providers charged, once finished: every try whose task was made (or failed "
            "where that provider charges failures); null until finished, or if a price is not known.",
        ),
    ]
    created_at: Moment
    updated_at: Moment
    deleted: Annotated[
        bool,
        Field(
            description="Deleted (DELETE /v1/generations/{id}): its media is gone and its prompt, "
            "negative_prompt, metadata, image and links are erased; the rest stays, so usage stays exact."
        ),
    ]
    deleted_at: Annotated[Moment | None, Field(description="When it was deleted; null if it was not.")]


class GenerationList(_Body):
    """A page of generations, newest first."""

    data: list[Generation]
    next_cursor: Annotated[
        str | None, Field(description="Pass as cursor for the next page; null on the last page.")
    ]


class Upload(_Body):
    """An image uploaded for use as a first frame (``"image": {"upload_id": …}`` on POST /v1/generate)."""

    id: UploadId
    content_type: Annotated[
        Literal["image/png", "image/jpeg", "image/webp"], Field(description="From its content.")
    ]
    bytes: Annotated[int, Field(ge=1)]
    width: Annotated[int, Field(ge=1)]
    height: Annotated[int, Field(ge=1)]
    created_at: Moment
    expires_at: Annotated[Moment, Field(description="Usable in a request until then.")]


class ProviderCapabilities(_Body):
    """What a provider can make."""

    durations: Annotated[
        list[int], Field(description="The lengths it makes; a request's duration is mapped to the nearest.")
    ]
    aspect_ratios: list[AspectRatio]
    resolutions: list[Resolution]
    default_resolution: Resolution
    image_input: Annotated[bool, Field(description="Whether it takes a first frame.")]
    seed: bool
    negative_prompt: bool


class ProviderKeyCapacity(_Body):
    """One of the provider's keys (pools): its own limit and load."""

    name: Annotated[str | None, Field(description="The key's name; null for a provider's only key.")]
    limit: Annotated[int | None, Field(description="Configured concurrency; null: no limit of ours.")]
    effective_limit: Annotated[
        int | None,
        Field(description="What is used now: lowered when the provider refuses for capacity; null: none."),
    ]
    running: Annotated[int, Field(ge=0, description="Generations at the provider on this key now.")]
    paused_until: Annotated[
        Moment | None, Field(description="No new work starts on this key before then (after a refusal).")
    ]


class ProviderCapacity(_Body):
    """What the whole deployment runs at a provider at once, across every orchestrator instance."""

    limit: Annotated[
        int | None, Field(description="The sum of the keys' limits; null if a key has no limit of ours.")
    ]
    effective_limit: Annotated[int | None, Field(description="The sum of the keys' effective limits.")]
    running: Annotated[int, Field(ge=0)]
    waiting: Annotated[int, Field(ge=0, description="Generations of every account waiting for a slot.")]
    keys: list[ProviderKeyCapacity]


class ProviderHealth(_Body):
    """How the provider is doing, from its recent attempts (across its keys)."""

    state: Annotated[
        Literal["operational", "degraded", "down"],
        Field(
            description="down: its breaker is open (routing skips it); degraded: half-open (probing), a "
            "key's breaker is not closed, or under 80% of recent attempts succeeded; operational otherwise."
        ),
    ]
    breaker: Annotated[Breaker, Field(description="closed, half_open (one probe at a time) or open.")]
    success_rate: Annotated[
        float | None, Field(ge=0, le=1, description="Of its recent attempts; null before any.")
    ]
    p50_seconds: Annotated[
        float | None, Field(ge=0, description="Median time to finish of its recent tasks; null before any.")
    ]
    samples: Annotated[int, Field(ge=0, description="Recent attempts counted.")]


class ProviderPrice(_Body):
    model: str
    resolution: Annotated[Resolution | None, Field(description="null: any resolution.")]
    usd_per_second: Annotated[float, Field(ge=0, description="USD per second of video it makes.")]


class ProviderInfo(_Body):
    id: Provider
    enabled: Annotated[bool, Field(description="Whether this deployment offers it.")]
    capabilities: ProviderCapabilities
    capacity: Annotated[
        ProviderCapacity | None,
        Field(description="Its capacity and load; null until an orchestrator has started with it enabled."),
    ]
    health: Annotated[
        ProviderHealth | None, Field(description="Its breaker and recent results; null when not enabled.")
    ]
    model: Annotated[
        str | None, Field(description="The model this deployment asks it for (what prices apply).")
    ]
    prices: Annotated[
        list[ProviderPrice],
        Field(description="What it charges, per model and resolution (docs/providers.md says the sources)."),
    ]


class ProviderList(_Body):
    """Every provider the API knows, whether this deployment offers it, and what it can make."""

    data: list[ProviderInfo]


class Webhook(_Body):
    """A webhook endpoint. Its signing secret is never part of it."""

    id: WebhookId
    url: str
    events: list[EventType]
    active: bool
    disabled_reason: Annotated[str | None, Field(description="Why it was disabled; null while active.")]
    created_at: Moment
    updated_at: Moment


class WebhookCreated(Webhook):
    """A new webhook endpoint with its signing secret, shown only this once."""

    secret: Secret


class WebhookList(_Body):
    """All of the account's webhook endpoints, oldest first."""

    data: list[Webhook]


class RotatedSecret(_Body):
    """The new signing secret, shown only this once."""

    id: WebhookId
    secret: Secret


class DeliveryAttempt(_Body):
    at: Moment
    status_code: Annotated[int | None, Field(description="The endpoint's HTTP status; null if none came.")]
    latency_ms: float | None
    error: Annotated[str | None, Field(description="What went wrong, if anything.")]


class Delivery(_Body):
    """One event's delivery to one endpoint, with every attempt made."""

    id: Annotated[DeliveryId, Field(description="Also the webhook-id header of every attempt.")]
    webhook_id: str
    event_id: str
    event_type: Annotated[
        str,
        Field(
            description="Its event's type: an EventType, or webhook.test. The event is GET /v1/events/{id}."
        ),
    ]
    generation_id: str | None
    status: Literal["pending", "succeeded", "failed"]
    failure_reason: Annotated[str | None, Field(description="Why it failed for good, once failed.")]
    attempts: list[DeliveryAttempt]
    next_attempt_at: Annotated[Moment | None, Field(description="When it is tried next; null once finished.")]
    created_at: Moment
    updated_at: Moment


class DeliveryList(_Body):
    """A page of an endpoint's deliveries, newest first."""

    data: list[Delivery]
    next_cursor: Annotated[
        str | None, Field(description="Pass as cursor for the next page; null on the last page.")
    ]


class Recovered(_Body):
    """How many failed deliveries were queued again."""

    requeued: Annotated[int, Field(ge=0)]


COST = "USD their providers charged (finished generations' cost, every try counted)."


class UsageRow(_Body):
    """One day's generations of one provider that ended in (or are in) one status."""

    date: Annotated[
        str, Field(pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$", description="The UTC day they were made.")
    ]
    provider: Provider
    status: Status
    generations: Annotated[int, Field(ge=0)]
    seconds: Annotated[int, Field(ge=0, description="Seconds of video asked for.")]
    video_seconds: Annotated[int, Field(ge=0, description="Seconds of video made: completed ones only.")]
    cost: Annotated[float, Field(ge=0, description=COST)]


class UsageTotals(_Body):
    generations: Annotated[int, Field(ge=0)]
    seconds: Annotated[int, Field(ge=0, description="Seconds of video asked for.")]
    video_seconds: Annotated[int, Field(ge=0, description="Seconds of video made: completed ones only.")]
    cost: Annotated[float, Field(ge=0, description=COST)]


class ProviderCost(_Body):
    """What one provider charged for the range's generations, all their tries there counted."""

    provider: Provider
    attempts: Annotated[int, Field(ge=0, description="Tries at it.")]
    cost: Annotated[float, Field(ge=0, description="USD.")]


class KeyUsage(UsageTotals):
    """What one API key made."""

    api_key_id: Annotated[
        str | None, Field(description="The key's id; null for generations made before keys were recorded.")
    ]


BudgetName = Literal["daily_video_seconds", "monthly_video_seconds", "daily_cost", "monthly_cost"]


class BudgetRemaining(_Body):
    """One hard budget of the account or of one key as it stands now: its limit, what is used (reserved by
    the period's generations, less what failed ones gave back) and left, and when it resets."""

    api_key_id: Annotated[str | None, Field(description="The key whose budget it is; null: the account's.")]
    budget: BudgetName
    limit: Annotated[
        float, Field(ge=0, description="Seconds of video; US dollars (to the millionth) for a cost budget.")
    ]
    used: Annotated[float, Field(ge=0)]
    remaining: Annotated[float, Field(ge=0)]
    period_start: Moment
    resets_at: Moment


class Usage(_Body):
    """The account's generations made in [start, end), counted once each, from the generations themselves."""

    start: Moment
    end: Moment
    api_key_id: Annotated[str | None, Field(description="Only this key's generations, when asked for.")]
    total: UsageTotals
    data: Annotated[list[UsageRow], Field(description="By day, provider and status; oldest day first.")]
    api_keys: Annotated[list[KeyUsage], Field(description="The same totals per API key.")]
    providers: Annotated[
        list[ProviderCost],
        Field(description="Cost by provider: what each provider charged for the tries made there."),
    ]
    budgets: Annotated[
        list[BudgetRemaining],
        Field(
            description="What is left now of each budget of the account and of the key asked about "
            "(api_key_id), or else of the key making the request; only budgets with a limit."
        ),
    ]


class AuditActor(_Body):
    type: Annotated[
        AuditActorType,
        Field(
            description="api_key: a request with one of your keys; operator: the videogen command; "
            "system: a service on its own (e.g. the notifier disabling an endpoint)."
        ),
    ]
    id: Annotated[str | None, Field(description="The key's id, or which service; null for an operator.")]


class AuditTarget(_Body):
    type: Annotated[str, Field(description="api_key, webhook, delivery, budget, generation or upload")]
    id: str


class AuditEvent(_Body):
    """One change to the account's keys, budgets or webhooks, or a budget threshold reached. Never holds a
    secret."""

    id: Annotated[str, Field(pattern=r"^aud_[0-9a-z]{26}$")]
    type: AuditEventType
    actor: AuditActor
    target: AuditTarget
    data: Annotated[dict[str, Any], Field(description="What changed: e.g. the fields before and after.")]
    request_id: Annotated[str | None, Field(description="The request that made the change, if one did.")]
    created_at: Moment


class AuditEventList(_Body):
    """A page of the account's audit events, newest first."""

    data: list[AuditEvent]
    next_cursor: Annotated[
        str | None, Field(description="Pass as cursor for the next page; null on the last page.")
    ]


class EventSubject(_Body):
    """What an event is about: a generation, a webhook endpoint, or the account itself."""

    type: SubjectType
    id: str


class Event(_Body):
    """Something that happened on the account, as its webhooks deliver it."""

    id: Annotated[str, Field(pattern=r"^evt_[0-9a-z_]+$", description="Also its deliveries' event_id.")]
    type: Annotated[str, Field(description="An EventType, or webhook.test.")]
    subject: EventSubject
    data: Annotated[dict[str, Any], Field(description="The data of each of its deliveries, as delivered.")]
    created_at: Annotated[Moment, Field(description="When it happened: its deliveries' timestamp.")]


class EventList(_Body):
    """A page of the account's events, newest first."""

    data: list[Event]
    next_cursor: Annotated[
        str | None, Field(description="Pass as cursor for the next page; null on the last page.")
    ]


class Problem(_Body):
    """An RFC 9457 problem: every error the API returns, as application/problem+json."""

    type: Annotated[
        str, Field(pattern=r"^urn:videogen:problem:[a-z0-9-]+$", description="What kind of error.")
    ]
    title: str
    status: Annotated[int, Field(ge=400, le=599, description="The HTTP status, repeated.")]
    detail: Annotated[str, Field(description="What happened; absent when the title says it all.")] = Field(
        default="", json_schema_extra=_no_default
    )
    instance: Annotated[str, Field(description="The request path.")]


class FieldError(_Body):
    field: Annotated[str, Field(description="The field, parameter or header, dotted for nested fields.")]
    message: str
    code: str


class ValidationProblem(Problem):
    """A problem with the request's fields, parameters or headers: one entry per failing one."""

    errors: Annotated[list[FieldError], Field(min_length=1)]
