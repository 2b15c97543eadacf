"""The sync ``Client`` is the ``AsyncClient``, called: the same resources, each with the same methods, and
every method taking exactly what its async twin takes (names, kinds, defaults, annotations) and answering
what it answers (an iterator for an async iterator). A parameter or method added to one and not the other
fails here. And a method that takes its keywords as ``**name: Unpack[SomeTypedDict]`` shows them spelled
out."""

from __future__ import annotations

import inspect
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator
from typing import Any, get_args, get_origin, get_type_hints

import pytest

from videogen_client import AsyncClient, Client
from videogen_client.resources.generations import AsyncGenerations, CreateParams


@pytest.fixture(scope="module")
def twins() -> Iterator[tuple[Client, AsyncClient]]:
    # Nothing is sent: the clients are only looked at.
    client = Client(api_key="vg_test", base_url="http://127.0.0.1:9/v1")
    try:
        yield client, client._async
    finally:
        client.close()


def _resources(client: Client | AsyncClient) -> dict[str, object]:
    return {
        name: value for name, value in vars(client).items() if not name.startswith("_") and name != "base_url"
    }


def _methods(resource: object) -> dict[str, Callable[..., Any]]:
    return {
        name: getattr(resource, name)
        for name in dir(type(resource))
        if not name.startswith("_") and callable(getattr(resource, name))
    }


def _signature(method: Callable[..., Any]) -> inspect.Signature:
    return inspect.signature(method, eval_str=True)


def _answers_alike(sync: Any, asynchronous: Any) -> bool:
    """What the sync method answers is what the async one does, or an iterator where it is an async one."""
    if sync == asynchronous:
        return True
    return (
        get_origin(sync) is Iterator
        and get_origin(asynchronous) in (AsyncIterator, AsyncGenerator)
        and get_args(sync)[0] == get_args(asynchronous)[0]
    )


def test_the_clients_take_the_same_arguments() -> None:
    assert _signature(Client.__init__) == _signature(AsyncClient.__init__)


def test_the_sync_client_has_every_resource_of_the_async_one(twins: tuple[Client, AsyncClient]) -> None:
    client, async_client = twins
    assert set(_resources(client)) == set(_resources(async_client))
    assert len(_resources(client)) >= 10


def test_every_sync_method_is_its_async_twin_called(twins: tuple[Client, AsyncClient]) -> None:
    client, async_client = twins
    compared = 0
    for name, resource in _resources(client).items():
        async_methods = _methods(_resources(async_client)[name])
        sync_methods = _methods(resource)
        assert set(sync_methods) == set(async_methods), f"client.{name}: not the same methods"
        for method, sync in sync_methods.items():
            asynchronous = async_methods[method]
            where = f"client.{name}.{method}"
            sync_signature, async_signature = _signature(sync), _signature(asynchronous)
            assert list(sync_signature.parameters.values()) == list(async_signature.parameters.values()), (
                where
            )
            assert _answers_alike(sync_signature.return_annotation, async_signature.return_annotation), where
            assert sync.__doc__ == asynchronous.__doc__, where
            compared += 1
    assert compared >= 40


def test_a_different_sync_signature_would_be_seen() -> None:
    """The comparison above tells a changed default, annotation or missing keyword apart."""

    async def asynchronous(
        self: object, *, seed: int | None = None, metadata: dict[str, str] | None = None
    ) -> int:
        return 0

    def other_default(*, seed: int | None = 1, metadata: dict[str, str] | None = None) -> int:
        return 0

    def missing(*, seed: int | None = None) -> int:
        return 0

    twin = list(_signature(asynchronous).parameters.values())[1:]
    for sync in (other_default, missing):
        assert list(_signature(sync).parameters.values()) != twin


def test_create_spells_out_the_keywords_it_declares_once() -> None:
    """``help(client.generations.create)`` shows each keyword of ``CreateParams``: the required ones without a
    default, the others defaulting to None; ``create_and_wait`` takes them too, then its own."""
    hints = get_type_hints(CreateParams)
    parameters = _signature(AsyncGenerations.create).parameters
    assert list(parameters) == ["self", *hints]
    required = {name for name, p in parameters.items() if p.default is inspect.Parameter.empty}
    assert required == {"self", "prompt", "provider", "duration"}
    assert all(parameters[name].annotation == hint for name, hint in hints.items())
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for name, p in parameters.items() if name != "self")
    assert list(_signature(AsyncGenerations.create_and_wait).parameters) == [
        "self",
        *hints,
        "timeout",
        "on_progress",
    ]
