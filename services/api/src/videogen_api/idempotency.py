"""Idempotency-Key on POST /v1/generate (Stripe's semantics, the IETF httpapi draft's header).

A key is kept on the generation it created, in three fields written by the same insert as the generation:

- ``idem``: ``"{account_id}\\n{key}"``, under a sparse unique index (``one_per_idempotency_key``), so a key is
  per account and a second insert under it fails with a duplicate-key error (11000);
- ``idem_hash``: SHA-256 of the canonical request (the validated fields as JSON with sorted keys);
- ``idem_response``: the 202 body as first returned.

The insert is the commit point: the generation, its key and the response exist together or not at all. So a
duplicate-key error always finds a saved response: the same request is answered with it again (same status,
body and ``Location``, plus ``Idempotent-Replayed: true``), and a different request under the same key is a
422 ``idempotency-key-reused``. However many identical requests race, exactly one generation is created.

There is no 409. The IETF draft answers 409 while the first request with a key is still in flight; that state
exists only in two-phase stores (reserve the key, do the work, save the response). Here no key is ever visible
without its response.

A key is kept as long as its generation (generations are not deleted), which is more than the 24 hours
clients may rely on. The replayed body is the creation response, not the generation's current state; GET
/v1/generations/{id} gives that.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson
from aiohttp import web
from pydantic import BaseModel

from videogen_api.problems import idempotency_key_reused, invalid
from videogen_common.records.generation import idempotency_fields as stored_fields
from videogen_common.repositories.idempotency import IdempotencyKeys
from videogen_common.store import Store

HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
MAX_KEY_CHARS = 255

Doc = dict[str, Any]


def idempotency_key(request: web.Request) -> str | None:
    """The request's Idempotency-Key, or None without one. More than one, an empty one, or one that is not
    1 to 255 printable ASCII characters is a 422."""
    values = request.headers.getall(HEADER, [])
    if not values:
        return None
    key = values[0]
    if len(values) > 1:
        message = "send the header once"
    elif not 1 <= len(key) <= MAX_KEY_CHARS or not all(" " <= c <= "~" for c in key):
        message = f"must be 1 to {MAX_KEY_CHARS} printable ASCII characters"
    else:
        return key
    raise invalid([{"field": HEADER, "message": message, "code": "idempotency_key"}])


def request_hash(body: BaseModel) -> str:
    """SHA-256 of the validated request, canonical: the same fields in any order or spacing hash the same."""
    # Optional fields left out are left out of the hash too, so a body hashes as it did before they existed.
    canonical = orjson.dumps(body.model_dump(mode="json", exclude_none=True), option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(canonical).hexdigest()


def scoped(account_id: str, key: str) -> str:
    """The stored ``idem`` value. A key has no newline (it is printable ASCII), so this is unambiguous."""
    return f"{account_id}\n{key}"


def idempotency_fields(account_id: str, key: str, digest: str, response: Doc) -> Doc:
    """What a generation created under a key carries, written by the same insert."""
    return stored_fields(scoped(account_id, key), digest, response)


async def saved_response(store: Store, account_id: str, key: str, digest: str) -> Doc | None:
    """After a duplicate-key error: the response saved under the key, if the same request made it; a 422 if
    a different request did; None if no generation holds the key (the duplicate was something else)."""
    saved = await IdempotencyKeys(store).saved_reply(scoped(account_id, key))
    if saved is None:
        return None
    if saved.request_hash != digest:
        raise idempotency_key_reused()
    return dict(saved.response)
