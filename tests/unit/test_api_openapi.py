"""videogen_api.openapi: the OpenAPI 3.1 document is valid, documents exactly the routes the application
serves under /v1 (so neither can drift from the other), carries the deployment's limits, and renders into a
self-contained reference page."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, get_args

import pytest
from openapi_spec_validator import OpenAPIV31SpecValidator

from videogen_api import openapi
from videogen_api.app import create_app
from videogen_api.middleware import PUBLIC_PREFIXES
from videogen_api.routes import reference
from videogen_api.schemas.common import ValidationProblem
from videogen_api.schemas.deliveries import Delivery
from videogen_api.schemas.generations import Generation
from videogen_api.schemas.webhooks import WebhookCreated
from videogen_api.settings import ApiSettings
from videogen_common.deliveries import STATUSES
from videogen_common.scopes import Scope

Doc = dict[str, Any]
METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}


@pytest.fixture(scope="module")
def settings() -> ApiSettings:
    return ApiSettings()


@pytest.fixture(scope="module")
def document(settings: ApiSettings) -> Doc:
    return openapi.build_document(settings)


def operations(document: Doc) -> Iterator[tuple[str, str, Doc]]:
    for path, item in document["paths"].items():
        for method, op in item.items():
            if method in METHODS:
                yield path, method, op


def refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref":
                yield value
            else:
                yield from refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from refs(value)


def resolve(document: Doc, node: Doc) -> Doc:
    while "$ref" in node:
        target: Any = document
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = target
    return node


def test_the_document_is_valid_openapi_3_1(document: Doc) -> None:
    assert document["openapi"].startswith("3.1.")
    OpenAPIV31SpecValidator(document).validate()


def test_every_reference_resolves(document: Doc) -> None:
    for ref in set(refs(document)):
        assert ref.startswith("#/components/"), ref
        resolve(document, {"$ref": ref})


def test_the_router_and_the_document_name_the_same_operations(settings: ApiSettings, document: Doc) -> None:
    app = create_app(settings)
    # aiohttp answers HEAD for every GET by itself; the document lists what the handlers implement.
    routed = {
        (route.method.lower(), route.resource.canonical)
        for route in app.router.routes()
        if route.resource is not None
        and route.resource.canonical.startswith("/v1/")
        and route.method != "HEAD"
    }
    documented = {(method, path) for path, method, _ in operations(document)}
    assert routed == documented
    assert len(documented) == 41


def test_the_reference_itself_is_served_outside_v1_and_without_a_key(settings: ApiSettings) -> None:
    app = create_app(settings)
    paths = {route.resource.canonical for route in app.router.routes() if route.resource is not None}
    assert {"/openapi.json", "/docs"} <= paths
    assert "/openapi.json".startswith(PUBLIC_PREFIXES) and "/docs".startswith(PUBLIC_PREFIXES)


def test_operation_ids_are_unique_and_every_operation_is_tagged(document: Doc) -> None:
    ids = [op["operationId"] for _, _, op in operations(document)]
    assert len(ids) == len(set(ids))
    tags = {t["name"] for t in document["tags"]}
    for _, _, op in operations(document):
        assert op["tags"] and set(op["tags"]) <= tags


def test_path_parameters_are_documented_for_every_template_segment(document: Doc) -> None:
    for path, _, op in operations(document):
        declared = {
            p["name"] for p in (resolve(document, p) for p in op.get("parameters", [])) if p["in"] == "path"
        }
        assert declared == set(re.findall(r"{(\w+)}", path)), path


def test_every_answer_is_documented_with_its_request_id_and_errors_are_problems(document: Doc) -> None:
    for path, method, op in operations(document):
        for status, listed in op["responses"].items():
            response = resolve(document, listed)
            assert "X-Request-Id" in response["headers"], (path, method, status)
            if int(status) >= 400:
                assert list(response["content"]) == ["application/problem+json"], (path, method, status)


def test_authenticated_operations_document_the_rate_limit_headers_and_429(document: Doc) -> None:
    for path, method, op in operations(document):
        success = resolve(document, next(r for s, r in op["responses"].items() if s.startswith("2")))
        if op.get("security") == []:  # public: no account, no limit
            assert "429" not in op["responses"] and "RateLimit" not in success["headers"], (path, method)
            continue
        assert {"RateLimit-Policy", "RateLimit"} <= set(success["headers"]), (path, method)
        limited = resolve(document, op["responses"]["429"])
        assert {"Retry-After", "RateLimit-Policy", "RateLimit"} <= set(limited["headers"]), (path, method)
    headers = document["components"]["headers"]
    assert re.fullmatch(headers["RateLimit-Policy"]["schema"]["pattern"], '"generate";q=50;w=1')
    assert re.fullmatch(headers["RateLimit"]["schema"]["pattern"], '"default";r=0;t=60')
    assert re.fullmatch(headers["Retry-After"]["schema"]["pattern"], "1")
    assert not re.fullmatch(headers["Retry-After"]["schema"]["pattern"], "0")


def test_without_rate_limits_the_document_promises_no_rate_limit_headers() -> None:
    document = openapi.build_document(ApiSettings(rate_limit_enabled=False))
    for path, method, op in operations(document):
        if path == "/v1/generations/{id}/events":  # an event stream's own bound stays
            assert "too-many-streams" in resolve(document, op["responses"]["429"])["description"]
        elif op["operationId"] == "createGeneration":  # and a creation's budgets
            refusal = resolve(document, op["responses"]["429"])
            assert "budget-exceeded" in refusal["description"]
            assert "rate-limited" not in refusal["description"]
        else:
            assert "429" not in op["responses"], (path, method)
        for listed in op["responses"].values():
            assert "RateLimit" not in resolve(document, listed)["headers"], (path, method)


def test_authentication_is_bearer_everywhere_but_the_signed_media_links(document: Doc) -> None:
    assert document["components"]["securitySchemes"]["bearer"] == {
        "type": "http",
        "scheme": "bearer",
        "description": document["components"]["securitySchemes"]["bearer"]["description"],
    }
    assert document["security"] == [{"bearer": []}]
    for path, _, op in operations(document):
        if path.startswith("/v1/media/"):
            assert op["security"] == [] and "401" not in op["responses"] and "403" not in op["responses"]
        elif path.startswith("/v1/provider-callbacks/"):
            # Called by the providers: the URL's token (and fal's signature: 401 when it fails) is the guard.
            assert op["security"] == [] and "403" not in op["responses"] and "x-required-scope" not in op
        else:
            # The scope it needs: the bearer requirement's role, and x-required-scope; 403 beyond it.
            scope = op["x-required-scope"]
            assert scope in {s.value for s in Scope}, path
            assert op["security"] == [{"bearer": [scope]}]
            assert "401" in op["responses"] and "403" in op["responses"]
            assert scope in document["components"]["securitySchemes"]["bearer"]["description"]


def test_operations_with_a_body_document_its_errors(document: Doc) -> None:
    for path, method, op in operations(document):
        if "requestBody" not in op:
            continue
        if path == "/v1/uploads":  # an image's bytes, raw or as a form's file part: nothing to parse as JSON
            assert list(op["requestBody"]["content"]) == [
                "image/png",
                "image/jpeg",
                "image/webp",
                "multipart/form-data",
            ]
            assert {"413", "415", "422"} <= set(op["responses"])
        elif path.startswith("/v1/provider-callbacks/"):  # a provider's JSON, never parsed: only its size
            assert list(op["requestBody"]["content"]) == ["application/json"]
            assert "413" in op["responses"]
        else:
            assert list(op["requestBody"]["content"]) == ["application/json"]
            assert {"400", "413", "415", "422"} <= set(op["responses"]), (path, method)


def test_listings_document_limit_and_cursor_and_creation_its_idempotency_key(document: Doc) -> None:
    def names(path: str, method: str) -> set[str]:
        op = document["paths"][path][method]
        return {resolve(document, p)["name"] for p in op["parameters"]}

    assert {"limit", "cursor", "status", "provider", "created_after", "created_before"} <= names(
        "/v1/generations", "get"
    )
    assert {"limit", "cursor", "status", "event_type", "created_after", "created_before"} <= names(
        "/v1/webhooks/{id}/deliveries", "get"
    )
    assert "Idempotency-Key" in names("/v1/generate", "post")
    limit = document["components"]["parameters"]["Limit"]["schema"]
    assert (limit["minimum"], limit["maximum"], limit["default"]) == (1, 100, 20)


def test_response_schemas_are_the_response_models(document: Doc) -> None:
    components = document["components"]["schemas"]
    catalogs = openapi.catalog_schemas()
    for model in (Generation, WebhookCreated, Delivery, ValidationProblem):
        generated = model.model_json_schema(ref_template="#/components/schemas/{model}")
        generated.pop("$defs", None)
        # A catalog's values (the event types) are one component the schema refers to.
        assert components[model.__name__] == openapi.refer_to_catalogs(generated, catalogs)
    assert catalogs["EventType"] == components["EventType"]
    assert components["WebhookCreated"]["properties"]["events"]["items"] == {
        "$ref": "#/components/schemas/EventType"
    }
    assert components["Generation"]["additionalProperties"] is False
    assert set(components["Generation"]["required"]) == set(components["Generation"]["properties"])
    delivery_status = Delivery.model_fields["status"].annotation
    assert get_args(delivery_status) == STATUSES


def test_the_document_carries_the_deployments_limits() -> None:
    strict = openapi.build_document(ApiSettings(prompt_max_chars=500, max_body_bytes=4096))
    prompt = strict["components"]["schemas"]["GenerateRequest"]["properties"]["prompt"]
    assert prompt["maxLength"] == 500
    assert "4096 bytes" in strict["components"]["responses"]["PayloadTooLarge"]["description"]
    https_only = strict["components"]["schemas"]["WebhookCreate"]["properties"]["url"]["pattern"]
    assert re.match(https_only, "https://example.test/x") and not re.match(
        https_only, "http://example.test/x"
    )
    lenient = openapi.build_document(ApiSettings(webhook_allow_http=True))
    pattern = lenient["components"]["schemas"]["WebhookUpdate"]["properties"]["url"]["pattern"]
    assert re.match(pattern, "http://example.test/x") and re.match(pattern, "HTTPS://example.test/x")
    assert not re.match(pattern, "http://") and not re.match(pattern, "http://example.test/a b")


def test_a_patch_documents_no_null_and_at_least_one_field(document: Doc) -> None:
    update = document["components"]["schemas"]["WebhookUpdate"]
    assert update["minProperties"] == 1 and "required" not in update
    for prop in update["properties"].values():
        assert "anyOf" not in prop and "default" not in prop and prop.get("type") != "null"


def test_the_reference_page_is_ours_and_loads_nothing_from_elsewhere() -> None:
    page = reference.ASSETS["index.html"].body.decode()
    assert page.startswith("<!doctype html>")
    # Scripts only from files of ours (no inline code), nothing from another origin.
    assert re.findall(r"<script[^>]*>", page) == [
        '<script src="/docs/swagger-ui-bundle.js" defer>',
        '<script src="/docs/reference.js" defer>',
    ]
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)
    assert {"swagger-ui-bundle.js", "swagger-ui.css", "reference.js"} <= set(reference.ASSETS)
    assert "script-src 'self'" in reference.CONTENT_SECURITY_POLICY
    assert "frame-ancestors 'none'" in reference.CONTENT_SECURITY_POLICY
