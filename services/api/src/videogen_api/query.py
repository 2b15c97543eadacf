"""Query strings: each operation's is a pydantic model, read by one parser (``parse_query``), and documented
from the same model (``parameters``).

A model's fields are the query parameters, named by their alias (or their own name). The parser hands each
field the list of values given for it (``?status=a&status=b`` is ``["a", "b"]``), so a field's type decides
whether it may be repeated; a field marked ``Param(deep=True)`` takes ``NAME[KEY]=VALUE`` parameters, as a
dict of KEY to its values. Unknown parameters are ignored. Every bad parameter is reported at once, in one
422 whose ``errors`` hold one entry per parameter, in the model's field order; but a field marked
``Param(alone=True)`` (a listing's limit and cursor) is reported only when all else is well-formed, and alone.

A field's validators say what is wrong by raising ``refused(code, message)``; the entry's ``field`` is the
parameter's name (``NAME[KEY]`` for a deep one), or the ``field`` given to ``refused``. ``Param`` beside a
field's type says how the OpenAPI document shows it: its component's name, its schema, and its style."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from multidict import MultiMapping
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import PydanticCustomError

from videogen_api.problems import invalid

Doc = dict[str, Any]
Q = TypeVar("Q", bound=BaseModel)


@dataclass(frozen=True)
class Param:
    """How a query field appears in the OpenAPI document: as the parameter component ``component``."""

    component: str
    schema: Mapping[str, Any]
    # Repeated values (style form, explode) or NAME[KEY] (style deepObject).
    style: str | None = None
    deep: bool = False
    # Documented as required even though the model has a default (a signed link without it is a 404).
    required: bool = False
    # Refused only when every other parameter is well-formed, and then alone (the first such one): paging.
    alone: bool = False
    extra: Mapping[str, Any] = field(default_factory=dict)


def refused(code: str, message: str, *, field: str | None = None) -> PydanticCustomError:
    """What a field's validator raises to refuse a value: an entry ``{"field", "message", "code"}`` of the
    422."""
    context: dict[str, str] = {"message": message}
    if field is not None:
        context["field"] = field
    return PydanticCustomError(code, "{message}", context)


def param_of(info: FieldInfo) -> Param:
    found = [m for m in info.metadata if isinstance(m, Param)]
    if len(found) != 1:
        raise TypeError("every query field carries one Param")
    return found[0]


def _name(name: str, info: FieldInfo) -> str:
    return info.alias or name


def parse_query(model: type[Q], query: MultiMapping[str], **context: Any) -> Q:
    """``query`` as ``model``; a 422 naming every bad parameter. ``context`` reaches the validators
    (``ValidationInfo.context``)."""
    raw: Doc = {}
    for name, info in model.model_fields.items():
        key = _name(name, info)
        if param_of(info).deep:
            prefix = key + "["
            deep = {
                given[len(prefix) : -1]: query.getall(given)
                for given in dict.fromkeys(query.keys())
                if given.startswith(prefix) and given.endswith("]")
            }
            if deep:
                raw[key] = deep
        elif key in query:
            raw[key] = query.getall(key)
    try:
        return model.model_validate(raw, context=context)
    except ValidationError as exc:
        alone = {_name(name, info) for name, info in model.model_fields.items() if param_of(info).alone}
        entries = _entries(exc)
        others = [e for e in entries if e["field"] not in alone]
        raise invalid(others or entries[:1]) from None


def _entries(exc: ValidationError) -> list[dict[str, str]]:
    entries: dict[str, dict[str, str]] = {}
    for error in exc.errors():
        ctx = error.get("ctx") or {}
        loc = [str(part) for part in error["loc"]]
        name = ctx.get("field") or (f"{loc[0]}[{loc[1]}]" if len(loc) > 1 else loc[0] if loc else "query")
        # One entry per parameter: a deep parameter's key is judged before its value.
        entries.setdefault(
            name, {"field": name, "message": str(ctx.get("message", error["msg"])), "code": error["type"]}
        )
    return list(entries.values())


def parameters(model: type[BaseModel]) -> dict[str, Doc]:
    """The OpenAPI parameter objects of ``model``'s fields, by component name."""
    out: dict[str, Doc] = {}
    for name, info in model.model_fields.items():
        param = param_of(info)
        doc: Doc = {"name": _name(name, info), "in": "query"}
        if param.required or info.is_required():
            doc["required"] = True
        doc["description"] = info.description or ""
        if param.deep:
            doc |= {"style": "deepObject", "explode": True}
        elif param.style is not None:
            doc |= {"style": param.style, "explode": True}
        doc["schema"] = dict(param.schema)
        out[param.component] = doc | dict(param.extra)
    return out


# --- Kinds of field: each turns the list of values given into the field's value. -------------------------


def first(values: list[str]) -> str:
    """The first value given (any others are ignored)."""
    return values[0]


def once(values: list[str], code: str = "repeated") -> str:
    """A parameter given at most once."""
    if len(values) > 1:
        raise refused(code, "give it once")
    return values[0]
