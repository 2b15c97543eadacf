"""The parts of a generation's request that are types of their own: its metadata, its first frame
(``ImageInput``), its routing options, and the provider, model and fallback choices."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from videogen_api.schemas.common import (
    HTTP_URL,
    Auto,
    absent_not_null,
    check_http_url,
)
from videogen_api.schemas.uploads import UploadId
from videogen_common.capabilities import MAX_SEED
from videogen_common.domain import Provider
from videogen_common.routing import AUTO, Sort

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


ImageUrl = Annotated[str, Field(min_length=1, max_length=2048, json_schema_extra={"pattern": HTTP_URL})]


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
            json_schema_extra=absent_not_null,
        ),
    ] = None
    upload_id: Annotated[
        UploadId | None,
        Field(description="The id POST /v1/uploads answered.", json_schema_extra=absent_not_null),
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
            json_schema_extra=absent_not_null,
        ),
    ] = None

    @field_validator("sort")
    @classmethod
    def _sort(cls, value: Sort | None) -> Sort:
        if value is None:
            raise ValueError("must not be null")
        return value


AUTO_PROVIDER = AUTO
_CHOICES = ", ".join(repr(p.value) for p in Provider)


def _provider_or_auto(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """One error for a value that is neither a provider nor "auto" (not one per branch of the union)."""
    try:
        return handler(value)
    except ValidationError:
        raise PydanticCustomError(
            "enum", "Input should be {auto} or {expected}", {"auto": repr(AUTO), "expected": _CHOICES}
        ) from None


ProviderChoice = Annotated[
    Provider | Auto,
    WrapValidator(_provider_or_auto),
    Field(
        description='The provider, or "auto": any enabled provider that can make what is asked, in the '
        "routing order (see routing). The chosen one, and why, is the generation's route."
    ),
]


def _fallback_choice(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """One error for a value that is neither a provider nor "provider:model"."""
    try:
        return handler(value)
    except ValidationError:
        raise PydanticCustomError(
            "enum",
            "Input should be a provider ({expected}) or provider:model",
            {"expected": _CHOICES},
        ) from None


MAX_MODEL_CHARS = 200
ModelId = Annotated[
    str, Field(min_length=1, max_length=MAX_MODEL_CHARS, pattern=r"^[A-Za-z0-9][\x21-\x7e]*$")
]
ProviderModel = Annotated[
    str,
    Field(
        max_length=MAX_MODEL_CHARS + 10,
        pattern=rf"^({'|'.join(p.value for p in Provider)}):[A-Za-z0-9][\x21-\x7e]*$",
    ),
]
FallbackChoice = Annotated[
    Provider | ProviderModel,
    WrapValidator(_fallback_choice),
    Field(
        description="A provider (its default model, or the model named in model if it serves it), or "
        '"provider:model" (that model there, e.g. "luma:ray-flash-2").'
    ),
]


def fallback_parts(choice: Provider | str) -> tuple[Provider, str | None]:
    """A fallback's provider, and the model it names (None: none named)."""
    if isinstance(choice, Provider):
        return choice, None
    provider, _, model = choice.partition(":")
    return Provider(provider), model or None
