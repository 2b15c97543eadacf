"""The sync client: one daemon thread per client runs an event loop (``Portal``) on which each sync resource
(``Twin``) runs the methods of its async twin to the end. A sync method is not written again: it is the async
one, ``blocking`` or ``iterated`` — the same parameters, types, defaults and docstring."""

from __future__ import annotations

import asyncio
import inspect
import threading
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Coroutine, Iterator
from types import GenericAlias
from typing import Any, Concatenate, Generic, ParamSpec, Self, TypeVar, get_args, overload

T = TypeVar("T")
A = TypeVar("A")
P = ParamSpec("P")


class Portal:
    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="videogen-client", daemon=True)
        self._thread.start()

    @property
    def closed(self) -> bool:
        return self._loop.is_closed()

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run ``coroutine`` on the client's loop and return its result (or raise its error) here."""
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()

    def close(self) -> None:
        if self._loop.is_closed():
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()


class Twin(Generic[A]):
    """A resource of the sync ``Client``: its methods are those of ``A``, its async twin, called."""

    def __init__(self, portal: Portal, twin: A) -> None:
        self._portal = portal
        self._twin = twin


class _Derived(ABC, Generic[A, P, T]):
    """A sync method made from an async one (``function``, of the twin's class)."""

    def __init__(self, function: Callable[Concatenate[A, P], Any]) -> None:
        self._function = function
        self._qualname = function.__qualname__
        self._signature: inspect.Signature | None = None

    def __set_name__(self, owner: type[Any], name: str) -> None:
        self._qualname = f"{owner.__qualname__}.{name}"

    @abstractmethod
    def _call(self, twin: Twin[A], *args: Any, **kwargs: Any) -> T:
        """Call the async method on ``twin``'s async resource, to the end."""

    def _returns(self, annotation: Any) -> Any:
        return annotation

    @overload
    def __get__(self, obj: None, owner: type[Any] | None = None) -> Self: ...

    @overload
    def __get__(self, obj: Twin[A], owner: type[Any] | None = None) -> Callable[P, T]: ...

    def __get__(self, obj: Twin[A] | None, owner: type[Any] | None = None) -> Self | Callable[P, T]:
        if obj is None:
            return self

        def method(*args: P.args, **kwargs: P.kwargs) -> T:
            return self._call(obj, *args, **kwargs)

        method.__name__ = self._function.__name__
        method.__qualname__ = self._qualname
        method.__doc__ = self._function.__doc__
        method.__signature__ = self.signature  # type: ignore[attr-defined]
        return method

    @property
    def signature(self) -> inspect.Signature:
        """The async method's signature, less its ``self`` (what it returns as ``_returns`` makes it)."""
        if self._signature is None:
            async_signature = inspect.signature(self._function, eval_str=True)
            self._signature = async_signature.replace(
                parameters=list(async_signature.parameters.values())[1:],
                return_annotation=self._returns(async_signature.return_annotation),
            )
        return self._signature


class blocking(_Derived[A, P, T]):
    """``name = blocking(AsyncThing.name)``: the coroutine method, run to its end; answers what it answers."""

    def __init__(self, function: Callable[Concatenate[A, P], Coroutine[Any, Any, T]]) -> None:
        super().__init__(function)

    def _call(self, twin: Twin[A], *args: Any, **kwargs: Any) -> T:
        result: T = twin._portal.run(self._function(twin._twin, *args, **kwargs))
        return result


class iterated(_Derived[A, P, Iterator[T]]):
    """``name = iterated(AsyncThing.name)``: the async iterator's items, each fetched on the loop."""

    def __init__(self, function: Callable[Concatenate[A, P], AsyncIterator[T]]) -> None:
        super().__init__(function)

    def _call(self, twin: Twin[A], *args: Any, **kwargs: Any) -> Iterator[T]:
        return _each(twin._portal, self._function(twin._twin, *args, **kwargs))

    def _returns(self, annotation: Any) -> Any:
        return GenericAlias(Iterator, get_args(annotation)[:1])


def _each(portal: Portal, items: AsyncIterator[T]) -> Iterator[T]:
    try:
        while True:
            try:
                yield portal.run(_next(items))
            except StopAsyncIteration:
                return
    finally:
        if isinstance(items, AsyncGenerator) and not portal.closed:
            portal.run(_close(items))


async def _next(items: AsyncIterator[T]) -> T:
    return await anext(items)


async def _close(items: AsyncGenerator[Any, Any]) -> None:
    await items.aclose()
