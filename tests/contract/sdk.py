"""What the contract tests share: reading an official SDK's parameter types (TypedDicts whose keys carry
their wire names as ``PropertyInfo(alias=...)``), checking a request body against one, checking an answer
against an SDK's response model, an adapter whose requests are recorded instead of sent, and running an SDK's
synchronous client off the event loop."""

from __future__ import annotations

import asyncio
import functools
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import orjson
import pydantic
from aiohttp import web

from tests.support.fake_providers.common import Exchange
from videogen_orchestrator.providers.http import ProviderHTTP, Reply, RetryPolicy

T = TypeVar("T")

# The headers that carry the contract (credentials, API version, body type); the SDKs' own telemetry headers
# (User-Agent, X-Stainless-*) are theirs alone.
CONTRACT_HEADERS = ("Authorization", "X-Runway-Version", "Content-Type")


@dataclass(frozen=True)
class Field:
    name: str  # the SDK's Python name
    wire: str  # the JSON key it is sent as
    required: bool


def fields_of(params: type) -> dict[str, Field]:
    """A params TypedDict's fields by wire name: each alias read from its ``PropertyInfo`` annotation."""
    return dict(_fields_of(params))


@functools.cache
def _fields_of(params: type) -> dict[str, Field]:
    fields: dict[str, Field] = {}
    for name, declared in typing.get_type_hints(params, include_extras=True).items():
        required = typing.get_origin(declared) is typing.Required
        hint = declared
        if typing.get_origin(hint) in (typing.Required, typing.NotRequired):
            hint = typing.get_args(hint)[0]
        wire = name
        for extra in getattr(hint, "__metadata__", ()):
            alias = getattr(extra, "alias", None)
            if isinstance(alias, str):
                wire = alias
        fields[wire] = Field(name, wire, required)
    return fields


def check_body(params: type, body: Mapping[str, Any]) -> dict[str, Any]:
    """Check a request body (wire names) against the SDK's params type: every key one it declares, every
    required one present, every value of its type and value set (pydantic, strict). Returns the body under
    the SDK's Python names (its keyword arguments)."""
    fields = fields_of(params)
    unknown = sorted(set(body) - set(fields))
    assert not unknown, f"{params.__qualname__} has no field {unknown} (it has {sorted(fields)})"
    missing = sorted(f.wire for f in fields.values() if f.required and f.wire not in body)
    assert not missing, f"{params.__qualname__} requires {missing}"
    kwargs = {fields[wire].name: value for wire, value in body.items()}
    _adapter(params).validate_python(kwargs, strict=True)
    return kwargs


@functools.cache
def _adapter(params: type) -> pydantic.TypeAdapter[Any]:
    return pydantic.TypeAdapter(params)


def members(union: Any) -> tuple[Any, ...]:
    """The types of a union (under its ``Annotated`` discriminator, if it has one)."""
    if typing.get_origin(union) is typing.Annotated:
        union = typing.get_args(union)[0]
    return typing.get_args(union)


def union_member(union: Any, model: str) -> type:
    """The member of a params union (one TypedDict per model) whose ``model`` is ``model``."""
    for member in members(union):
        hint = typing.get_type_hints(member, include_extras=True).get("model")
        if hint is not None and model in typing.get_args(typing.get_args(hint)[0]):
            return typing.cast(type, member)
    raise AssertionError(f"the SDK has no parameters for model {model!r}")


def literal_values(params: type, wire: str) -> set[Any]:
    """The values a ``Literal`` field of a params type allows."""
    field = fields_of(params)[wire]
    hint = typing.get_type_hints(params, include_extras=True)[field.name]
    while typing.get_origin(hint) in (typing.Required, typing.NotRequired, typing.Annotated):
        hint = typing.get_args(hint)[0]
    assert typing.get_origin(hint) is typing.Literal, f"{params.__qualname__}.{wire} is {hint}, not a Literal"
    return set(typing.get_args(hint))


def accepted(model: Any, answer: Any) -> Any:
    """``answer`` (JSON, as the fake sends it) read by the SDK's response model (or union of them): valid,
    and with no field the model does not declare (at any depth)."""
    parsed = pydantic.TypeAdapter(model).validate_json(orjson.dumps(answer))
    assert_no_extra(parsed)
    return parsed


def assert_no_extra(value: Any, where: str = "") -> None:
    if isinstance(value, pydantic.BaseModel):
        extra = value.model_extra or {}
        assert not extra, f"{type(value).__qualname__}{where} has no field {sorted(extra)}"
        for name in type(value).model_fields:
            assert_no_extra(getattr(value, name), f"{where}.{name}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            assert_no_extra(item, f"{where}[{index}]")


def contract_headers(exchange: Exchange) -> dict[str, str]:
    """The request's contract headers (its body's type only when it has a body: the SDKs send their default
    ``Content-Type`` on a bodiless request too)."""
    names = CONTRACT_HEADERS if exchange.body else tuple(h for h in CONTRACT_HEADERS if h != "Content-Type")
    return {name: exchange.headers[name] for name in names if name in exchange.headers}


def answer_json(response: web.Response) -> Any:
    """The JSON a fake's handler answered (built without a request: ``created``)."""
    assert isinstance(response.body, bytes)
    return orjson.loads(response.body)


def json_of(exchange: Exchange) -> Any:
    return orjson.loads(exchange.body) if exchange.body else None


async def off_loop(call: Callable[[], T]) -> T:
    """Run an SDK's synchronous call in a thread: the fake it talks to serves from this loop."""
    return await asyncio.to_thread(call)


class RecordingHTTP(ProviderHTTP):
    """An adapter's API client that records each request and answers it from ``answers`` (by method and
    path prefix) instead of sending it: for checking every body an adapter can build, without a server."""

    def __init__(self, answers: Mapping[tuple[str, str], Any]) -> None:
        super().__init__(
            name="recording",
            base_url="http://127.0.0.1:9",
            headers={},
            policy=RetryPolicy(attempts=1),
            timeout_seconds=1,
        )
        self.answers = answers
        self.sent: list[tuple[str, str, Any]] = []

    async def request(self, method: str, path: str, *, json: Any = None, **kwargs: Any) -> Reply:
        self.sent.append((method, path, json))
        for (m, prefix), body in self.answers.items():
            if m == method and path.startswith(prefix):
                return Reply(200, body, {})
        raise AssertionError(f"no answer for {method} {path}")
