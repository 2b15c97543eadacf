"""A property-based fuzz run of the live API from its own OpenAPI document (schemathesis).

The real application serves on a real socket in the test's event loop; schemathesis loads /openapi.json from
it and, in a worker thread (its HTTP client blocks), sends every operation generated requests:

- positive: valid by the document;
- negative: invalid by the document (a wrong type, a broken constraint, an unknown parameter, no API key);
- negative, no extra parameters: the same without undeclared query parameters and headers (which the API
  ignores, as HTTP APIs do, and OpenAPI cannot say so), and here every such request must also be refused;
- for operations on one resource, positive requests aimed at a real resource of the account (a generation,
  a webhook endpoint or a failed delivery), so the success answers are exercised too.

No answer may be a 5xx, and every answer must be documented: its status, content type, headers and body.
Runs are derandomized (Hypothesis' fixed seed), so a failure reproduces; it prints the curl command."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import requests
import schemathesis
from aiohttp import web
from aiohttp.test_utils import TestClient
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.core.result import Ok
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.support.api import bearer
from tests.support.env import settings_for
from tests.support.images import solid_image
from videogen_api.settings import ApiSettings
from videogen_common.clock import isoformat
from videogen_common.store import Store

Client = TestClient[web.Request, web.Application]
Operation = schemathesis.APIOperation[Any, Any, Any, Any]
RunOnLoop = Callable[[Coroutine[Any, Any, Any]], Any]

# Examples per operation and mode: 41 operations, three or four modes each, about 4,000 requests in all.
EXAMPLES = 50
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]
# The operations no generated request can succeed at: a media link's signature cannot be guessed, and random
# bytes do not decode as a PNG, JPEG or WebP image (both are still fuzzed: no 5xx, answers as documented).
NEVER_SUCCEEDS = {"GET /v1/media/{folder}/{file}", "POST /v1/uploads"}
# The operations whose negative bodies are not held to a rejection (why: where the checks are chosen).
NOT_REJECTING = {"POST /v1/batches", "POST /v1/provider-callbacks/{provider}/{token}"}


@dataclass
class Outcome:
    failures: list[str] = field(default_factory=list)
    statuses: dict[str, Counter[int]] = field(default_factory=dict)

    @property
    def sent(self) -> int:
        return sum(sum(c.values()) for c in self.statuses.values())


@pytest.fixture
def api_settings(base_env: dict[str, str]) -> ApiSettings:
    """The deployment as shipped, but with rate limits no fuzz run reaches (about 3,000 requests from one
    account): a 429 would stop a request short of the handler it was generated for. The limiter still runs,
    so its headers are checked against the document on every answer."""
    return settings_for(
        ApiSettings,
        base_env,
        api_port=0,
        rate_limit_generate_quota=1_000_000,
        rate_limit_default_quota=1_000_000,
    )


def _operations(schema: schemathesis.BaseSchema) -> list[Operation]:
    operations = []
    for result in schema.get_all_operations():
        assert isinstance(result, Ok), f"schemathesis cannot read an operation: {result}"
        operations.append(result.ok())
    return operations


def _seed(base_url: str, key: str, session: requests.Session, run: RunOnLoop, store: Store, path: str) -> str:
    """A fresh resource of the kind the operation's path names: a generation, a batch, an upload, a webhook
    endpoint, a failed delivery (so that retrying it can succeed), an event (a test event's), or an API
    key."""
    headers = bearer(key)
    if path.startswith("/v1/uploads/"):
        image = {"Content-Type": "image/png", **headers}
        uploaded = session.post(f"{base_url}/v1/uploads", data=solid_image((10, 20, 30)), headers=image)
        assert uploaded.status_code == 201, uploaded.text
        return str(uploaded.json()["id"])
    if path.startswith("/v1/api-keys/"):
        made = session.post(
            f"{base_url}/v1/api-keys", json={"name": "fuzzed", "scopes": ["usage:read"]}, headers=headers
        )
        assert made.status_code == 201, made.text
        return str(made.json()["id"])
    if path.startswith("/v1/batches/"):
        item: dict[str, Any] = {"prompt": "a fox in the snow", "provider": "mock", "duration": 3}
        batch = session.post(f"{base_url}/v1/batches", json={"items": [item, item]}, headers=headers)
        assert batch.status_code == 202, batch.text
        return str(batch.json()["id"])
    if path.startswith("/v1/generations/"):
        response = session.post(
            f"{base_url}/v1/generate",
            json={"prompt": "a fox in the snow", "provider": "mock", "duration": 3},
            headers=headers,
        )
        assert response.status_code == 202, response.text
        generation_id = str(response.json()["id"])
        if path.endswith("/events"):
            # Finished, so its event stream answers the generation and ends (nothing runs it here).
            run(store.generations.update_one({"_id": generation_id}, {"$set": {"status": "completed"}}))
        return generation_id
    hook = session.post(
        f"{base_url}/v1/webhooks",
        json={"url": "https://example.test/hook", "events": ["video.completed"]},
        headers=headers,
    )
    assert hook.status_code == 201, hook.text
    webhook_id = str(hook.json()["id"])
    if path.startswith("/v1/webhooks/"):
        return webhook_id
    delivery = session.post(f"{base_url}/v1/webhooks/{webhook_id}/test", headers=headers)
    assert delivery.status_code == 202, delivery.text
    if path.startswith("/v1/events/"):
        return str(delivery.json()["event_id"])
    delivery_id = str(delivery.json()["id"])
    run(
        store.deliveries.update_one(
            {"_id": delivery_id}, {"$set": {"status": "failed", "next_attempt_at": None}}
        )
    )
    return delivery_id


def _run(
    strategy: Any,
    checks: list[Any],
    statuses: Counter[int],
    base_url: str,
    key: str,
    session: requests.Session,
) -> None:
    """EXAMPLES requests drawn from the strategy, each answer checked; raises what the checks found."""

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        phases=[Phase.explicit, Phase.generate, Phase.shrink],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=strategy)
    def check(case: schemathesis.Case[Any]) -> None:
        response = case.call_and_validate(
            base_url=base_url, session=session, headers=bearer(key), checks=checks, timeout=10
        )
        statuses[response.status_code] += 1

    check()


def _fuzz(base_url: str, key: str, run: RunOnLoop, store: Store) -> Outcome:
    """Every operation in every mode, EXAMPLES requests each (blocking: runs in a worker thread)."""
    url = f"{base_url}/openapi.json"
    schema = schemathesis.openapi.from_url(url, config=schemathesis.Config())
    strict = schemathesis.openapi.from_url(
        url, config=schemathesis.Config.from_dict({"generation": {"allow-extra-parameters": False}})
    )
    operations = _operations(schema)
    strict_operations = {op.label: op for op in _operations(strict)}
    assert len(operations) == 41
    outcome = Outcome()
    with requests.Session() as session:
        # One fresh resource per operation, made before any fuzzing (which may fill the webhook quota).
        seeds = {
            op.label: _seed(base_url, key, session, run, store, op.path)
            for op in operations
            if "{id}" in op.path
        }
        for operation in operations:
            modes: list[tuple[str, Any, list[Any]]] = [
                ("positive", operation.as_strategy(schemathesis.GenerationMode.POSITIVE), CHECKS),
                ("negative", operation.as_strategy(schemathesis.GenerationMode.NEGATIVE), CHECKS),
                (
                    "negative, no extra parameters",
                    strict_operations[operation.label].as_strategy(schemathesis.GenerationMode.NEGATIVE),
                    # A batch with on_invalid=skip accepts its invalid items by design, as refused items on
                    # the batch (test_api_batches holds that): an invalid item is not a rejected request. A
                    # provider's callback is a wake-up whose body is never read (the task is read from the
                    # provider): any body is answered 200 (test_provider_callbacks holds that).
                    CHECKS if operation.label in NOT_REJECTING else [*CHECKS, negative_data_rejection],
                ),
            ]
            if operation.label in seeds:
                fixed: dict[str, Any] = {"path_parameters": {"id": seeds[operation.label]}}
                if operation.path.endswith("/recover"):
                    # A random `since` is almost never inside the recovery window: this one is.
                    fixed["body"] = {"since": isoformat(datetime.now(UTC) - timedelta(hours=1))}
                modes.append(
                    (
                        "positive, a real resource",
                        operation.as_strategy(schemathesis.GenerationMode.POSITIVE, **fixed),
                        CHECKS,
                    )
                )
            for mode, strategy, checks in modes:
                label = f"{operation.label} ({mode})"
                statuses: Counter[int] = Counter()
                outcome.statuses[label] = statuses
                try:
                    _run(strategy, checks, statuses, base_url, key, session)
                except (Exception, schemathesis.errors.FailureGroup) as exc:
                    outcome.failures.append(f"{label}: {exc}")
    return outcome


@pytest.mark.timeout(600)  # 41 operations; 420 s held 39 (a run on a loaded machine took ~6 min)
async def test_fuzz_the_live_api_from_its_own_openapi_document(
    client: Client, key: str, store: Store
) -> None:
    base_url = str(client.make_url("")).rstrip("/")
    loop = asyncio.get_running_loop()

    def run(coro: Coroutine[Any, Any, Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, loop).result(timeout=10)

    started = time.monotonic()
    outcome = await asyncio.to_thread(_fuzz, base_url, key, run, store)
    print(f"fuzz: {outcome.sent} requests in {time.monotonic() - started:.1f} s")  # noqa: T201
    for mode, statuses in outcome.statuses.items():
        print(f"  {mode}: {dict(sorted(statuses.items()))}")  # noqa: T201

    assert not outcome.failures, "\n\n".join(outcome.failures)
    # The run reached past validation into every handler's success path.
    succeeded = {
        label.split(" (")[0] for label, s in outcome.statuses.items() if any(200 <= c < 300 for c in s)
    }
    operations = {label.split(" (")[0] for label in outcome.statuses}
    assert operations - succeeded == NEVER_SUCCEEDS
