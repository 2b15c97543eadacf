"""Filters for GET /v1/generations (and the same parameters of GET /v1/audit-events and of an endpoint's
delivery log), read from the query string.

- ``status``: any of queued, processing, completed, failed; repeat the parameter or separate with commas.
- ``provider``: any of the providers (``videogen_common.domain.Provider``); the same way.
- ``created_after`` / ``created_before``: ISO 8601 timestamps with a time zone (``Z`` or an offset; in a URL
  write ``+`` as ``%2B``). Both bounds are exclusive; ``created_after`` later than ``created_before`` is
  a 422.
- ``metadata[KEY]=VALUE``: generations whose metadata has exactly that value under ``KEY``; several must
  all match.

Each is a field of a query model, read by ``query.parse_query``; ``limit`` and ``cursor`` (see ``paging``)
come last in each listing's model, and are judged once the filters are well-formed. Filters only narrow the
set; order and paging stay as they are. A status filter applies to each page as it is read, so a generation
that changes status during a walk is judged by its status then.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, ValidationInfo

from videogen_api.paging import DEFAULT_LIMIT, Cursor, Limit
from videogen_api.query import Param, once, refused
from videogen_api.schemas.generation_inputs import METADATA_KEY
from videogen_common.domain import Provider, Status
from videogen_common.repositories.generation_reads import GenerationFilter

E = TypeVar("E", bound=StrEnum)

_METADATA_KEY = re.compile(METADATA_KEY)
_TIMESTAMP = "must be an ISO 8601 timestamp with a time zone, e.g. 2026-11-21T08:47:00Z (+ in a URL is %2B)"


# --- Kinds of query field ----------------------------------------------------------------------------------


def choices(enum: type[E]) -> Callable[[Any], tuple[E, ...]]:
    """Any of ``enum``'s values: the parameter repeated, or values separated by commas; each once, in the
    order first given."""
    allowed = {e.value: e for e in enum}

    def validate(values: Any) -> tuple[E, ...]:
        if not isinstance(values, list):  # made in code, not parsed
            return tuple(values)
        chosen: dict[E, None] = {}
        for raw in values:
            for value in raw.split(","):
                member = allowed.get(value.strip())
                if member is None:
                    raise refused("enum", f"{value.strip()!r} is not one of {', '.join(allowed)}")
                chosen[member] = None
        return tuple(chosen)

    return validate


def choices_param(component: str, enum: type[StrEnum]) -> Param:
    """A repeatable parameter whose every value is one of ``enum`` or several separated by commas."""
    one = "(?:" + "|".join(e.value for e in enum) + ")"
    listed = rf"^[ \t]*{one}[ \t]*(?:,[ \t]*{one}[ \t]*)*$"
    schema = {
        "type": "array",
        "items": {
            "anyOf": [
                {"$ref": f"#/components/schemas/{enum.__name__}"},
                {"type": "string", "pattern": listed, "description": "several, comma-separated"},
            ]
        },
    }
    return Param(component, schema, style="form")


def choices_description(what: str) -> str:
    return f"{what}: repeat the parameter or separate values with commas."


def timestamp(values: list[str]) -> datetime:
    """An ISO 8601 timestamp with a time zone, given once, as UTC."""
    message = _TIMESTAMP
    if len(values) == 1:
        try:
            moment = datetime.fromisoformat(values[0])
            if moment.utcoffset() is not None:
                return moment.astimezone(UTC)
            message = "must carry a time zone (Z or an offset such as %2B02:00)"
        except (ValueError, OverflowError):
            pass
    else:
        message = "give it once"
    raise refused("timestamp", message)


def _not_before_created_after(before: datetime | None, info: ValidationInfo) -> datetime | None:
    after = info.data.get("created_after")
    if before is not None and after is not None and after > before:
        raise refused("range", "must not be later than created_before", field="created_after")
    return before


def _bound_param(component: str) -> Param:
    return Param(component, {"type": "string", "format": "date-time"})


def _bound_description(what: str) -> str:
    return what + " ISO 8601 with a time zone (Z or an offset; write + as %2B in a URL); exclusive."


# ``created_after`` and ``created_before``, both exclusive; a range that ends before it starts is refused.
CreatedAfter = Annotated[
    datetime | None,
    BeforeValidator(timestamp),
    _bound_param("CreatedAfter"),
    Field(description=_bound_description("Only those created after this time.")),
]
CreatedBefore = Annotated[
    datetime | None,
    BeforeValidator(timestamp),
    AfterValidator(_not_before_created_after),
    _bound_param("CreatedBefore"),
    Field(description=_bound_description("Only those created before this time.")),
]


def _metadata_key(key: str) -> str:
    if not _METADATA_KEY.fullmatch(key):
        raise refused("metadata_key", "a metadata key is 1 to 40 letters, digits, _ or -")
    return key


def _metadata_value(values: Any) -> Any:
    return once(values, code="metadata_value") if isinstance(values, list) else values


_METADATA_PARAM = Param(
    "Metadata",
    {
        "type": "object",
        "propertyNames": {"pattern": METADATA_KEY},
        "additionalProperties": {"type": "string"},
    },
    deep=True,
)


# ``metadata[KEY]=VALUE`` parameters, each key once, documented as the parameter component "BatchMetadata"
# (POST /v1/batches's JSONL form).
BatchMetadataParams = Annotated[
    dict[
        Annotated[str, AfterValidator(_metadata_key)],
        Annotated[str, BeforeValidator(_metadata_value)],
    ],
    Param("BatchMetadata", _METADATA_PARAM.schema, deep=True),
]


# --- GET /v1/generations ------------------------------------------------------------------------------------


class GenerationFilters(BaseModel):
    """GET /v1/generations's query string."""

    model_config = ConfigDict(frozen=True, populate_by_name=True)

    statuses: Annotated[
        tuple[Status, ...], BeforeValidator(choices(Status)), choices_param("GenerationStatus", Status)
    ] = Field((), alias="status", description=choices_description("Only these statuses"))
    providers: Annotated[
        tuple[Provider, ...],
        BeforeValidator(choices(Provider)),
        choices_param("GenerationProvider", Provider),
    ] = Field((), alias="provider", description=choices_description("Only these providers"))
    created_after: CreatedAfter = None
    created_before: CreatedBefore = None
    metadata: Annotated[
        dict[
            Annotated[str, AfterValidator(_metadata_key)],
            Annotated[str, BeforeValidator(_metadata_value)],
        ],
        _METADATA_PARAM,
    ] = Field(
        default_factory=dict,
        description="metadata[KEY]=VALUE: only those whose metadata has exactly VALUE under KEY; "
        "several must all match.",
    )
    limit: Limit = DEFAULT_LIMIT
    cursor: Cursor = None

    def to_filter(self) -> GenerationFilter:
        """What the listing keeps, for the repository."""
        return GenerationFilter(
            statuses=self.statuses,
            providers=[provider.value for provider in self.providers],
            created_after=self.created_after,
            created_before=self.created_before,
            metadata=self.metadata,
        )
