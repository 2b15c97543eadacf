"""GET /openapi.json and GET /docs on the live application, and the handlers' real answers held to the
document: for every operation and the statuses it answers with, the body is validated strictly (from the JSON,
no coercion, no unknown fields) against the response model the document names for that status, and its
content type and required headers are the documented ones. Completed, failed and canceled generations,
deliveries with attempts, disabled endpoints, cursors and every kind of problem included."""

from __future__ import annotations

import importlib
import pkgutil
import re
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import orjson
import pytest
from aiohttp import ClientResponse, web
from aiohttp.test_utils import TestClient
from openapi_spec_validator import OpenAPIV31SpecValidator
from pydantic import BaseModel, ValidationError

from tests.support.api import bearer
from tests.support.images import solid_image
from videogen_api import openapi, schemas
from videogen_api.schemas.generations import Generation
from videogen_api.settings import ApiSettings
from videogen_common.clock import isoformat
from videogen_common.media import LocalMediaStore, signed_media_url
from videogen_common.store import Store

Client = TestClient[web.Request, web.Application]
Doc = dict[str, Any]


class Answers:
    """Sends requests and holds every answer to the document fetched from the same server."""

    def __init__(self, client: Client, document: Doc, key: str) -> None:
        self.client = client
        self.document = document
        self.key = key
        self.seen: set[tuple[str, str, int]] = set()

    def _resolve(self, node: Doc) -> Doc:
        while "$ref" in node:
            target: Any = self.document
            for part in node["$ref"].removeprefix("#/").split("/"):
                target = target[part]
            node = target
        return node

    async def call(
        self,
        method: str,
        template: str,
        status: int,
        path: str | None = None,
        *,
        auth: bool = True,
        **kw: Any,
    ) -> Any:
        headers = {**(bearer(self.key) if auth else {}), **kw.pop("headers", {})}
        response = await self.client.request(method, path or template, headers=headers, **kw)
        raw = await response.read()
        assert response.status == status, raw
        self.seen.add((method.lower(), template, status))
        return self.check(response, raw, method.lower(), template, status)

    def check(self, response: ClientResponse, raw: bytes, method: str, template: str, status: int) -> Any:
        op = self.document["paths"][template][method]
        assert str(status) in op["responses"], f"{method} {template} answered an undocumented {status}"
        documented = self._resolve(op["responses"][str(status)])
        for name, header in documented.get("headers", {}).items():
            if self._resolve(header).get("required"):
                assert name in response.headers, f"{method} {template} {status}: no {name} header"
        content = documented.get("content")
        if content is None:
            assert raw == b""
            return None
        assert response.content_type in content
        schema = content[response.content_type]["schema"]
        if "$ref" not in schema and "oneOf" not in schema:
            return raw  # a file
        names = [s["$ref"].rsplit("/", 1)[-1] for s in schema.get("oneOf", [schema])]
        matches = [name for name in names if _valid(_model(name), raw)]
        assert len(matches) == 1, f"{method} {template} {status}: {raw!r} matches {matches} of {names}"
        return orjson.loads(raw)


# Every model of the schemas, by name (a component's name is its model's), whichever resource's module has it.
MODELS: dict[str, type[BaseModel]] = {
    name: found
    for module in pkgutil.iter_modules(schemas.__path__, f"{schemas.__name__}.")
    for name, found in vars(importlib.import_module(module.name)).items()
    if isinstance(found, type) and issubclass(found, BaseModel)
}


def _model(name: str) -> type[BaseModel]:
    return MODELS[name]


def _valid(model: type[BaseModel], raw: bytes) -> bool:
    try:
        model.model_validate_json(raw, strict=True)
    except ValidationError:
        return False
    return True


@pytest.fixture
async def answers(client: Client, key: str) -> Answers:
    response = await client.get("/openapi.json")
    return Answers(client, await response.json(), key)


async def test_openapi_json_is_served_without_a_key_and_is_valid_openapi_3_1(
    client: Client, api_settings: ApiSettings
) -> None:
    response = await client.get("/openapi.json")
    assert response.status == 200
    assert response.content_type == "application/json"
    assert "X-Request-Id" in response.headers
    document = await response.json()
    OpenAPIV31SpecValidator(document).validate()
    assert document == orjson.loads(orjson.dumps(openapi.build_document(api_settings)))


async def test_docs_is_the_reference_viewer_served_from_here_without_a_key(client: Client) -> None:
    response = await client.get("/docs")
    assert response.status == 200
    assert response.content_type == "text/html"
    assert response.headers["Content-Security-Policy"].startswith("default-src 'none'")
    page = await response.text()
    for src in re.findall(r'(?:src|href)="([^"]+)"', page):
        if src.startswith("/docs/"):
            asset = await client.get(src)
            assert asset.status == 200, src
            assert asset.headers["Content-Security-Policy"]
    assert (await client.get("/docs/swagger-ui-bundle.js")).content_type == "text/javascript"
    assert (await client.get("/docs/nothing-here.js")).status == 404
    assert (await client.get("/docs/swagger-editor-bundle.js")).status == 404  # only what the page uses


async def test_generations_answer_as_documented(
    answers: Answers, store: Store, api_settings: ApiSettings
) -> None:
    body = {"prompt": "a red fox running through snow", "provider": "mock", "duration": 5}
    idem = {"Idempotency-Key": "order-1"}
    created = await answers.call("POST", "/v1/generate", 202, json=body, headers=idem)
    replay = await answers.call("POST", "/v1/generate", 202, json=body, headers=idem)
    assert replay == created
    await answers.call("POST", "/v1/generate", 422, json={**body, "duration": 6}, headers=idem)
    await answers.call("POST", "/v1/generate", 422, json={**body, "duration": 5.0})
    await answers.call("POST", "/v1/generate", 400, data=b"{", headers={"Content-Type": "application/json"})
    await answers.call("POST", "/v1/generate", 415, data=b"x", headers={"Content-Type": "text/plain"})
    await answers.call("POST", "/v1/generate", 413, json={**body, "prompt": "x" * 70_000})
    await answers.call("POST", "/v1/generate", 401, json=body, auth=False)

    second = await answers.call("POST", "/v1/generate", 202, json=body)
    third = await answers.call("POST", "/v1/generate", 202, json=body)
    now = await store.generations.find_one({"_id": created["id"]})
    assert now is not None
    await store.generations.update_one(
        {"_id": created["id"]},
        {
            "$set": {
                "status": "completed",
                "video_url": f"http://127.0.0.1:8080/v1/media/{created['id']}/video.mp4?exp=1&sig=a",
                "thumbnail_url": f"http://127.0.0.1:8080/v1/media/{created['id']}/thumbnail.jpg?exp=1&sig=a",
                "updated_at": now["updated_at"] + timedelta(seconds=5),
            }
        },
    )
    await store.generations.update_one(
        {"_id": second["id"]},
        {
            "$set": {
                "status": "failed",
                "error": {
                    "code": "provider_error",
                    "message": "the provider refused the prompt",
                    "provider_code": "mock.failure",
                    "retriable": False,
                },
            }
        },
    )
    completed = await answers.call("GET", "/v1/generations/{id}", 200, f"/v1/generations/{created['id']}")
    assert completed["video_url"] and completed["thumbnail_url"]
    failed = await answers.call("GET", "/v1/generations/{id}", 200, f"/v1/generations/{second['id']}")
    assert failed["error"]["provider_code"] == "mock.failure"
    await answers.call("GET", "/v1/generations/{id}", 404, "/v1/generations/gen_unknown")

    page = await answers.call("GET", "/v1/generations", 200, "/v1/generations?limit=2")
    assert len(page["data"]) == 2 and page["next_cursor"]
    last = await answers.call("GET", "/v1/generations", 200, f"/v1/generations?cursor={page['next_cursor']}")
    assert len(last["data"]) == 1 and last["next_cursor"] is None
    await answers.call("GET", "/v1/generations", 200, "/v1/generations?status=failed,completed&provider=mock")
    await answers.call("GET", "/v1/generations", 422, "/v1/generations?limit=0&status=done")

    canceled = await answers.call(
        "POST", "/v1/generations/{id}/cancel", 200, f"/v1/generations/{third['id']}/cancel"
    )
    assert canceled["error"]["code"] == "canceled"
    await answers.call("POST", "/v1/generations/{id}/cancel", 409, f"/v1/generations/{third['id']}/cancel")
    await answers.call("POST", "/v1/generations/{id}/cancel", 404, "/v1/generations/gen_unknown/cancel")

    one = f"/v1/generations/{created['id']}"
    await answers.call("DELETE", "/v1/generations/{id}", 204, one)
    await answers.call("DELETE", "/v1/generations/{id}", 204, one)
    await answers.call("DELETE", "/v1/generations/{id}", 404, "/v1/generations/gen_unknown")
    tombstone = await answers.call("GET", "/v1/generations/{id}", 200, one)
    assert tombstone["deleted"] is True and tombstone["prompt"] == "" and tombstone["video_url"] is None
    url = signed_media_url(
        api_settings.public_base_url,
        api_settings.media_signing_key.get_secret_value(),
        f"{created['id']}/video.mp4",
        now=datetime.now(UTC),
        retention=timedelta(days=1),
    )
    parts = urlsplit(url)
    await answers.call("GET", "/v1/media/{folder}/{file}", 410, f"{parts.path}?{parts.query}", auth=False)


async def test_webhooks_and_deliveries_answer_as_documented(answers: Answers, store: Store) -> None:
    hook = {"url": "https://example.test/hooks/videogen", "events": ["video.completed", "webhook.disabled"]}
    created = await answers.call("POST", "/v1/webhooks", 201, json=hook)
    one = f"/v1/webhooks/{created['id']}"
    await answers.call("POST", "/v1/webhooks", 422, json={**hook, "url": "https://example.test/a b"})
    await answers.call("POST", "/v1/webhooks", 400, data=b"[", headers={"Content-Type": "application/json"})
    await answers.call("POST", "/v1/webhooks", 415, data=b"{}", headers={"Content-Type": "text/plain"})
    await answers.call("GET", "/v1/webhooks", 200)
    await answers.call("GET", "/v1/webhooks", 401, auth=False)
    await answers.call("GET", "/v1/webhooks/{id}", 200, one)
    await answers.call("GET", "/v1/webhooks/{id}", 404, "/v1/webhooks/wh_unknown")
    disabled = await answers.call("PATCH", "/v1/webhooks/{id}", 200, one, json={"active": False})
    assert disabled["disabled_reason"]
    await answers.call("PATCH", "/v1/webhooks/{id}", 422, one, json={"url": None})
    await answers.call("POST", "/v1/webhooks/{id}/test", 409, f"{one}/test")
    await answers.call("PATCH", "/v1/webhooks/{id}", 200, one, json={"active": True})
    await answers.call("POST", "/v1/webhooks/{id}/rotate-secret", 200, f"{one}/rotate-secret")
    await answers.call("POST", "/v1/webhooks/{id}/rotate-secret", 404, "/v1/webhooks/wh_x/rotate-secret")

    first = await answers.call("POST", "/v1/webhooks/{id}/test", 202, f"{one}/test")
    await answers.call("POST", "/v1/webhooks/{id}/test", 202, f"{one}/test")
    stored = await store.deliveries.find_one({"_id": first["id"]})
    assert stored is not None
    at = stored["created_at"]
    await store.deliveries.update_one(
        {"_id": first["id"]},
        {
            "$set": {
                "status": "failed",
                "next_attempt_at": None,
                "failure_reason": "retry schedule exhausted",
                "attempts": [
                    {"at": at, "status_code": 503, "latency_ms": 12.5, "error": "HTTP 503"},
                    {"at": at, "status_code": None, "latency_ms": 5000.0, "error": "timeout"},
                ],
            }
        },
    )
    delivery = await answers.call("GET", "/v1/deliveries/{id}", 200, f"/v1/deliveries/{first['id']}")
    assert len(delivery["attempts"]) == 2
    await answers.call("GET", "/v1/deliveries/{id}", 404, "/v1/deliveries/msg_unknown")
    deliveries = f"{one}/deliveries"
    page = await answers.call("GET", "/v1/webhooks/{id}/deliveries", 200, f"{deliveries}?limit=1")
    assert page["next_cursor"]
    await answers.call("GET", "/v1/webhooks/{id}/deliveries", 200, f"{deliveries}?event_type=webhook.test")
    await answers.call("GET", "/v1/webhooks/{id}/deliveries", 422, f"{deliveries}?status=lost")
    await answers.call("GET", "/v1/webhooks/{id}/deliveries", 404, "/v1/webhooks/wh_x/deliveries")

    since = isoformat(at - timedelta(minutes=1))
    recovered = await answers.call(
        "POST", "/v1/webhooks/{id}/recover", 202, f"{one}/recover", json={"since": since}
    )
    assert recovered == {"requeued": 1}
    await answers.call(
        "POST", "/v1/webhooks/{id}/recover", 422, f"{one}/recover", json={"since": "yesterday"}
    )
    await answers.call("POST", "/v1/deliveries/{id}/retry", 409, f"/v1/deliveries/{first['id']}/retry")
    await store.deliveries.update_one({"_id": first["id"]}, {"$set": {"status": "succeeded"}})
    await answers.call("POST", "/v1/deliveries/{id}/retry", 202, f"/v1/deliveries/{first['id']}/retry")
    await answers.call("POST", "/v1/deliveries/{id}/retry", 404, "/v1/deliveries/msg_unknown/retry")

    await answers.call("DELETE", "/v1/webhooks/{id}", 204, one)
    await answers.call("DELETE", "/v1/webhooks/{id}", 404, one)


async def test_media_answers_as_documented(answers: Answers, api_settings: ApiSettings) -> None:
    await LocalMediaStore(api_settings.media_dir).put("gen_1/thumbnail.jpg", b"\xff\xd8\xff\xe0")
    url = signed_media_url(
        api_settings.public_base_url,
        api_settings.media_signing_key.get_secret_value(),
        "gen_1/thumbnail.jpg",
        now=datetime.now(UTC),
        retention=timedelta(days=1),
    )
    parts = urlsplit(url)
    template = "/v1/media/{folder}/{file}"
    assert (
        await answers.call("GET", template, 200, f"{parts.path}?{parts.query}", auth=False)
        == b"\xff\xd8\xff\xe0"
    )
    await answers.call("GET", template, 404, f"{parts.path}?exp=1&sig=é", auth=False)


async def test_the_event_stream_answers_as_documented(answers: Answers, store: Store) -> None:
    body = {"prompt": "a kite", "provider": "mock", "duration": 4}
    created = await answers.call("POST", "/v1/generate", 202, json=body)
    await store.generations.update_one({"_id": created["id"]}, {"$set": {"status": "completed"}})
    path = f"/v1/generations/{created['id']}/events"
    raw = await answers.call("GET", "/v1/generations/{id}/events", 200, path)  # finished: one event, the end
    lines = raw.decode().splitlines()
    assert lines[:2] == ["id: 1:", "event: generation"] and lines[3:] == [""]
    assert Generation.model_validate_json(lines[2].removeprefix("data: "), strict=True).id == created["id"]
    await answers.call("GET", "/v1/generations/{id}/events", 404, "/v1/generations/gen_unknown/events")
    await answers.call("GET", "/v1/generations/{id}/events", 401, path, auth=False)


async def test_the_event_log_answers_as_documented(answers: Answers) -> None:
    hook = await answers.call(
        "POST", "/v1/webhooks", 201, json={"url": "https://example.test/h", "events": ["video.failed"]}
    )
    path = f"/v1/webhooks/{hook['id']}/test"
    await answers.call("POST", "/v1/webhooks/{id}/test", 202, path)  # records its webhook.test event
    page = await answers.call("GET", "/v1/events", 200)
    [event] = page["data"]
    assert (event["type"], event["subject"]["id"], page["next_cursor"]) == ("webhook.test", hook["id"], None)
    query = f"/v1/events?type=webhook.test,video.completed&subject_id={hook['id']}&limit=1"
    assert (await answers.call("GET", "/v1/events", 200, query))["data"] == [event]
    await answers.call("GET", "/v1/events", 422, "/v1/events?type=Not-A-Type")
    eleven = ",".join(f"a.t{n}" for n in range(11))
    await answers.call("GET", "/v1/events", 422, f"/v1/events?type={eleven}")
    # A query string far over aiohttp's own 8 KiB limit still reaches the handler, and its documented 422.
    await answers.call("GET", "/v1/events", 422, "/v1/events?subject_id=" + "x" * 20_000)
    await answers.call("GET", "/v1/events", 401, auth=False)
    assert await answers.call("GET", "/v1/events/{id}", 200, f"/v1/events/{event['id']}") == event
    await answers.call("GET", "/v1/events/{id}", 404, "/v1/events/evt_unknown")


async def test_usage_and_the_audit_trail_answer_as_documented(answers: Answers) -> None:
    await answers.call(
        "POST", "/v1/generate", 202, json={"prompt": "a kite", "provider": "mock", "duration": 4}
    )
    await answers.call(
        "POST", "/v1/webhooks", 201, json={"url": "https://example.test/h", "events": ["video.failed"]}
    )
    usage = await answers.call("GET", "/v1/usage", 200)
    assert usage["total"] == {"generations": 1, "seconds": 4, "video_seconds": 0, "cost": 0.0}
    await answers.call("GET", "/v1/usage", 200, "/v1/usage?start=2026-01-01&end=2026-02-01&api_key_id=key_x")
    await answers.call("GET", "/v1/usage", 422, "/v1/usage?start=tomorrow")
    await answers.call("GET", "/v1/usage", 401, auth=False)
    page = await answers.call("GET", "/v1/audit-events", 200, "/v1/audit-events?limit=1")
    assert page["data"][0]["type"] == "webhook.created" and page["next_cursor"]
    await answers.call("GET", "/v1/audit-events", 200, f"/v1/audit-events?cursor={page['next_cursor']}")
    await answers.call(
        "GET", "/v1/audit-events", 200, "/v1/audit-events?type=webhook.created,api_key.created"
    )
    await answers.call("GET", "/v1/audit-events", 422, "/v1/audit-events?type=nope")
    await answers.call("GET", "/v1/audit-events", 401, auth=False)


async def test_providers_and_the_video_options_answer_as_documented(answers: Answers) -> None:
    providers = await answers.call("GET", "/v1/providers", 200)
    assert [p["id"] for p in providers["data"]] == ["mock", "runway", "luma", "pika"]
    await answers.call("GET", "/v1/providers", 401, auth=False)
    asked = {"provider": "runway", "image_to_video": "true", "duration": "10"}
    found = await answers.call("GET", "/v1/models", 200, params=asked)
    assert [m["id"] for m in found["data"]] == ["gen4.5", "gen4_turbo"]
    await answers.call("GET", "/v1/models", 422, params={"duration": "soon"})
    await answers.call("GET", "/v1/models", 401, auth=False)
    body = {
        "prompt": "a kite",
        "provider": "mock",
        "duration": 4,
        "aspect_ratio": "9:16",
        "resolution": "720p",
        "seed": 3,
        "negative_prompt": "rain",
        "metadata": {"order_id": "42"},
    }
    created = await answers.call("POST", "/v1/generate", 202, json=body)
    assert created["metadata"] == {"order_id": "42"}
    await answers.call("POST", "/v1/generate", 422, json={**body, "resolution": "4k"})
    page = await answers.call("GET", "/v1/generations", 200, "/v1/generations?metadata[order_id]=42")
    assert [g["id"] for g in page["data"]] == [created["id"]]
    await answers.call("GET", "/v1/generations", 422, "/v1/generations?metadata[a.b]=1")

    png = {"Content-Type": "image/png"}
    upload = await answers.call("POST", "/v1/uploads", 201, data=solid_image((1, 2, 3)), headers=png)
    await answers.call("POST", "/v1/uploads", 415, data=b"x", headers={"Content-Type": "text/plain"})
    await answers.call("POST", "/v1/uploads", 422, data=b"not an image", headers=png)
    await answers.call("POST", "/v1/uploads", 401, auth=False, data=solid_image((1, 2, 3)), headers=png)
    with_image = {**body, "image": {"upload_id": upload["id"]}}
    assert (await answers.call("POST", "/v1/generate", 202, json=with_image))["image"]["upload_id"] == upload[
        "id"
    ]
    one = f"/v1/uploads/{upload['id']}"
    assert await answers.call("GET", "/v1/uploads/{id}", 200, one) == upload
    await answers.call("DELETE", "/v1/uploads/{id}", 204, one)
    await answers.call("GET", "/v1/uploads/{id}", 404, one)
    await answers.call("DELETE", "/v1/uploads/{id}", 404, one)


async def test_keys_and_budgets_answer_as_documented(answers: Answers) -> None:
    made = await answers.call(
        "POST",
        "/v1/api-keys",
        201,
        json={"name": "dashboard", "scopes": ["usage:read"], "budgets": {"daily_video_seconds": 10}},
    )
    assert made["secret"].endswith(made["last_four"])
    one = f"/v1/api-keys/{made['id']}"
    await answers.call("POST", "/v1/api-keys", 422, json={"name": "x", "scopes": ["everything"]})
    await answers.call("POST", "/v1/api-keys", 401, auth=False, json={"name": "x", "scopes": ["usage:read"]})
    page = await answers.call("GET", "/v1/api-keys", 200, "/v1/api-keys?limit=1")
    assert page["next_cursor"]  # the fixture's key too
    await answers.call("GET", "/v1/api-keys", 422, "/v1/api-keys?limit=0")
    await answers.call("GET", "/v1/api-keys/{id}", 200, one)
    await answers.call("GET", "/v1/api-keys/{id}", 404, "/v1/api-keys/key_unknown")
    await answers.call("PATCH", "/v1/api-keys/{id}", 200, one, json={"name": "board"})
    await answers.call("PATCH", "/v1/api-keys/{id}", 422, one, json={})
    # A narrow key is refused beyond its scope, and cannot make a key with more.
    narrow = Answers(answers.client, answers.document, made["secret"])
    await narrow.call("GET", "/v1/budgets", 200)
    await narrow.call("GET", "/v1/api-keys", 403)
    await answers.call("DELETE", "/v1/api-keys/{id}", 200, one)
    await answers.call("PATCH", "/v1/api-keys/{id}", 409, one, json={"name": "late"})
    await answers.call("DELETE", "/v1/api-keys/{id}", 404, "/v1/api-keys/key_unknown")

    budgets = await answers.call("PUT", "/v1/budgets", 200, json={"daily_video_seconds": 6})
    assert budgets["remaining"][0]["remaining"] == 6
    await answers.call("PUT", "/v1/budgets", 422, json={"daily_video_seconds": -1})
    await answers.call("GET", "/v1/budgets", 200)
    body = {"prompt": "a kite", "provider": "mock", "duration": 4}
    await answers.call("POST", "/v1/generate", 202, json=body)
    refused = await answers.call("POST", "/v1/generate", 429, json=body)
    assert refused["budget"] == "daily_video_seconds" and refused["remaining"] == 2
    usage = await answers.call("GET", "/v1/usage", 200)
    assert usage["budgets"][0]["used"] == 4


async def test_batches_answer_as_documented(answers: Answers) -> None:
    item = {"prompt": "a kite", "provider": "mock", "duration": 3, "custom_id": "k1"}
    made = await answers.call("POST", "/v1/batches", 202, json={"items": [item, {**item, "custom_id": "k2"}]})
    lines = orjson.dumps(item) + b"\n"
    jsonl = {"Content-Type": "application/jsonl"}
    await answers.call("POST", "/v1/batches", 202, "/v1/batches?on_invalid=skip", data=lines, headers=jsonl)
    refused = await answers.call("POST", "/v1/batches", 422, json={"items": [{**item, "duration": 99}]})
    assert refused["items"][0]["index"] == 0 and refused["invalid_count"] == 1
    await answers.call("POST", "/v1/batches", 422, json={"items": []})
    await answers.call("POST", "/v1/batches", 400, data=b"{", headers={"Content-Type": "application/json"})
    await answers.call("POST", "/v1/batches", 415, data=b"x", headers={"Content-Type": "text/plain"})
    one = f"/v1/batches/{made['id']}"
    await answers.call("GET", "/v1/batches/{id}", 200, one)
    await answers.call("GET", "/v1/batches/{id}", 404, "/v1/batches/bat_unknown")
    page = await answers.call("GET", "/v1/batches", 200, "/v1/batches?limit=1")
    assert page["next_cursor"]
    await answers.call("GET", "/v1/batches", 422, "/v1/batches?limit=0")
    items = await answers.call(
        "GET", "/v1/batches/{id}/generations", 200, f"{one}/generations?limit=1&status=processing"
    )
    assert items["data"][0]["custom_id"] == "k1" and items["next_cursor"]
    await answers.call("GET", "/v1/batches/{id}/generations", 422, f"{one}/generations?status=nope")
    await answers.call("GET", "/v1/batches/{id}/generations", 404, "/v1/batches/bat_unknown/generations")
    results = await answers.call("GET", "/v1/batches/{id}/results", 200, f"{one}/results")
    assert len(results.splitlines()) == 2
    await answers.call("GET", "/v1/batches/{id}/results", 404, "/v1/batches/bat_unknown/results")
    canceled = await answers.call("POST", "/v1/batches/{id}/cancel", 200, f"{one}/cancel")
    assert canceled["canceled"] == 2 and canceled["batch"]["status"] == "canceled"
    await answers.call("POST", "/v1/batches/{id}/cancel", 409, f"{one}/cancel")
    await answers.call("POST", "/v1/batches/{id}/cancel", 404, "/v1/batches/bat_unknown/cancel")


async def test_provider_callbacks_answer_as_documented(answers: Answers) -> None:
    template = "/v1/provider-callbacks/{provider}/{token}"
    # A token we did not issue: taken, ignored. A fal call without its signature: refused (nothing fetched).
    path = "/v1/provider-callbacks/luma/gen_1.0.notours"
    assert await answers.call("POST", template, 200, path, auth=False, json={}) == {"received": True}
    path = "/v1/provider-callbacks/pika/gen_1.0.notours"
    await answers.call("POST", template, 401, path, auth=False, json={})


async def test_every_documented_operation_was_exercised_above(answers: Answers) -> None:
    """Guards the tests above: a new operation needs its answers checked here too."""
    covered = {
        ("post", "/v1/generate"),
        ("get", "/v1/generations"),
        ("get", "/v1/generations/{id}"),
        ("get", "/v1/generations/{id}/events"),
        ("post", "/v1/generations/{id}/cancel"),
        ("delete", "/v1/generations/{id}"),
        ("post", "/v1/webhooks"),
        ("get", "/v1/webhooks"),
        ("get", "/v1/webhooks/{id}"),
        ("patch", "/v1/webhooks/{id}"),
        ("delete", "/v1/webhooks/{id}"),
        ("post", "/v1/webhooks/{id}/rotate-secret"),
        ("post", "/v1/webhooks/{id}/test"),
        ("get", "/v1/webhooks/{id}/deliveries"),
        ("post", "/v1/webhooks/{id}/recover"),
        ("get", "/v1/deliveries/{id}"),
        ("post", "/v1/deliveries/{id}/retry"),
        ("get", "/v1/media/{folder}/{file}"),
        ("get", "/v1/usage"),
        ("get", "/v1/audit-events"),
        ("get", "/v1/events"),
        ("get", "/v1/events/{id}"),
        ("get", "/v1/providers"),
        ("get", "/v1/models"),
        ("post", "/v1/uploads"),
        ("get", "/v1/uploads/{id}"),
        ("delete", "/v1/uploads/{id}"),
        ("post", "/v1/api-keys"),
        ("get", "/v1/api-keys"),
        ("get", "/v1/api-keys/{id}"),
        ("patch", "/v1/api-keys/{id}"),
        ("delete", "/v1/api-keys/{id}"),
        ("get", "/v1/budgets"),
        ("put", "/v1/budgets"),
        ("post", "/v1/batches"),
        ("get", "/v1/batches"),
        ("get", "/v1/batches/{id}"),
        ("get", "/v1/batches/{id}/generations"),
        ("get", "/v1/batches/{id}/results"),
        ("post", "/v1/batches/{id}/cancel"),
        ("post", "/v1/provider-callbacks/{provider}/{token}"),
    }
    documented = {(method, path) for path, item in answers.document["paths"].items() for method in item}
    assert documented == covered
