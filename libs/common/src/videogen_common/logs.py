"""Structured logs: one JSON object per line, with the context of the work it is about (account, generation,
delivery, request id): fields bound with ``log_context`` / ``bind_log_context`` for a request or a task, the
trace and span ids when traces are on, plus whatever the caller passes in ``extra`` (which wins)."""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Mapping
from contextvars import ContextVar, Token
from typing import Any

import orjson

from videogen_common.tracing import log_fields

_STANDARD = set(vars(logging.makeLogRecord({}))) | {"message", "asctime", "taskName"}
_CONTEXT: ContextVar[Mapping[str, Any] | None] = ContextVar("videogen_log_context", default=None)


def bind_log_context(**fields: Any) -> None:
    """Add fields (None ones are left out) to every line logged from now on in this context: call it at the
    top of a task that works on one thing (a task runs in its own copy of the context)."""
    _CONTEXT.set(_merged(fields))


class log_context:
    """Like ``bind_log_context``, for the lines logged inside the ``with`` block only (e.g. one request).

    A class rather than a generator-based context manager: the api enters two on every request."""

    __slots__ = ("_fields", "_token")

    def __init__(self, **fields: Any) -> None:
        self._fields = fields
        self._token: Token[Mapping[str, Any] | None] | None = None

    def __enter__(self) -> None:
        self._token = _CONTEXT.set(_merged(self._fields))

    def __exit__(self, *_: object) -> None:
        if self._token is not None:
            _CONTEXT.reset(self._token)
            self._token = None


def current_log_context() -> Mapping[str, Any]:
    return _CONTEXT.get() or {}


def _merged(fields: Mapping[str, Any]) -> Mapping[str, Any]:
    current = _CONTEXT.get()
    merged = dict(current) if current else {}
    for name, value in fields.items():
        if value is not None:
            merged[name] = value
    return merged


class JsonFormatter(logging.Formatter):
    def __init__(self, service: str) -> None:
        super().__init__()
        self.service = service

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "service": self.service,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        entry.update(current_log_context())
        entry.update(log_fields())
        entry.update({k: v for k, v in vars(record).items() if k not in _STANDARD})
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return orjson.dumps(entry, default=str).decode()


def configure_logging(service: str, level: str, fmt: str = "json") -> None:
    handler = logging.StreamHandler(sys.stderr)
    if fmt == "json":
        formatter: logging.Formatter = JsonFormatter(service)
        formatter.converter = time.gmtime
        handler.setFormatter(formatter)
    else:
        handler.setFormatter(logging.Formatter(f"%(asctime)s {service} %(levelname)s %(name)s %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for noisy in ("aiokafka", "faust", "mode", "pymongo"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level))
