"""Arguments declared once. As a ``TypedDict``: a method takes them as ``**name: Unpack[TheDict]`` (type
checkers and editors see each keyword, its type and whether it is required), and ``spelled_out`` shows them
to ``inspect.signature`` and ``help()`` as the keywords they stand for, each optional one defaulting to None —
what leaving it out means. Or as another function's: ``init_like``, ``called_like``."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import (
    Any,
    Concatenate,
    NotRequired,
    ParamSpec,
    Required,
    TypeVar,
    get_args,
    get_origin,
    get_type_hints,
)

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")
P = ParamSpec("P")


def spelled_out(function: F) -> F:
    """``function``, whose signature spells out its ``**name: Unpack[TheDict]`` as keyword-only parameters,
    before its own keyword-only ones (the order the keywords were declared in)."""
    signature = inspect.signature(function, eval_str=True)
    *named, packed = signature.parameters.values()
    assert packed.kind is inspect.Parameter.VAR_KEYWORD, f"{function.__qualname__} takes no **keywords"
    [keywords] = get_args(packed.annotation)
    total = keywords.__total__
    spelled = []
    for name, hint in get_type_hints(keywords, include_extras=True).items():
        origin = get_origin(hint)
        required = origin is Required or (total and origin is not NotRequired)
        spelled.append(
            inspect.Parameter(
                name,
                inspect.Parameter.KEYWORD_ONLY,
                default=inspect.Parameter.empty if required else None,
                annotation=get_args(hint)[0] if origin in (Required, NotRequired) else hint,
            )
        )
    first = next((i for i, p in enumerate(named) if p.kind is inspect.Parameter.KEYWORD_ONLY), len(named))
    function.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[*named[:first], *spelled, *named[first:]]
    )
    return function


def init_like(
    model: Callable[Concatenate[Any, P], None],
) -> Callable[[Callable[..., None]], Callable[Concatenate[Any, P], None]]:
    """An ``__init__`` that takes what ``model`` (another class's ``__init__``) takes, to type checkers,
    editors and ``inspect.signature`` alike, and passes it on as ``**arguments``."""

    def declare(init: Callable[..., None]) -> Callable[Concatenate[Any, P], None]:
        init.__signature__ = inspect.signature(model, eval_str=True)  # type: ignore[attr-defined]
        return init

    return declare


def called_like(model: Callable[P, object]) -> Callable[[Callable[..., T]], Callable[P, T]]:
    """A function that takes what the function ``model`` takes (as ``init_like``), answering its own."""

    def declare(function: Callable[..., T]) -> Callable[P, T]:
        answers = inspect.signature(function, eval_str=True).return_annotation
        signature = inspect.signature(model, eval_str=True).replace(return_annotation=answers)
        function.__signature__ = signature  # type: ignore[attr-defined]
        return function

    return declare
