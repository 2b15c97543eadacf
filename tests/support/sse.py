"""Reading a Server-Sent Events stream in tests: each event's id, type and JSON data, comments skipped."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import aiohttp
import orjson


@dataclass(frozen=True)
class Event:
    id: str | None
    event: str | None
    data: dict[str, Any]


async def events(response: aiohttp.ClientResponse) -> AsyncIterator[Event]:
    """The events of ``response`` as they arrive, until the stream ends."""
    fields: dict[str, str] = {}
    async for raw in response.content:
        line = raw.decode().rstrip("\r\n")
        if not line:
            if "data" in fields:
                yield Event(fields.get("id"), fields.get("event"), orjson.loads(fields["data"]))
            fields = {}
        elif not line.startswith(":"):
            name, _, value = line.partition(":")
            fields[name] = value.removeprefix(" ")
