"""A generation as a typed record, mapped to and from its stored document here and nowhere else, and the
public view derived from it (``PUBLIC_FIELDS``, the one list of what clients see)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields, replace
from datetime import datetime
from operator import attrgetter
from typing import Any

from videogen_common.clock import isoformat
from videogen_common.domain import Status
from videogen_common.failures import GenerationError

Doc = dict[str, Any]

# What clients see of a generation, in this order: ``GenerationRecord.public_view`` makes exactly these (a
# test holds it and the api's response model to this list), and webhook data carries them too
# (``deliveries.DATA_FIELDS``, the data of its events).
PUBLIC_FIELDS = (
    "id",
    "status",
    "prompt",
    "provider",
    "model",
    "duration",
    "video_url",
    "thumbnail_url",
    "error",
    "progress",
    "queue_reason",
    "queue_position",
    "priority",
    "timeline",
    "aspect_ratio",
    "resolution",
    "seed",
    "negative_prompt",
    "metadata",
    "image",
    "route",
    "attempts",
    "estimated_cost",
    "cost",
    "created_at",
    "updated_at",
    "deleted",
    "deleted_at",
)

# A generation's metadata is stored twice: as given (``metadata``), and as its pairs, ``"key=value"`` each
# (``METADATA_PAIRS``, written by ``to_doc`` beside it, erased with it), which the listing's metadata filter
# reads through an index (``repositories.generation_reads``: ``by_account_metadata``). Keys hold no ``=``
# (letters, digits, ``_`` and ``-``), so a pair says which key and value it is.
METADATA_PAIRS = "metadata_pairs"


def metadata_pair(key: str, value: str) -> str:
    """One metadata pair as ``METADATA_PAIRS`` holds it."""
    return f"{key}={value}"


# What a delete erases of a generation's public fields, and what it leaves there: the tombstone keeps the id,
# account, provider, duration, status, error, options and timestamps (usage, cost and audit stay exact) and
# says ``deleted``. The same values replace these fields in the data its stored events and deliveries carry.
ERASED_FIELDS: dict[str, Any] = {
    "prompt": "",
    "negative_prompt": None,
    "metadata": {},
    "image": None,
    "video_url": None,
    "thumbnail_url": None,
}
# ... and the internal fields it removes: what the request and the provider were told (the prompt again),
# the saved reply of an Idempotency-Key (so the key is free again), the media keys (the objects go), and the
# metadata's pairs.
_ERASED_INTERNAL = (
    "negative_prompt",
    "metadata",
    "image",
    "image_key",
    "image_type",
    "provider_request",
    "video_key",
    "thumbnail_key",
    "idem",
    "idem_hash",
    "idem_response",
    METADATA_PAIRS,
)

# The metadata of a field every document has, null when None (the fields of the first documents). Any other
# field of a record that defaults to None is written only when it holds something (a stored null and an absent
# field read alike): a new field needs nothing more than its line in ``GenerationRecord``.
_IN_EVERY_DOC = {"in_every_doc": True}


@dataclass(frozen=True, slots=True)
class TimelineStep:
    """A state the generation entered, and when."""

    status: str
    at: datetime


@dataclass(frozen=True, slots=True)
class Image:
    """The first frame the request asked for: a URL, or an upload of the account's."""

    url: str | None = None
    upload_id: str | None = None

    def to_doc(self) -> Doc:
        doc: Doc = {}
        if self.url is not None:
            doc["url"] = self.url
        if self.upload_id is not None:
            doc["upload_id"] = self.upload_id
        return doc


def idempotency_fields(idem: str, digest: str, response: Mapping[str, Any]) -> Doc:
    """The fields of a generation created under an Idempotency-Key (``idem``, the key scoped to its account),
    added to its document for the one insert that creates it: the request's hash and the response."""
    return {"idem": idem, "idem_hash": digest, "idem_response": response}


@dataclass(frozen=True, slots=True)
class StoredVideo:
    """A finished generation's media as stored: the links clients get and the keys in media storage."""

    video_url: str
    video_key: str
    thumbnail_url: str | None = None
    thumbnail_key: str | None = None
    # When the stored media is due to be deleted (the retention sweeper's index).
    due_at: datetime | None = None

    @property
    def keys(self) -> list[str]:
        return [self.video_key, *([self.thumbnail_key] if self.thumbnail_key is not None else [])]


@dataclass(slots=True, kw_only=True)
class GenerationRecord:
    """A generation. Treat it as immutable (``dataclasses.replace`` makes a changed copy); it is not frozen
    only because one is built on every creation (POST /v1/generate, the api's hot path), where a frozen
    dataclass's ``__init__`` of this many fields costs ~3 µs more."""

    # In the order of the stored document's fields; those up to ``attempts`` are in every document.
    id: str
    account_id: str
    status: Status
    prompt: str
    provider: str
    duration: int
    video_url: str | None = field(default=None, metadata=_IN_EVERY_DOC)
    thumbnail_url: str | None = field(default=None, metadata=_IN_EVERY_DOC)
    error: GenerationError | None = field(default=None, metadata=_IN_EVERY_DOC)
    progress: int | None = field(default=None, metadata=_IN_EVERY_DOC)
    # Empty for generations made before the timeline was kept.
    timeline: tuple[TimelineStep, ...] = ()
    created_at: datetime
    updated_at: datetime
    version: int = 1
    lease_owner: str | None = field(default=None, metadata=_IN_EVERY_DOC)
    lease_expires_at: datetime | None = field(default=None, metadata=_IN_EVERY_DOC)
    provider_task_id: str | None = field(default=None, metadata=_IN_EVERY_DOC)
    attempts: int = 0
    # The rest are written only when set (``_SPARSE``).
    image: Image | None = None
    aspect_ratio: str | None = None
    resolution: str | None = None
    seed: int | None = None
    negative_prompt: str | None = None
    # The model asked of its provider (``videogen_common.catalogue``): the one the request named, or its
    # provider's default as the api resolved it at creation; a move to another candidate takes that
    # candidate's. None: made before models could be named (its provider's adapter chose).
    model: str | None = None
    metadata: Mapping[str, str] | None = None
    queue_reason: str | None = None
    # Where the first frame's bytes are in media storage, and their type.
    image_key: str | None = None
    image_type: str | None = None
    deadline_at: datetime | None = None
    # The creating request's id, its key and its trace.
    trace_id: str | None = None
    traceparent: str | None = None
    api_key_id: str | None = None
    # Since when it is in its state, and the seconds spent in each state it left.
    status_since: datetime | None = None
    state_seconds: Mapping[str, float] | None = None
    # Waiting to be admitted to the provider: its key in its lane, its place there (kept when the provider
    # refuses it, so it waits at the front again), and the client's deadline while it waits
    # (``repositories.waiting``).
    slot_wait: str | None = None
    queue_place: int | None = None
    wait_deadline: datetime | None = None
    # ``high`` or ``low`` orders it among its account's waiting work (None: ``normal``).
    priority: str | None = None
    # The provider key (pool) its task runs on, once admitted, and when it last left our queue.
    provider_pool: str | None = None
    admitted_at: datetime | None = None
    # When the provider accepted its task (polls slow down as the task ages).
    task_started_at: datetime | None = None
    lease_token: str | None = None
    # The fencing token of its lease: a number each claim increments (``repositories.leases``), so a holder
    # that lost the lease (to a take-over, even by an instance of the same name) writes nothing.
    lease_fence: int | None = None
    # What was sent to the provider, and when sending began (a submit that may have made a task).
    provider_request: Mapping[str, Any] | None = None
    submit_started_at: datetime | None = None
    video_key: str | None = None
    thumbnail_key: str | None = None
    # Idempotency-Key: the scoped key, the request's hash and the 202 body first returned.
    idem: str | None = None
    idem_hash: str | None = None
    idem_response: Mapping[str, Any] | None = None
    # What it reserved of its account's and key's budgets (``budgets.Hold``): given back if it fails before
    # it cost anything.
    budget_hold: Mapping[str, Any] | None = None
    # Where it may go and why (``routing``): set at creation when the request named fallbacks, "auto" or a
    # sort (None: only its provider, as before routing existed).
    route: Mapping[str, Any] | None = None
    # Its tries that ended, oldest first: {provider, pool, started_at, ended_at, error_code, cost}
    # (``videogen_common.attempts``); shown as ``attempts`` with the one under way. (``attempts`` counts the
    # claims of its lease.)
    provider_attempts: Sequence[Mapping[str, Any]] | None = None
    # USD: what its first candidate would charge (at creation), and what was charged (once finished).
    estimated_cost: float | None = None
    cost: float | None = None
    # Retention: the days the request asked its media be kept (shorter than the deployment's only), when its
    # media is due to be deleted (sparse: set while there is media to delete; the sweeper's index), when the
    # sweeper deleted it, and when the generation itself was deleted (a tombstone from then on).
    retention_days: int | None = None
    media_due_at: datetime | None = None
    media_deleted_at: datetime | None = None
    deleted_at: datetime | None = None
    # A batch's item (``records.batch``): the batch's id, the client's id for the item, and False when the
    # batch asked for no item events (its terminal and progress events are neither owed nor published).
    batch_id: str | None = None
    custom_id: str | None = None
    item_events: bool | None = None

    @property
    def charged(self) -> bool:
        """Whether a provider may bill for it: a submit that may have made a task began (or made one)."""
        return self.submit_started_at is not None or self.provider_task_id is not None

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any]) -> GenerationRecord:
        error, image = doc.get("error"), doc.get("image")
        return cls(
            id=doc["_id"],
            status=Status(doc["status"]),
            error=GenerationError.from_doc(error) if error else None,
            timeline=tuple(TimelineStep(step["status"], step["at"]) for step in doc.get("timeline") or ()),
            image=Image(image.get("url"), image.get("upload_id")) if image else None,
            **dict(zip(_REQUIRED, map(doc.__getitem__, _REQUIRED), strict=True)),
            **dict(zip(_DEFAULTED, map(doc.get, _DEFAULTED, _DEFAULTS), strict=True)),
        )

    def to_doc(self) -> Doc:
        doc: Doc = dict(zip(_WRITTEN_KEYS, _written_values(self), strict=True))
        doc["status"] = self.status.value
        doc["error"] = self.error.to_doc() if self.error is not None else None
        doc["timeline"] = [{"status": step.status, "at": step.at} for step in self.timeline]
        if self.image is not None:
            doc["image"] = self.image.to_doc()
        for name, value in zip(_SPARSE, _sparse_values(self), strict=True):
            if value is not None:
                doc[name] = value
        if self.metadata:
            doc[METADATA_PAIRS] = [metadata_pair(key, value) for key, value in self.metadata.items()]
        return doc

    def tombstone(self, now: datetime, *, media_due_at: datetime) -> GenerationRecord:
        """The generation as a delete at ``now`` leaves it (``ERASED_FIELDS``), its media due to be deleted at
        ``media_due_at`` (for good measure, again, after the delete's own deletion)."""
        return replace(
            self,
            **_ERASED,
            prompt=ERASED_FIELDS["prompt"],
            version=self.version + 1,
            deleted_at=now,
            media_due_at=media_due_at,
        )

    def tombstone_update(self) -> Doc:
        """The update that makes a stored generation this tombstone (``tombstone``'s result)."""
        assert self.deleted_at is not None and self.media_due_at is not None
        return {
            "$set": {
                **{name: getattr(self, name) for name in _ERASED_IN_PLACE},
                "deleted_at": self.deleted_at,
                "media_due_at": self.media_due_at,
            },
            "$unset": dict.fromkeys(_ERASED_INTERNAL, ""),
            "$inc": {"version": 1},
        }

    @property
    def attempt_started(self) -> datetime | None:
        """When its current try at its provider began (a submit, or the task it made), if one did."""
        return self.submit_started_at or self.task_started_at

    def attempts_view(self) -> list[Doc]:
        """Every try at a provider, oldest first: those that ended (``provider_attempts``), then the one under
        way, if any (a generation finished before attempts were kept shows its one try)."""
        ended = list(self.provider_attempts or ())
        views = [_attempt_view(attempt) for attempt in ended]
        started = self.attempt_started
        if started is not None and not (self.status.terminal and ended):
            views.append(
                {
                    "provider": self.provider,
                    "model": (self.provider_request or {}).get("model") or self.model,
                    "started_at": isoformat(started),
                    "ended_at": isoformat(self.updated_at) if self.status.terminal else None,
                    "error_code": str(self.error.code) if self.error is not None else None,
                    "cost": self.cost if self.status.terminal else None,
                }
            )
        return views

    @property
    def waiting_in_line(self) -> bool:
        """Whether it waits in line to be admitted to its provider (``repositories.waiting``)."""
        return self.status is Status.QUEUED and self.slot_wait is not None

    def public_view(self) -> Doc:
        """What clients see (``PUBLIC_FIELDS``): spec 2.1, timestamps as ISO 8601 UTC. Internal fields never
        leave."""
        created, updated, status = self.created_at, self.updated_at, self.status
        created_at = isoformat(created)
        # Generations made before the timeline was kept: their first state, and the one they are in.
        timeline = self.timeline or (
            TimelineStep(Status.PROCESSING.value, created),
            *((TimelineStep(status.value, updated),) if status is not Status.PROCESSING else ()),
        )
        image = self.image
        return {
            "id": self.id,
            "status": status.value,
            "prompt": self.prompt,
            "provider": self.provider,
            "model": self.model,
            "duration": self.duration,
            "video_url": self.video_url,
            "thumbnail_url": self.thumbnail_url,
            "error": self.error.to_doc() if self.error is not None else None,
            "progress": self.progress,
            "queue_reason": self.queue_reason if status is Status.QUEUED else None,
            # Known only where it is read (GET /v1/generations/{id} counts the line): see ``with_position``.
            "queue_position": None,
            "priority": self.priority or "normal",
            "timeline": [
                {"status": step.status, "at": created_at if step.at == created else isoformat(step.at)}
                for step in timeline
            ],
            "aspect_ratio": self.aspect_ratio,
            "resolution": self.resolution,
            "seed": self.seed,
            "negative_prompt": self.negative_prompt,
            "metadata": dict(self.metadata or {}),
            "image": {"url": image.url, "upload_id": image.upload_id} if image is not None else None,
            "route": _route_view(self.route),
            "attempts": self.attempts_view(),
            "estimated_cost": self.estimated_cost,
            "cost": self.cost,
            "created_at": created_at,
            # Equal moments format alike: a new generation's two are one (formatted once, on every creation).
            "updated_at": created_at if updated == created else isoformat(updated),
            "deleted": self.deleted_at is not None,
            "deleted_at": isoformat(self.deleted_at) if self.deleted_at is not None else None,
        }


# What ``from_doc`` and ``to_doc`` map themselves; every other field is stored as it is, under its own name.
_CONVERTED = frozenset({"id", "status", "error", "timeline", "image"})
_FIELDS = fields(GenerationRecord)
# Written only when they hold something, in this order (after the fields every document has).
_SPARSE = tuple(
    f.name for f in _FIELDS if f.default is None and f.metadata != _IN_EVERY_DOC and f.name not in _CONVERTED
)
# In every document, in this order (``id`` stored as ``_id``).
_WRITTEN = tuple(f.name for f in _FIELDS if f.name not in _SPARSE and f.name != "image")
_WRITTEN_KEYS = tuple("_id" if name == "id" else name for name in _WRITTEN)
_written_values = attrgetter(*_WRITTEN)
_sparse_values = attrgetter(*_SPARSE)
# What ``from_doc`` reads as it is: the fields without a default, and the others (their default if absent).
_AS_IS = tuple(f for f in _FIELDS if f.name not in _CONVERTED)
_REQUIRED = tuple(f.name for f in _AS_IS if f.default is MISSING)
_DEFAULTED = tuple(f.name for f in _AS_IS if f.default is not MISSING)
_DEFAULTS = tuple(f.default for f in _AS_IS if f.default is not MISSING)
# What a delete sets to None on the record (``tombstone``), and of those the fields every document has, which
# its update sets in place (the others it removes).
_ERASED: dict[str, Any] = {
    name: None for name in (*ERASED_FIELDS, *_ERASED_INTERNAL) if name not in ("prompt", METADATA_PAIRS)
}
_ERASED_IN_PLACE = tuple(name for name in ERASED_FIELDS if name not in _ERASED_INTERNAL)


def _attempt_view(attempt: Mapping[str, Any]) -> Doc:
    ended = attempt.get("ended_at")
    return {
        "provider": attempt["provider"],
        "model": attempt.get("model"),
        "started_at": isoformat(attempt["started_at"]),
        "ended_at": isoformat(ended) if ended is not None else None,
        "error_code": attempt.get("error_code"),
        "cost": attempt.get("cost"),
    }


def _route_view(route: Mapping[str, Any] | None) -> Doc | None:
    if route is None:
        return None
    return {
        "requested": route["requested"],
        "sort": route.get("sort"),
        "fallback_on_failure": bool(route.get("fallback_on_failure", False)),
        "candidates": [
            {"provider": c["provider"], "model": c.get("model"), "reason": c["reason"]}
            for c in route["candidates"]
        ],
        "skipped": [
            {"provider": c["provider"], "model": c.get("model"), "reason": c["reason"]}
            for c in route.get("skipped") or ()
        ],
        "reason": route.get("reason"),
    }
