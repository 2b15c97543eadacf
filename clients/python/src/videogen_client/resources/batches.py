"""``client.batches``: many generations submitted in one call (``POST /v1/batches``), watched as one object:
``create``, ``retrieve``, ``list``, ``generations`` (its items), ``cancel``, ``wait`` (with a progress
callback) and ``results`` (its results file, item by item). The batch's models and the sync twin
(``Batches``) are here too."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from videogen_client._paging import walk
from videogen_client._portal import Twin, blocking, iterated
from videogen_client._transport import Resource, status_error_of
from videogen_client.enums import Status
from videogen_client.errors import APITimeoutError
from videogen_client.models import FieldError, Generation, GenerationError, Model, Problem
from videogen_client.resources.generations import CreateParams

BatchStatus = Literal["validating", "in_progress", "completed", "canceling", "canceled", "failed"]
OnInvalid = Literal["refuse", "skip"]
FINISHED = ("completed", "canceled", "failed")


class BatchCounts(Model):
    total: int
    queued: int
    processing: int
    completed: int
    failed: int
    canceled: int

    @property
    def ended(self) -> int:
        return self.completed + self.failed + self.canceled


class ItemError(Model):
    field: str
    message: str
    code: str


class RefusedItem(Model):
    index: int
    custom_id: str | None = None
    errors: list[ItemError]


class BatchError(Model):
    """Why a batch's acceptance was cut short: ``batch_not_written`` (failed, no item) or
    ``items_not_written`` (it is the items written)."""

    code: str
    message: str


class Batch(Model):
    id: str
    object: str = "batch"
    status: BatchStatus | str
    counts: BatchCounts
    refused: list[RefusedItem] = Field(default_factory=list)
    item_events: bool = True
    metadata: dict[str, str] = Field(default_factory=dict)
    estimated_cost: float | None = None
    cost: float = 0.0
    created_at: datetime
    finished_at: datetime | None = None
    error: BatchError | None = None

    @property
    def finished(self) -> bool:
        return self.status in FINISHED


class BatchList(Model):
    data: list[Batch]
    next_cursor: str | None = None


class BatchGeneration(Generation):
    batch_id: str
    custom_id: str | None = None


class BatchGenerationList(Model):
    data: list[BatchGeneration]
    next_cursor: str | None = None


class BatchCancel(Model):
    batch: Batch
    canceled: int
    not_canceled: list[str]


class BatchProblem(Problem):
    """A batch refused for its items (422): the first 100 by index, and how many in all."""

    errors: list[FieldError] = Field(default_factory=list)
    items: list[RefusedItem] = Field(default_factory=list)
    invalid_count: int = 0


class BatchResult(Model):
    """One line of a batch's results file."""

    id: str
    custom_id: str | None = None
    status: Status | str
    video_url: str | None = None
    thumbnail_url: str | None = None
    error: GenerationError | None = None
    cost: float | None = None


Progress = Callable[[Batch], object]


class BatchItem(CreateParams, total=False):
    """An item: what ``generations.create`` takes (but ``idempotency_key``: the batch has its own), and
    ``custom_id``, your id for it (unique within the batch)."""

    custom_id: str | None


def _body(
    items: Sequence[BatchItem | Mapping[str, Any]],
    metadata: Mapping[str, str] | None,
    on_invalid: OnInvalid | None,
    item_events: bool | None,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "items": [
            {k: v for k, v in item.items() if v is not None and k != "idempotency_key"} for item in items
        ]
    }
    if metadata is not None:
        body["metadata"] = dict(metadata)
    if on_invalid is not None:
        body["on_invalid"] = on_invalid
    if item_events is not None:
        body["item_events"] = item_events
    return body


class AsyncBatches(Resource):
    async def create(
        self,
        items: Sequence[BatchItem | Mapping[str, Any]],
        *,
        metadata: Mapping[str, str] | None = None,
        on_invalid: OnInvalid | None = None,
        item_events: bool | None = None,
        idempotency_key: str | None = None,
    ) -> Batch:
        """Submit up to 10,000 items, each what ``generations.create`` takes as a dict (``prompt``,
        ``provider``, ``duration``...), with an optional ``custom_id``. ``on_invalid="skip"`` accepts the
        valid ones (the others are in ``refused``); by default one invalid item refuses the batch with a
        ``ValidationError`` whose ``problem`` lists them. With ``idempotency_key`` a re-send (a retry) answers
        the same batch."""
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key is not None else None
        body = _body(items, metadata, on_invalid, item_events)
        return await self._t.call(Batch, "POST", "batches", json_body=body, headers=headers)

    async def retrieve(self, batch_id: str) -> Batch:
        return await self._t.call(Batch, "GET", f"batches/{batch_id}")

    async def list_page(self, *, limit: int | None = None, cursor: str | None = None) -> BatchList:
        return await self._t.call(BatchList, "GET", "batches", params={"limit": limit, "cursor": cursor})

    def list(self, *, page_size: int | None = None) -> AsyncIterator[Batch]:
        """Every batch of the account, newest first, page after page."""
        return walk(lambda cursor: self.list_page(limit=page_size, cursor=cursor))

    async def generations_page(
        self,
        batch_id: str,
        *,
        status: Sequence[Status] | None = None,
        custom_id: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> BatchGenerationList:
        params = {
            "status": ",".join(status) if status else None,
            "custom_id": custom_id,
            "limit": limit,
            "cursor": cursor,
        }
        return await self._t.call(
            BatchGenerationList, "GET", f"batches/{batch_id}/generations", params=params
        )

    def generations(
        self,
        batch_id: str,
        *,
        status: Sequence[Status] | None = None,
        custom_id: str | None = None,
        page_size: int | None = None,
    ) -> AsyncIterator[BatchGeneration]:
        """The batch's items' generations in the order given, filtered by status and custom_id."""
        return walk(
            lambda cursor: self.generations_page(
                batch_id, status=status, custom_id=custom_id, limit=page_size, cursor=cursor
            )
        )

    async def cancel(self, batch_id: str) -> BatchCancel:
        """Cancel every item that has not started; ``not_canceled`` lists those left to finish."""
        return await self._t.call(BatchCancel, "POST", f"batches/{batch_id}/cancel")

    async def wait(
        self,
        batch_id: str,
        *,
        on_progress: Progress | None = None,
        poll_interval: float = 2.0,
        timeout: float | None = None,
    ) -> Batch:
        """The batch once every item has ended (completed or canceled), read every ``poll_interval``
        seconds; ``on_progress(batch)`` is told of each read. ``APITimeoutError`` after ``timeout``."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            batch = await self.retrieve(batch_id)
            if on_progress is not None:
                on_progress(batch)
            if batch.finished:
                return batch
            if deadline is not None and time.monotonic() >= deadline:
                raise APITimeoutError(f"batch {batch_id} not finished after {timeout} s")
            await asyncio.sleep(poll_interval)

    async def results(self, batch_id: str) -> AsyncIterator[BatchResult]:
        """Each item's outcome from the batch's results file (streamed), in the order given."""
        async for line in self.results_lines(batch_id):
            yield BatchResult.model_validate(json.loads(line))

    async def results_lines(self, batch_id: str) -> AsyncGenerator[str, None]:
        """The batch's results file, line by line, as the API wrote it (JSON, one item per line)."""
        async with self._t.stream(f"batches/{batch_id}/results") as response:
            if response.status_code >= 400:
                raise await status_error_of(response, None)
            async for line in response.aiter_lines():
                if line.strip():
                    yield line


class Batches(Twin[AsyncBatches]):
    """``client.batches`` of the sync ``Client``: ``AsyncBatches``, called (``wait``'s ``on_progress`` is
    called on the client's own thread)."""

    create = blocking(AsyncBatches.create)
    retrieve = blocking(AsyncBatches.retrieve)
    list_page = blocking(AsyncBatches.list_page)
    list = iterated(AsyncBatches.list)
    generations_page = blocking(AsyncBatches.generations_page)
    generations = iterated(AsyncBatches.generations)
    cancel = blocking(AsyncBatches.cancel)
    wait = blocking(AsyncBatches.wait)
    results = iterated(AsyncBatches.results)
    results_lines = iterated(AsyncBatches.results_lines)
