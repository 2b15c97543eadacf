"""A batch: what POST /v1/batches takes (``BatchRequest``: items, each a ``BatchItem``, that is the body of
POST /v1/generate plus an optional ``custom_id``; or the same items as JSONL) and what the batch reads are
answered with (``Batch``, ``BatchList``, ``BatchGeneration``, ``BatchGenerationList``, ``BatchCancel``)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from videogen_api.schemas.common import BatchStatus, Body, Moment, NextCursor, OnInvalid, ValidationProblem
from videogen_api.schemas.generation_inputs import Metadata
from videogen_api.schemas.generations import GenerateRequest, Generation

MAX_ITEMS = 10_000
# Invalid items a refusal lists (the first ones, by index).
MAX_LISTED_ERRORS = 100
CUSTOM_ID = r"^[A-Za-z0-9_.:-]{1,64}$"

BatchId = Annotated[str, Field(pattern=r"^bat_[0-9a-z]{26}$")]
CustomId = Annotated[
    str,
    Field(
        pattern=CUSTOM_ID,
        description="Your id for the item (1 to 64 letters, digits and _ . : -), unique within the batch: "
        "it comes back with the item's generation and result.",
    ),
]


class BatchItem(GenerateRequest):
    """One item: the body of POST /v1/generate, with your ``custom_id``. Its priority is low unless given."""

    custom_id: CustomId | None = None


class BatchOptions(BaseModel):
    """The batch's options (in a JSON body beside ``items``; as query parameters with JSONL)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    metadata: Metadata = Field(default_factory=dict)
    on_invalid: Annotated[
        OnInvalid,
        Field(
            description="refuse (the default): a batch with an invalid item is refused whole (422, each bad "
            "item by index and custom_id); skip: accepted with the valid items, the others listed in refused."
        ),
    ] = "refuse"
    item_events: Annotated[
        bool,
        Field(
            description="false: the items send no video.* webhooks; batch.completed is the one event. "
            "true by default."
        ),
    ] = True


class BatchRequest(BatchOptions):
    """POST /v1/batches as JSON."""

    items: Annotated[
        list[BatchItem],
        Field(min_length=1, max_length=MAX_ITEMS, description=f"1 to {MAX_ITEMS} items."),
    ]


class BatchCounts(Body):
    total: Annotated[int, Field(ge=0, description="Items accepted.")]
    queued: Annotated[int, Field(ge=0, description="Waiting explicitly (status queued).")]
    processing: Annotated[int, Field(ge=0, description="Unfinished, not queued.")]
    completed: Annotated[int, Field(ge=0)]
    failed: Annotated[int, Field(ge=0, description="Failed, but for those canceled.")]
    canceled: Annotated[int, Field(ge=0)]


class ItemError(Body):
    field: str
    message: str
    code: str


class RefusedItem(Body):
    index: Annotated[int, Field(ge=0, description="Its place in the batch, from 0.")]
    custom_id: Annotated[str | None, Field(description="As given; null if none was.")]
    errors: list[ItemError]


class BatchError(Body):
    """What went wrong while a batch was accepted (its api stopped while writing its items)."""

    code: Annotated[
        str,
        Field(
            description="batch_not_written: no item was written, the batch failed; items_not_written: some "
            "were, and they are the batch (the others were not accepted)."
        ),
    ]
    message: str


class Batch(Body):
    """A batch as clients see it."""

    id: BatchId
    object: Annotated[str, Field(pattern="^batch$")]
    status: Annotated[
        BatchStatus,
        Field(
            description="validating: its items are being written; in_progress; canceling: a cancel was asked "
            "and items still run; completed or canceled: every item has ended; failed: its acceptance was "
            "cut short before any item was written (see error)."
        ),
    ]
    counts: BatchCounts
    refused: Annotated[
        list[RefusedItem], Field(description="Items refused at acceptance (on_invalid skip), by index.")
    ]
    item_events: bool
    metadata: dict[str, str]
    estimated_cost: Annotated[float | None, Field(ge=0, description="USD, the items' estimates summed.")]
    cost: Annotated[float, Field(ge=0, description="USD charged so far for its ended items.")]
    created_at: Moment
    finished_at: Annotated[Moment | None, Field(description="When its last item ended; null until then.")]
    error: Annotated[
        BatchError | None,
        Field(
            description="Null, unless its acceptance was cut short (the api stopped while writing its items) "
            "and the reconciler settled it: failed with none written, or in progress with those written."
        ),
    ]


class BatchList(Body):
    data: list[Batch]
    next_cursor: NextCursor


class BatchGeneration(Generation):
    """An item of a batch: its generation, with the batch's id and your custom_id."""

    batch_id: BatchId
    custom_id: Annotated[str | None, Field(description="As given; null if none was.")]


class BatchGenerationList(Body):
    data: list[BatchGeneration]
    next_cursor: NextCursor


class BatchCancel(Body):
    """What a cancel did."""

    batch: Batch
    canceled: Annotated[int, Field(ge=0, description="Items canceled now (they had not started).")]
    not_canceled: Annotated[
        list[str], Field(description="Ids of unfinished items that had started, left to finish.")
    ]


class BatchProblem(ValidationProblem):
    """A batch refused for its items: the first of them, each by index and custom_id with its errors."""

    items: Annotated[list[RefusedItem], Field(min_length=1, max_length=MAX_LISTED_ERRORS)]
    invalid_count: Annotated[int, Field(ge=1, description="How many items were invalid in all.")]


def item_view(generation: dict[str, Any], batch_id: str, custom_id: str | None) -> dict[str, Any]:
    return {**generation, "batch_id": batch_id, "custom_id": custom_id}
