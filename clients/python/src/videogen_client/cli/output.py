"""What ``vg`` prints: aligned tables and ``key: value`` lines for people, JSON for scripts, and a live
progress line on a terminal (plain lines when the output is not one)."""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any, TextIO

from pydantic import BaseModel

from videogen_client.models import Generation

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def as_json(value: BaseModel | Sequence[BaseModel] | dict[str, Any]) -> str:
    if isinstance(value, BaseModel):
        return value.model_dump_json(indent=2)
    if isinstance(value, dict):
        return json.dumps(value, indent=2)
    return json.dumps([item.model_dump(mode="json") for item in value], indent=2)


def table(rows: Sequence[BaseModel], columns: Sequence[str]) -> str:
    return rows_table([row.model_dump(mode="json") for row in rows], columns)


def rows_table(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> str:
    cells = [[_cell(row.get(c)) for c in columns] for row in rows]
    widths = [max([len(c), *(len(r[i]) for r in cells)]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.upper().ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip()]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    return "\n".join(lines)


def fields(model: BaseModel) -> str:
    data = model.model_dump(mode="json")
    if isinstance(model, Generation):
        # Where it went and why, in a line each: the tries in order, and the route's reason.
        data["attempts"] = " -> ".join(_attempt(a) for a in data["attempts"]) or None
        data["route"] = data["route"]["reason"] if data["route"] else None
    width = max(len(k) for k in data)
    return "\n".join(f"{k.ljust(width)}  {_cell(v)}" for k, v in data.items())


def _attempt(attempt: dict[str, Any]) -> str:
    outcome = attempt["error_code"] or ("made" if attempt["ended_at"] else "under way")
    cost = f", ${attempt['cost']:g}" if attempt["cost"] is not None else ""
    return f"{attempt['provider']} ({outcome}{cost})"


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, list):
        return ",".join(_cell(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value)
    text = str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def waiting(generation: Generation) -> str:
    """Why a queued generation waits, and its place in line when known: `` (provider_capacity, 3rd in
    line)``; empty otherwise."""
    if generation.status != "queued" or generation.queue_reason is None:
        return ""
    place = f", #{generation.queue_position} in line" if generation.queue_position is not None else ""
    return f" ({generation.queue_reason}{place})"


class Progress:
    """A generation's progress as it goes: on a terminal one line redrawn in place (status, elapsed time, a
    spinner; bytes while downloading), otherwise a line per change. Callbacks may come from another thread."""

    def __init__(self, out: TextIO = sys.stderr) -> None:
        self._out = out
        self._live = out.isatty()
        self._lock = threading.Lock()
        self._started = time.monotonic()
        self._text = ""
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        if self._live:
            self._ticker = threading.Thread(target=self._tick, name="vg-progress", daemon=True)
            self._ticker.start()

    def generation(self, generation: Generation) -> None:
        text = f"{generation.id}  {generation.status}{waiting(generation)}"
        with self._lock:
            if text == self._text:
                return
            self._text = text
            if not self._live:
                print(text, file=self._out, flush=True)
        self._draw()

    def download(self, done: int, total: int | None) -> None:
        share = f" {done * 100 // total}%" if total else ""
        with self._lock:
            self._text = f"downloading {done:,} bytes{share}"
        if self._live:
            self._draw()

    def finish(self, line: str) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
        with self._lock:
            prefix = "\r\033[K" if self._live else ""
            print(prefix + line, file=self._out, flush=True)

    def _tick(self) -> None:
        while not self._stop.wait(0.1):
            self._draw()

    def _draw(self) -> None:
        if not self._live or self._stop.is_set():
            return
        with self._lock:
            elapsed = time.monotonic() - self._started
            frame = SPINNER[int(elapsed * 10) % len(SPINNER)]
            self._out.write(f"\r\033[K{frame} {self._text}  {elapsed:4.1f}s")
            self._out.flush()
