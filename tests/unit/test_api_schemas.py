"""videogen_api.schemas.common.parse_body with GenerateRequest and WebhookCreate; the generation's answer
field for field the record's public fields; and every closed list the api states, its home's in
``videogen_common`` (a list restated by hand in an api module fails here)."""

from __future__ import annotations

import argparse
import ast
import enum
import importlib
import pkgutil
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, get_args

import orjson
import pytest

import videogen_common
from videogen_api.problems import Problem
from videogen_api.schemas.common import Auto, BudgetName, DeliveryStatus, HealthState, ImageType, parse_body
from videogen_api.schemas.generations import GenerateRequest, Generation
from videogen_api.schemas.webhooks import WebhookCreate
from videogen_client.cli import _parser
from videogen_common.budgets import BUDGET_NAMES
from videogen_common.deliveries import STATUSES
from videogen_common.domain import Provider
from videogen_common.generations import VIDEO_OPTIONS, new_generation, public_view
from videogen_common.images import CONTENT_TYPES
from videogen_common.records.generation import PUBLIC_FIELDS
from videogen_common.records.health import HEALTH_STATES
from videogen_common.routing import AUTO

GOOD_GENERATE: dict[str, Any] = {"prompt": "a cat on a skateboard", "provider": "mock", "duration": 5}
GOOD_WEBHOOK: dict[str, Any] = {"url": "https://example.com/hooks/videogen", "events": ["video.completed"]}


def _problem(model: type[GenerateRequest | WebhookCreate], raw: bytes, **context: Any) -> Problem:
    with pytest.raises(Problem) as info:
        parse_body(model, raw, **context)
    return info.value


def _errors(problem: Problem) -> list[dict[str, str]]:
    errors: list[dict[str, str]] = problem.extensions["errors"]
    return errors


def _invalid_fields(model: type[GenerateRequest | WebhookCreate], body: object, **context: Any) -> list[str]:
    problem = _problem(model, orjson.dumps(body), **context)
    assert problem.status == 422
    assert problem.slug == "validation-error"
    return [e["field"] for e in _errors(problem)]


# --- GenerateRequest ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("provider", list(Provider))
@pytest.mark.parametrize("duration", [3, 5, 10])
def test_generate_valid(provider: Provider, duration: int) -> None:
    body = {**GOOD_GENERATE, "provider": provider.value, "duration": duration}
    request = parse_body(GenerateRequest, orjson.dumps(body))
    assert request.prompt == "a cat on a skateboard"
    assert request.provider is provider
    assert request.duration == duration


def test_generate_prompt_keeps_surrounding_whitespace_and_unicode() -> None:
    body = {**GOOD_GENERATE, "prompt": "  un chat qui fait du skate 🛹 "}
    assert parse_body(GenerateRequest, orjson.dumps(body)).prompt == "  un chat qui fait du skate 🛹 "


@pytest.mark.parametrize("raw", [b"", b"{", b"not json", b'{"prompt": "a",}', b"\xff"], ids=repr)
def test_malformed_json_is_400(raw: bytes) -> None:
    problem = _problem(GenerateRequest, raw)
    assert problem.status == 400
    assert problem.slug == "malformed-json"


@pytest.mark.parametrize("raw", [b"[]", b'"x"', b"null", b"5", b"true", b'[{"prompt": "a"}]'], ids=repr)
@pytest.mark.parametrize("model", [GenerateRequest, WebhookCreate])
def test_non_object_json_is_422(model: type[GenerateRequest | WebhookCreate], raw: bytes) -> None:
    problem = _problem(model, raw)
    assert problem.status == 422
    assert problem.slug == "validation-error"
    assert [e["field"] for e in _errors(problem)] == ["body"]


@pytest.mark.parametrize("duration", [2, 11, 0, -5, 5.5, 5.0, "5", True, False, None, [5]], ids=repr)
def test_bad_duration(duration: object) -> None:
    assert _invalid_fields(GenerateRequest, {**GOOD_GENERATE, "duration": duration}) == ["duration"]


@pytest.mark.parametrize("provider", ["sora", "MOCK", "", None, 1])
def test_unknown_provider(provider: object) -> None:
    assert _invalid_fields(GenerateRequest, {**GOOD_GENERATE, "provider": provider}) == ["provider"]


@pytest.mark.parametrize("prompt", ["", " ", "   \n\t ", "\u3000"], ids=repr)
def test_empty_or_blank_prompt(prompt: str) -> None:
    assert _invalid_fields(GenerateRequest, {**GOOD_GENERATE, "prompt": prompt}) == ["prompt"]


@pytest.mark.parametrize("prompt", [5, None, ["a"]], ids=repr)
def test_prompt_must_be_a_string(prompt: object) -> None:
    assert _invalid_fields(GenerateRequest, {**GOOD_GENERATE, "prompt": prompt}) == ["prompt"]


def test_prompt_max_chars() -> None:
    ok = parse_body(GenerateRequest, orjson.dumps({**GOOD_GENERATE, "prompt": "x" * 10}), prompt_max_chars=10)
    assert ok.prompt == "x" * 10
    problem = _problem(
        GenerateRequest, orjson.dumps({**GOOD_GENERATE, "prompt": "x" * 11}), prompt_max_chars=10
    )
    assert problem.status == 422
    assert [e["field"] for e in _errors(problem)] == ["prompt"]
    assert "10" in _errors(problem)[0]["message"]


def test_prompt_without_limit_in_context_is_unbounded() -> None:
    assert (
        parse_body(GenerateRequest, orjson.dumps({**GOOD_GENERATE, "prompt": "x" * 5000})).prompt
        == "x" * 5000
    )


@pytest.mark.parametrize(
    "missing",
    [("prompt",), ("provider",), ("duration",), ("prompt", "duration"), ("prompt", "provider", "duration")],
)
def test_missing_fields_are_each_listed(missing: tuple[str, ...]) -> None:
    body = {k: v for k, v in GOOD_GENERATE.items() if k not in missing}
    problem = _problem(GenerateRequest, orjson.dumps(body))
    assert problem.status == 422
    errors = _errors(problem)
    assert sorted(e["field"] for e in errors) == sorted(missing)
    assert {e["code"] for e in errors} == {"missing"}


def test_unknown_extra_field() -> None:
    problem = _problem(GenerateRequest, orjson.dumps({**GOOD_GENERATE, "style": "anime"}))
    assert problem.status == 422
    assert _errors(problem) == [{"field": "style", "message": "unknown field", "code": "extra_forbidden"}]


def test_several_bad_fields_are_all_reported() -> None:
    body = {"prompt": " ", "provider": "sora", "duration": 99, "x": 1}
    assert sorted(_invalid_fields(GenerateRequest, body)) == ["duration", "prompt", "provider", "x"]


def test_problem_detail_names_the_fields() -> None:
    problem = _problem(GenerateRequest, orjson.dumps({**GOOD_GENERATE, "duration": 11}))
    assert problem.detail is not None
    assert problem.detail.startswith("duration: ")
    assert set(_errors(problem)[0]) == {"field", "message", "code"}


# --- WebhookCreate -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "https://example.com/hooks/videogen",
        "http://127.0.0.1:9000/h",
        "https://example.com",
        "https://hooks.example.com:8443/a/b?c=d",
        "http://[::1]:8000/h",
    ],
)
def test_webhook_valid_urls(url: str) -> None:
    webhook = parse_body(WebhookCreate, orjson.dumps({**GOOD_WEBHOOK, "url": url}))
    assert webhook.url == url


@pytest.mark.parametrize(
    "events",
    [
        ["video.completed"],
        ["video.failed"],
        ["video.completed", "video.failed"],
        ["video.failed", "video.completed"],
    ],
)
def test_webhook_valid_events(events: list[str]) -> None:
    webhook = parse_body(WebhookCreate, orjson.dumps({**GOOD_WEBHOOK, "events": events}))
    assert webhook.events == events


@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.com/h",
        "ws://example.com/h",
        "file:///etc/passwd",
        "javascript:alert(1)",
        "/hooks/videogen",
        "example.com/h",
        "//example.com/h",
        "https://",
        "https:///path",
        "https://user:pass@example.com/h",
        "https://user@example.com/h",
        "https://:pass@example.com/h",
        "https://example.com/" + "a" * 2048,
        "",
        "http://[::1",
        # urlsplit drops these, so the URL contacted would differ from the URL given.
        " https://example.com/h",
        "https://example.com/a b",
        "ht\ttps://example.com/h",
        "https://example.com/h\n",
        "\x01https://example.com/h",
        "https://example.com/\x7f",
    ],
    ids=lambda u: repr(u[:40]),
)
def test_webhook_bad_url(url: str) -> None:
    assert _invalid_fields(WebhookCreate, {**GOOD_WEBHOOK, "url": url}) == ["url"]


@pytest.mark.parametrize(
    "url",
    [
        "https://example.com/hooks/videogen",
        "HTTP://127.0.0.1:9000/h",
        "http://[::1]:8000/h",
        "https://bücher.example/ü?x=1#f",
        "http://@example.com/h",
    ],
)
def test_every_url_the_validator_accepts_matches_the_documented_pattern(url: str) -> None:
    # The OpenAPI document states this pattern; whatever the API accepts must be valid by the document.
    parse_body(WebhookCreate, orjson.dumps({**GOOD_WEBHOOK, "url": url}))
    assert re.match(WebhookCreate.model_json_schema()["properties"]["url"]["pattern"], url)


def test_webhook_url_length_limit_is_2048() -> None:
    base = "https://example.com/"
    exactly = base + "a" * (2048 - len(base))
    assert parse_body(WebhookCreate, orjson.dumps({**GOOD_WEBHOOK, "url": exactly})).url == exactly
    assert _invalid_fields(WebhookCreate, {**GOOD_WEBHOOK, "url": exactly + "a"}) == ["url"]


def test_webhook_empty_events() -> None:
    assert _invalid_fields(WebhookCreate, {**GOOD_WEBHOOK, "events": []}) == ["events"]


@pytest.mark.parametrize("event", ["video.started", "VIDEO.COMPLETED", "generation.status", "", 1])
def test_webhook_unknown_event(event: object) -> None:
    fields = _invalid_fields(WebhookCreate, {**GOOD_WEBHOOK, "events": ["video.completed", event]})
    assert fields == ["events.1"]


def test_webhook_duplicated_event() -> None:
    problem = _problem(
        WebhookCreate, orjson.dumps({**GOOD_WEBHOOK, "events": ["video.failed", "video.failed"]})
    )
    assert problem.status == 422
    assert [e["field"] for e in _errors(problem)] == ["events"]
    assert "repeat" in _errors(problem)[0]["message"]


def test_webhook_events_must_be_a_list() -> None:
    assert _invalid_fields(WebhookCreate, {**GOOD_WEBHOOK, "events": "video.failed"}) == ["events"]


def test_webhook_missing_fields() -> None:
    assert sorted(_invalid_fields(WebhookCreate, {})) == ["events", "url"]


def test_webhook_unknown_extra_field() -> None:
    problem = _problem(WebhookCreate, orjson.dumps({**GOOD_WEBHOOK, "secret": "mine"}))
    assert problem.status == 422
    assert _errors(problem) == [{"field": "secret", "message": "unknown field", "code": "extra_forbidden"}]


def test_the_generation_answer_has_the_public_fields_in_their_order() -> None:
    assert tuple(Generation.model_fields) == PUBLIC_FIELDS
    assert (
        tuple(
            public_view(
                new_generation(
                    generation_id="gen_1",
                    account_id="a",
                    prompt="p",
                    provider=Provider.MOCK,
                    duration=3,
                    now=datetime.now(UTC),
                )
            )
        )
        == PUBLIC_FIELDS
    )


# --- A new field of a generation (docs/architecture.md, "Changing the code") -------------------------------
# What a request takes is shown on the generation, or named here as what it is not; and the places outside
# the api that say what a request takes have it too.
ROOT = Path(__file__).parents[2]
NOT_SHOWN = {  # what is shown instead, or why nothing is
    "deadline_seconds": "the generation fails with deadline_exceeded",
    "fallback_providers": "route",
    "routing": "route",
    "fallback_on_failure": "route",
    "retention_days": "the media's links stop working",
}
# vg generate's options named otherwise than the fields they fill, and the fields it does not offer.
VG_OPTIONS = {"fallback_providers": "fallback", "routing": "sort"}
VG_NOT_OFFERED = {"deadline_seconds"}


def test_every_field_a_request_takes_is_shown_on_the_generation_or_named_as_not() -> None:
    request = set(GenerateRequest.model_fields)
    assert request - set(PUBLIC_FIELDS) == set(NOT_SHOWN)
    assert set(VIDEO_OPTIONS) <= request & set(PUBLIC_FIELDS)


def test_vg_generate_offers_every_field_a_request_takes() -> None:
    (generate,) = [
        parser
        for action in _parser()._actions
        if isinstance(action, argparse._SubParsersAction)
        for name, parser in action.choices.items()
        if name == "generate"
    ]
    offered = {action.dest for action in generate._actions}
    missing = {VG_OPTIONS.get(name, name) for name in GenerateRequest.model_fields} - VG_NOT_OFFERED - offered
    assert missing == set()


def test_the_api_reference_names_every_field_a_request_takes() -> None:
    text = (ROOT / "docs/api.md").read_text()
    listed = re.search(r"^\| `POST /generate` `\{([^}]*)\}`", text, re.M)
    assert listed is not None
    assert {name.strip().rstrip("?") for name in listed.group(1).split(",")} == set(
        GenerateRequest.model_fields
    )


# --- Closed lists -------------------------------------------------------------------------------------------
# A closed list (the values a field may take) is written once, in videogen_common: an Enum, or a tuple or
# mapping of its values. The schemas state each as the Literal of its home's values (schemas.common).

API = ROOT / "services/api/src"


def test_each_closed_list_of_the_schemas_is_its_homes() -> None:
    assert get_args(DeliveryStatus) == STATUSES
    assert get_args(HealthState) == HEALTH_STATES
    assert get_args(ImageType) == tuple(CONTENT_TYPES.values())
    assert get_args(BudgetName) == BUDGET_NAMES
    assert get_args(Auto) == (AUTO,)


def _homes() -> dict[frozenset[str], str]:
    """Every closed list of videogen_common, by its values: each public Enum of strings, and each public
    tuple, set or mapping of strings (its values)."""
    homes: dict[frozenset[str], str] = {}
    for info in pkgutil.walk_packages(videogen_common.__path__, "videogen_common."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if name.startswith("_"):
                continue
            if isinstance(value, type) and issubclass(value, enum.Enum):
                values = [member.value for member in value]
            elif isinstance(value, tuple | frozenset | set):
                values = list(value)
            elif isinstance(value, dict):
                values = list(value.values())
            else:
                continue
            if len(values) >= 2 and all(isinstance(v, str) for v in values):
                homes.setdefault(frozenset(str(v) for v in values), f"{module.__name__}.{name}")
    return homes


def _string_lists(tree: ast.AST) -> list[tuple[int, bool, list[str]]]:
    """(line, whether it is a Literal, the strings) of every literal collection of strings in ``tree``:
    a tuple, list or set, the values of a Literal[...], the values an Enum class assigns."""
    found = []
    literals = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "Literal"
    ]
    within = {id(node.slice) for node in literals}  # a Literal's values are its own, not a tuple beside it
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and node in literals:
            elements = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            literal = True
        elif isinstance(node, ast.Tuple | ast.List | ast.Set) and id(node) not in within:
            elements, literal = node.elts, False
        elif isinstance(node, ast.ClassDef):
            elements = [s.value for s in node.body if isinstance(s, ast.Assign)]
            literal = False
        else:
            continue
        strings = [e.value for e in elements if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        found.append((node.lineno, literal, strings))
    return found


def _copies(source: str, homes: dict[frozenset[str], str]) -> list[str]:
    """Where ``source`` restates a closed list: a Literal of several strings is one written by hand (derive
    it from its home, as schemas.common does); a tuple, list, set or Enum of exactly a home's values (or, for
    a home of three or more, all of them among others) is a copy of that home."""
    copies = []
    for line, literal, strings in _string_lists(ast.parse(source)):
        if literal and len(strings) >= 2:
            copies.append(f"{line}: Literal{strings}")
            continue
        given = set(strings)
        copies += [
            f"{line}: {home}"
            for values, home in homes.items()
            if given == values or (len(values) >= 3 and values <= given)
        ]
    return copies


def test_a_closed_list_restated_by_hand_is_found() -> None:
    homes = _homes()
    for home in (STATUSES, HEALTH_STATES, BUDGET_NAMES, tuple(CONTENT_TYPES.values()), tuple(Provider)):
        assert frozenset(home) in homes, home
    assert _copies('status: Literal["pending", "succeeded", "failed"]', homes) == [
        "1: Literal['pending', 'succeeded', 'failed']"
    ]
    assert _copies('TYPES = ("image/png", "image/webp", "image/jpeg")', homes) == [
        "1: videogen_common.images.CONTENT_TYPES"
    ]
    assert _copies(
        'class State(StrEnum):\n    UP = "operational"\n    SO_SO = "degraded"\n    DOWN = "down"', homes
    )
    # Some of a list's values, a single value, or other strings are not copies.
    assert _copies('waits = status in ("queued", "processing", "x")\nkind: Literal["urn:x"]', homes) == []


def test_no_api_module_restates_a_closed_list() -> None:
    homes = _homes()
    copies = [
        f"{path.relative_to(API)}:{copy}"
        for path in sorted(API.rglob("*.py"))
        for copy in _copies(path.read_text(), homes)
    ]
    assert copies == []
