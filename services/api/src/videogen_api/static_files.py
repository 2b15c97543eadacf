"""Static files the api serves from package data (the console, the API reference viewer): read once, when the
process starts, and answered from memory with a strong ETag and ``Cache-Control: no-cache`` (the browser
revalidates; a 304 costs no body)."""

from __future__ import annotations

import hashlib
from collections.abc import Collection
from dataclasses import dataclass
from importlib.resources.abc import Traversable

from aiohttp import web

TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
}


@dataclass(frozen=True)
class Asset:
    body: bytes
    content_type: str
    etag: str


def load(root: Traversable, only: Collection[str] | None = None) -> dict[str, Asset]:
    """Every servable file under ``root`` (or only those named in ``only``), by its path relative to it
    (``index.html``, ``js/app.js``…)."""
    assets: dict[str, Asset] = {}

    def walk(node: Traversable, prefix: str) -> None:
        for child in node.iterdir():
            name = f"{prefix}{child.name}"
            if child.is_dir():
                walk(child, f"{name}/")
                continue
            suffix = "." + child.name.rsplit(".", 1)[-1]
            if suffix not in TYPES or (only is not None and name not in only):
                continue
            body = child.read_bytes()
            assets[name] = Asset(body, TYPES[suffix], '"' + hashlib.sha256(body).hexdigest()[:32] + '"')

    walk(root, "")
    return assets


def send(request: web.Request, asset: Asset) -> web.Response:
    headers = {"ETag": asset.etag, "Cache-Control": "no-cache"}
    if asset.etag in request.headers.get("If-None-Match", ""):
        return web.Response(status=304, headers=headers)
    return web.Response(body=asset.body, headers={**headers, "Content-Type": asset.content_type})
