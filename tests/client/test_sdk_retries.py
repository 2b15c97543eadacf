"""The SDK's retries and errors, and the bodies it sends, against a small real HTTP server on 127.0.0.1 whose
answers the test scripts. Waits go through an injected sleep that records them, so nothing here sleeps."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import pytest
from aiohttp import web

from videogen.engines import free_port
from videogen_client import (
    APIConnectionError,
    AsyncClient,
    AuthenticationError,
    BudgetExceededError,
    ConflictError,
    InternalServerError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    ValidationError,
)
from videogen_client.models import RoutingOptions

GENERATION = {
    "id": "gen_1",
    "status": "processing",
    "prompt": "a fox",
    "provider": "mock",
    "duration": 3,
    "video_url": None,
    "thumbnail_url": None,
    "error": None,
    "created_at": "2026-11-24T10:00:00.000Z",
    "updated_at": "2026-11-24T10:00:00.000Z",
}
PROBLEM = "application/problem+json"
Answer = Callable[[web.Request], web.Response]


def problem(
    status: int, title: str, *, headers: dict[str, str] | None = None, **extra: object
) -> web.Response:
    body = {"type": "about:blank", "title": title, "status": status, "instance": "/v1/x", **extra}
    return web.json_response(body, status=status, content_type=PROBLEM, headers=headers)


@dataclass
class Api:
    """Answers each request with the next of ``answers`` (the last one again once they run out)."""

    answers: list[Answer] = field(default_factory=list)
    requests: list[web.Request] = field(default_factory=list)
    base: str = ""

    async def handle(self, request: web.Request) -> web.Response:
        self.requests.append(request)
        await request.read()
        return self.answers[min(len(self.requests), len(self.answers)) - 1](request)


@pytest.fixture
async def api() -> AsyncIterator[Api]:
    fake = Api()
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", fake.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    fake.base = f"http://127.0.0.1:{runner.addresses[0][1]}/v1"
    try:
        yield fake
    finally:
        await runner.cleanup()


@pytest.fixture
def waits() -> list[float]:
    return []


@pytest.fixture
async def client(api: Api, waits: list[float]) -> AsyncIterator[AsyncClient]:
    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    async with AsyncClient(api_key="vg_test", base_url=api.base, sleep=sleep) as client:
        yield client


async def test_a_429_is_retried_after_its_retry_after_with_the_same_idempotency_key(
    api: Api, client: AsyncClient, waits: list[float]
) -> None:
    api.answers = [
        lambda _: problem(429, "Too Many Requests", headers={"Retry-After": "1"}),
        lambda _: web.json_response(GENERATION, status=202),
    ]
    generation = await client.generations.create(prompt="a fox", provider="mock", duration=3)
    assert generation.id == "gen_1"
    assert [r.method for r in api.requests] == ["POST", "POST"]
    keys = {r.headers.get("Idempotency-Key") for r in api.requests}
    assert len(keys) == 1 and None not in keys  # one key, made by the SDK, on every try
    assert waits == [1.0]
    assert all(r.headers["Authorization"] == "Bearer vg_test" for r in api.requests)


async def test_each_create_call_has_a_key_of_its_own(api: Api, client: AsyncClient) -> None:
    api.answers = [lambda _: web.json_response(GENERATION, status=202)]
    await client.generations.create(prompt="a fox", provider="mock", duration=3)
    await client.generations.create(prompt="a fox", provider="mock", duration=3)
    first, second = (r.headers["Idempotency-Key"] for r in api.requests)
    assert first != second


async def test_create_sends_the_keywords_given_in_their_declared_order_and_no_nulls(
    api: Api, client: AsyncClient
) -> None:
    api.answers = [lambda _: web.json_response(GENERATION, status=202)]
    await client.generations.create(
        retention_days=7,
        routing=RoutingOptions(sort="price"),
        fallback_providers=("luma", "pika"),
        seed=None,
        duration=3,
        provider="auto",
        prompt="a fox",
        idempotency_key="mine",
        metadata={"order": "42"},
    )
    [request] = api.requests
    assert request.headers["Idempotency-Key"] == "mine"
    # CreateParams' order, whatever the call's; None and the key (a header) left out; each as JSON.
    assert list(json.loads(await request.read()).items()) == [
        ("prompt", "a fox"),
        ("provider", "auto"),
        ("duration", 3),
        ("metadata", {"order": "42"}),
        ("fallback_providers", ["luma", "pika"]),
        ("routing", {"sort": "price"}),
        ("retention_days", 7),
    ]


async def test_an_update_sends_only_what_is_given(api: Api, client: AsyncClient) -> None:
    api.answers = [lambda _: problem(404, "Not Found")]
    with pytest.raises(NotFoundError):
        await client.webhooks.update("wh_1", events=("video.completed",))
    with pytest.raises(NotFoundError):
        await client.api_keys.update("key_1", budgets={"daily_cost": 5.0})
    with pytest.raises(NotFoundError):
        await client.api_keys.create(name="ci", scopes=["generations:read"])
    bodies = [json.loads(await request.read()) for request in api.requests]
    assert bodies == [
        {"events": ["video.completed"]},
        {"budgets": {"daily_cost": 5.0}},
        {"name": "ci", "scopes": ["generations:read"]},
    ]


async def test_503s_are_retried_with_exponential_backoff_and_jitter(
    api: Api, client: AsyncClient, waits: list[float]
) -> None:
    api.answers = [
        lambda _: problem(503, "Service Unavailable"),
        lambda _: problem(503, "Service Unavailable"),
        lambda _: web.json_response(GENERATION),
    ]
    assert (await client.generations.get("gen_1")).id == "gen_1"
    assert len(api.requests) == 3
    assert 0.375 <= waits[0] <= 0.5 and 0.75 <= waits[1] <= 1.0


async def test_retries_give_up_after_max_retries_with_a_typed_error(
    api: Api, client: AsyncClient, waits: list[float]
) -> None:
    api.answers = [lambda _: problem(429, "Too Many Requests", headers={"Retry-After": "2"})]
    with pytest.raises(RateLimitError) as caught:
        await client.generations.get("gen_1")
    assert len(api.requests) == 4  # the first try and three retries
    assert caught.value.retry_after == 2.0 and caught.value.status == 429
    assert waits == [2.0, 2.0, 2.0]


async def test_a_502_on_a_call_that_is_not_safe_to_repeat_is_not_retried(
    api: Api, client: AsyncClient
) -> None:
    api.answers = [lambda _: problem(502, "Bad Gateway")]
    with pytest.raises(InternalServerError):
        await client.generations.cancel("gen_1")  # a POST without an idempotency key
    assert len(api.requests) == 1


async def test_a_refused_connection_is_retried_then_reported(waits: list[float]) -> None:
    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    async with AsyncClient(
        api_key="vg_test",
        base_url=f"http://127.0.0.1:{free_port()}/v1",
        sleep=sleep,
        max_retries=2,  # nothing there
    ) as client:
        with pytest.raises(APIConnectionError):
            await client.generations.get("gen_1")
    assert len(waits) == 2


@pytest.mark.parametrize(
    ("status", "error"),
    [(401, AuthenticationError), (404, NotFoundError), (409, ConflictError), (500, InternalServerError)],
)
async def test_error_statuses_become_typed_errors_with_the_problem_and_request_id(
    api: Api, client: AsyncClient, status: int, error: type[Exception]
) -> None:
    api.answers = [
        lambda _: problem(status, "Nope", headers={"X-Request-Id": "req_42"}, detail="it went wrong")
    ]
    with pytest.raises(error) as caught:
        await client.generations.cancel("gen_1")
    failure = caught.value
    assert getattr(failure, "status", None) == status
    assert getattr(failure, "detail", None) == "it went wrong"
    assert getattr(failure, "request_id", None) == "req_42"
    assert "req_42" in str(failure)


async def test_a_422_lists_each_invalid_field(api: Api, client: AsyncClient) -> None:
    errors = [{"field": "duration", "message": "must be 3 to 10", "code": "range"}]
    api.answers = [lambda _: problem(422, "Invalid request", errors=errors)]
    with pytest.raises(ValidationError) as caught:
        await client.generations.create(prompt="a fox", provider="mock", duration=30)
    assert [(e.field, e.code) for e in caught.value.errors] == [("duration", "range")]
    assert len(api.requests) == 1  # not retried


async def test_a_spent_budget_is_not_retried_and_says_which_budget_until_when(
    api: Api, client: AsyncClient, waits: list[float]
) -> None:
    api.answers = [
        lambda _: problem(
            429,
            "Budget exceeded",
            headers={"Retry-After": "10800"},
            type="urn:videogen:problem:budget-exceeded",
            budget="daily_video_seconds",
            api_key_id=None,
            limit=600,
            used=598,
            remaining=2,
            requested=5,
            resets_at="2026-12-01T00:00:00.000Z",
        )
    ]
    with pytest.raises(BudgetExceededError) as caught:
        await client.generations.create(prompt="a fox", provider="mock", duration=5)
    assert len(api.requests) == 1 and waits == []
    budget = caught.value.budget
    assert (budget.budget, budget.remaining, budget.requested) == ("daily_video_seconds", 2, 5)
    assert budget.resets_at.isoformat() == "2026-12-01T00:00:00+00:00"
    assert isinstance(caught.value, RateLimitError) and caught.value.retry_after == 10800.0


async def test_a_key_beyond_its_scopes_gets_a_permission_error_naming_the_scope(
    api: Api, client: AsyncClient
) -> None:
    api.answers = [
        lambda _: problem(
            403, "Insufficient scope", type="urn:videogen:problem:insufficient-scope", scope="webhooks:write"
        )
    ]
    with pytest.raises(PermissionDeniedError) as caught:
        await client.webhooks.delete("wh_1")
    assert caught.value.scope == "webhooks:write" and len(api.requests) == 1
