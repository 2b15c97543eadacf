"""Keyword arguments declared once, as a ``TypedDict``: a method takes them as ``**name: Unpack[TheDict]``
(type checkers and editors see each keyword, its type and whether it is required), and ``spelled_out`` shows
them to ``inspect.signature`` and ``help()`` as the keywords they stand for, each optional one defaulting to
None — what leaving it out means."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, NotRequired, Required, TypeVar, get_args, get_origin, get_type_hints

F = TypeVar("F", bound=Callable[..., Any])


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
