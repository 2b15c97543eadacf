"""A generation: what POST /v1/generate takes (``GenerateRequest``, with its first frame and routing options)
and what the generation reads are answered with (``Generation``, ``GenerationList``)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from videogen_api.schemas.common import (
    Body,
    Moment,
    NextCursor,
)
from videogen_api.schemas.generation_inputs import (
    AUTO_PROVIDER,
    MAX_NEGATIVE_PROMPT_CHARS,
    FallbackChoice,
    ImageInput,
    Metadata,
    ModelId,
    ProviderChoice,
    RoutingOptions,
    Seed,
    fallback_parts,
)
from videogen_common.capabilities import MAX_SEED, AspectRatio, Resolution
from videogen_common.domain import MAX_DURATION_S, MIN_DURATION_S, Priority, Provider, Status
from videogen_common.failures import ErrorCode
from videogen_common.generations import VIDEO_OPTIONS, QueueReason
from videogen_common.routing import Sort

MAX_DEADLINE_SECONDS = 86_400


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
    model: Annotated[
        ModelId | None,
        Field(
            description="Optional: the model to ask of the provider (GET /v1/models lists them, with what "
            "each makes and its price); absent: the provider's default model. A model that cannot make what "
            "is asked (its durations: a duration longer than its longest is refused; ratios, resolutions, "
            'first frame, seed, negative prompt) is a 422 naming its limits. With "auto" or fallbacks, a '
            "candidate named without a model is asked for this one, and skipped if it does not serve it.",
        ),
    ] = None
    fallback_providers: Annotated[
        list[FallbackChoice] | None,
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
        given = [fallback_parts(choice)[0] for choice in self.fallback_providers or []]
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


# Identifiers: a prefix, then 26 lowercase base32 characters (time-ordered).
GenerationId = Annotated[str, Field(pattern=r"^gen_[0-9a-z]{26}$")]


class GenerationError(Body):
    """Why a generation failed."""

    code: ErrorCode
    message: str
    provider_code: Annotated[
        str | None, Field(description="The provider's own error code, when it gave one.")
    ]
    retriable: Annotated[bool, Field(description="Whether submitting the same request again may succeed.")]


class TimelineStep(Body):
    """A state the generation entered, and when."""

    status: Status
    at: Moment


class GenerationImage(Body):
    """The first frame asked for: one of the two is set."""

    url: str | None
    upload_id: str | None


class RouteCandidate(Body):
    provider: Provider
    model: Annotated[str | None, Field(description="The model asked of it; null: its default model.")]
    reason: Annotated[str, Field(description="Why it is there: its health, capacity, price and speed.")]


class GenerationRoute(Body):
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


class GenerationAttempt(Body):
    """One try at a provider."""

    provider: Provider
    model: Annotated[str | None, Field(description="The model it asked for; null if not recorded.")]
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


class Generation(Body):
    """A generation as clients see it."""

    id: GenerationId
    status: Status
    prompt: str
    provider: Provider
    model: Annotated[
        str | None,
        Field(
            description="The model asked of its provider: the one named, or the provider's default; a "
            "move to another candidate takes that candidate's. Null for generations made before models."
        ),
    ]
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


class GenerationList(Body):
    """A page of generations, newest first."""

    data: list[Generation]
    next_cursor: NextCursor
